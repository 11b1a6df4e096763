#include "acct/accountant.h"

#include "acct/samplers.h"
#include "acct/synthetic.h"
#include "gtest/gtest.h"

namespace gpuplane::acct {
namespace {

PidResolver TruthResolver(const Synthetic& s) {
  std::map<int64_t, ContainerRef> by_pid;
  for (const SyntheticTruth& t : s.truth) by_pid[t.pid] = t.who;
  return [by_pid](int64_t pid) -> std::optional<ProcessOwner> {
    auto it = by_pid.find(pid);
    if (it == by_pid.end()) return std::nullopt;
    return ProcessOwner{it->second, "test", false};
  };
}

// Summing the agent's windows gives what attributing the whole recording at once gives.
TEST(AccountantTest, WindowsSumToTheWholeRecording) {
  for (Sharing sharing : {Sharing::kTimeSlicing, Sharing::kMps, Sharing::kMig}) {
    Synthetic syn = MakeSynthetic(SyntheticSpec{sharing, 3, 120, 5, 2, 2});
    Prices prices;
    prices.default_price = 3.6;  // one micro-dollar per millisecond
    Attribution whole = Attribute(syn.recording, TruthResolver(syn), syn.ownership, prices);

    Accountant acc(TruthResolver(syn), prices);
    acc.SetOwnership(syn.ownership);
    ReplaySource source(syn.recording);
    EXPECT_EQ(source.passes(), 121u);
    Recording pass;
    ErrorCounts errors;
    int windows = 0;
    int64_t window_cost = 0;
    while (source.Next(0, pass, errors)) {
      std::optional<Attribution> w = acc.Add(pass);
      if (!w) continue;
      ++windows;
      int64_t pods = 0, devices = 0;
      for (const PodUsage& p : w->pods) pods += p.cost_nano;
      for (const DeviceUsage& d : w->devices) devices += d.cost_nano - d.idle_cost_nano;
      EXPECT_EQ(pods, devices) << "costs conserve in every window";
      for (const DeviceUsage& d : w->devices) window_cost += d.cost_nano;
    }
    EXPECT_EQ(windows, 120);
    Attribution totals = acc.Totals();
    ASSERT_EQ(totals.pods.size(), whole.pods.size());
    for (size_t i = 0; i < whole.pods.size(); ++i) {
      EXPECT_EQ(totals.pods[i].who, whole.pods[i].who);
      EXPECT_NEAR(totals.pods[i].sm_seconds, whole.pods[i].sm_seconds, 1e-6);
      EXPECT_NEAR(totals.pods[i].memory_byte_seconds, whole.pods[i].memory_byte_seconds,
                  whole.pods[i].memory_byte_seconds * 1e-12);
      EXPECT_EQ(totals.pods[i].max_memory_bytes, whole.pods[i].max_memory_bytes);
      // Costs split per window: under MIG (split by instance memory) only nano-dollar rounding
      // differs. Under sharing, a window where the processes' SM samples add up to more than
      // the window (MPS overlap, or whole-percent rounding under time-slicing) is split by
      // compute alone, so the sum of windows is the finer split and differs from the whole
      // recording's; time-slicing stays within 0.05% of the device cost.
      if (sharing == Sharing::kMig) {
        EXPECT_NEAR(totals.pods[i].cost_nano, whole.pods[i].cost_nano, 2 * windows);
      } else if (sharing == Sharing::kTimeSlicing) {
        EXPECT_NEAR(totals.pods[i].cost_nano, whole.pods[i].cost_nano,
                    5e-4 * static_cast<double>(whole.devices.at(0).cost_nano));
      }
    }
    ASSERT_EQ(totals.devices.size(), whole.devices.size());
    for (size_t i = 0; i < whole.devices.size(); ++i) {
      EXPECT_NEAR(totals.devices[i].busy_seconds, whole.devices[i].busy_seconds, 1e-6);
      EXPECT_NEAR(totals.devices[i].cost_nano, whole.devices[i].cost_nano, windows);
    }
    EXPECT_GT(window_cost, 0);
  }
}

TEST(AccountantTest, TimeGoingBackwardsStartsANewWindow) {
  Accountant acc([](int64_t) { return std::nullopt; }, Prices{});
  Recording a;
  a.devices.push_back(DeviceSample{10, "GPU-1", 0, "m", 100, 10, 50, false});
  a.first_t = a.last_t = 10;
  EXPECT_FALSE(acc.Add(a));
  Recording b = a;
  b.devices[0].t = b.first_t = b.last_t = 11;
  ASSERT_TRUE(acc.Add(b));
  Recording back = a;
  back.devices[0].t = back.first_t = back.last_t = 5;
  EXPECT_FALSE(acc.Add(back)) << "a clock step backwards opens a new window";
  EXPECT_NEAR(acc.Totals().devices.at(0).busy_seconds, 0.5, 1e-12);
}

TEST(AccountantTest, FindingsAreReportedOnce) {
  Accountant acc([](int64_t) { return std::nullopt; }, Prices{});
  std::vector<AuditFinding> found;
  for (int t = 0; t < 5; ++t) {
    Recording r;
    r.devices.push_back(DeviceSample{double(t), "GPU-1", 0, "m", 100, 10, 50, false});
    r.processes.push_back(ProcessSample{double(t), "GPU-1", 77, 5, std::nullopt});
    r.first_t = r.last_t = t;
    acc.Add(r, &found);
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pid, 77);
  EXPECT_EQ(acc.Totals().audit.size(), 1u);
}

}  // namespace
}  // namespace gpuplane::acct
