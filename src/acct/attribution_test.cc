#include "acct/attribution.h"

#include <cmath>
#include <cstdio>

#include "acct/synthetic.h"
#include "gtest/gtest.h"

namespace gpuplane::acct {
namespace {

PidResolver FromTruth(const Synthetic& s) {
  return [&s](int64_t pid) -> std::optional<ProcessOwner> {
    for (const SyntheticTruth& t : s.truth) {
      if (t.pid == pid) return ProcessOwner{t.who, "/kubepods/pod-" + t.who.pod};
    }
    return std::nullopt;
  };
}

TEST(SplitExactlyTest, ConservesAndIsProportional) {
  EXPECT_EQ(SplitExactly(100, {1, 1, 1}), (std::vector<int64_t>{34, 33, 33}));
  EXPECT_EQ(SplitExactly(10, {0, 3, 1}), (std::vector<int64_t>{0, 8, 2}));  // 7.5 -> 8, 2.5 -> 2
  EXPECT_EQ(SplitExactly(5, {0, 0}), (std::vector<int64_t>{0, 0}));
  std::vector<int64_t> parts = SplitExactly(1'000'000'007, {0.1, 0.2, 0.3, 0.4});
  int64_t sum = 0;
  for (int64_t p : parts) sum += p;
  EXPECT_EQ(sum, 1'000'000'007);
}

// Attributes one synthetic recording and checks it against its ground truth: per-pod compute
// and memory within 1% of the device totals, exact cost conservation. Tracks the worst compute
// error of our method and of the device-level method (every sharing pod charged the device's
// busy time).
void CheckAgainstTruth(const SyntheticSpec& spec, double& worst, double& worst_device_level) {
  Prices prices;
  prices.per_gpu_hour["NVIDIA H100 80GB HBM3"] = 2.49;
  Synthetic syn = MakeSynthetic(spec);
  Attribution a = Attribute(syn.recording, FromTruth(syn), syn.ownership, prices);
  ASSERT_EQ(a.devices.size(), 1u);
  ASSERT_EQ(a.pods.size(), static_cast<size_t>(spec.pods));
  EXPECT_TRUE(a.audit.empty());
  double total_sm = 0, total_mem = 0;
  for (const SyntheticTruth& t : syn.truth)
    total_sm += t.sm_seconds, total_mem += t.memory_byte_seconds;
  ASSERT_GT(total_sm, 0);
  int64_t cost = 0;
  for (size_t i = 0; i < a.pods.size(); ++i) {
    const SyntheticTruth& t = syn.truth[i];
    ASSERT_EQ(a.pods[i].who, t.who);
    double sm_error = std::abs(a.pods[i].sm_seconds - t.sm_seconds) / total_sm;
    double mem_error = std::abs(a.pods[i].memory_byte_seconds - t.memory_byte_seconds) / total_mem;
    EXPECT_LT(sm_error, 0.01);
    EXPECT_LT(mem_error, 0.01);
    worst = std::max(worst, sm_error);
    worst_device_level =
        std::max(worst_device_level, std::abs(a.devices[0].busy_seconds - t.sm_seconds) / total_sm);
    cost += a.pods[i].cost_nano;
  }
  EXPECT_EQ(cost + a.devices[0].idle_cost_nano, a.devices[0].cost_nano);
  EXPECT_EQ(a.devices[0].cost_nano, std::llround(2.49 * spec.seconds / 3600 * 1e9));
  EXPECT_TRUE(a.devices[0].shared);
}

// Issue 6's accuracy criterion: 2-8 co-located pods per GPU under time-slicing and MPS;
// per-pod compute and memory within 1% of the ground truth (relative to the device total),
// costs conserve exactly; compared with charging every sharing pod the device's utilization.
TEST(AttributionTest, SharedGpusMatchTheGroundTruth) {
  double worst = 0, worst_device_level = 0;
  for (Sharing sharing : {Sharing::kTimeSlicing, Sharing::kMps}) {
    for (int pods : {2, 3, 5, 8}) {
      for (uint64_t seed : {1, 2, 3}) {
        SCOPED_TRACE(testing::Message() << "sharing " << static_cast<int>(sharing) << " pods "
                                        << pods << " seed " << seed);
        CheckAgainstTruth(SyntheticSpec{sharing, pods, 600, seed}, worst, worst_device_level);
      }
    }
  }
  std::printf(
      "  per-pod compute error, worst case: %.3f%% of the device total (device-level "
      "method: %.1f%%)\n",
      worst * 100, worst_device_level * 100);
}

// The same with pods following real per-pod duty-cycle and memory series (the GenAI trace).
TEST(AttributionTest, SharedGpusFollowingRealSeries) {
  std::string dir = GPUPLANE_SOURCE_DIR "/../shared/data/genai";
  absl::StatusOr<std::vector<UsageProfile>> profiles = LoadGenaiProfiles(dir);
  if (!profiles.ok() && absl::IsNotFound(profiles.status())) {
    GTEST_SKIP() << "GenAI per-pod series not available (" << profiles.status().message()
                 << "); the built-in generator's case above still runs";
  }
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  EXPECT_GT(profiles->size(), 50u);
  double worst = 0, worst_device_level = 0;
  for (Sharing sharing : {Sharing::kTimeSlicing, Sharing::kMps}) {
    for (int pods : {2, 4, 8}) {
      for (uint64_t seed : {1, 2, 3, 4}) {
        SCOPED_TRACE(testing::Message() << "sharing " << static_cast<int>(sharing) << " pods "
                                        << pods << " seed " << seed);
        SyntheticSpec spec{sharing, pods, 900, seed};
        spec.profiles = &*profiles;
        CheckAgainstTruth(spec, worst, worst_device_level);
      }
    }
  }
  std::printf(
      "  GenAI series, %zu profiles: per-pod compute error, worst case: %.3f%% of the device "
      "total (device-level method: %.1f%%)\n",
      profiles->size(), worst * 100, worst_device_level * 100);
}

TEST(AttributionTest, MigInstancesGoToTheirOwners) {
  Prices prices;
  prices.default_price = 3.0;
  Synthetic syn = MakeSynthetic(SyntheticSpec{Sharing::kMig, 4, 300, 9});
  Attribution a = Attribute(syn.recording, FromTruth(syn), syn.ownership, prices);
  ASSERT_EQ(a.pods.size(), 4u);
  int64_t cost = 0;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.pods[i].mig_instance, syn.truth[i].device);
    EXPECT_NEAR(a.pods[i].memory_byte_seconds, syn.truth[i].memory_byte_seconds,
                syn.truth[i].memory_byte_seconds * 1e-9);
    cost += a.pods[i].cost_nano;
  }
  // Four 10 GiB instances of an 80 GiB GPU: each pays an eighth, the rest is idle.
  EXPECT_EQ(a.pods[0].cost_nano, a.devices[0].cost_nano / 8);
  EXPECT_EQ(cost + a.devices[0].idle_cost_nano, a.devices[0].cost_nano);
}

TEST(AttributionTest, CostsConserveOnDegenerateInput) {
  Recording r;
  r.first_t = 0;
  r.last_t = 60;
  r.devices.push_back(DeviceSample{0, "GPU-m", 0, "M", 0, 0, 0, true});  // MIG, no memory size
  r.devices.push_back(DeviceSample{60, "GPU-m", 0, "M", 0, 0, 0, true});
  r.migs.push_back(MigSample{0, "GPU-m", "MIG-1", 1, "1g.10gb", 0, 0});
  Ownership own;
  own.owners["MIG-1"] = {ContainerRef{"ns", "p", "c"}};
  Prices prices;
  prices.default_price = 1.0;
  Attribution a = Attribute(
      r, [](int64_t) { return std::nullopt; }, own, prices);
  ASSERT_EQ(a.devices.size(), 1u);
  int64_t charged = 0;
  for (const PodUsage& p : a.pods) charged += p.cost_nano;
  EXPECT_EQ(charged + a.devices[0].idle_cost_nano, a.devices[0].cost_nano);
  EXPECT_GT(a.devices[0].cost_nano, 0);
}

TEST(AttributionTest, ExclusiveGpuAndAudit) {
  Recording r;
  r.first_t = 0;
  r.last_t = 100;
  for (int t = 0; t <= 100; t += 10) {
    r.devices.push_back(DeviceSample{double(t), "GPU-a", 0, "M", 100, 40, 50, false});
    r.processes.push_back(ProcessSample{double(t), "GPU-a", 7, 40, std::nullopt});
    r.processes.push_back(ProcessSample{double(t), "GPU-a", 8, 1, std::nullopt});  // escapee
    r.processes.push_back(ProcessSample{double(t), "GPU-a", 9, 1, std::nullopt});  // no pod
  }
  ContainerRef owner{"ns", "trainer", "main"}, other{"ns", "notebook", "nb"};
  Ownership own;
  own.owners["GPU-a"] = {owner};
  own.owners["GPU-b"] = {other};
  PidResolver resolve = [&](int64_t pid) -> std::optional<ProcessOwner> {
    if (pid == 7) return ProcessOwner{owner, "/kubepods/podA/c1"};
    if (pid == 8) return ProcessOwner{other, "/kubepods/podB/c2"};
    return std::nullopt;
  };
  Prices prices;
  prices.default_price = 3.6;  // a dollar-hour each 1,000 s: 0.1 dollar over 100 s
  Attribution a = Attribute(r, resolve, own, prices);
  ASSERT_EQ(a.pods.size(), 1u);
  EXPECT_EQ(a.pods[0].who, owner);
  EXPECT_DOUBLE_EQ(a.pods[0].sm_seconds, 50);  // all busy time: 50% of 100 s
  EXPECT_EQ(a.pods[0].cost_nano, 100'000'000);
  EXPECT_EQ(a.pods[0].max_memory_bytes, 40);
  ASSERT_EQ(a.audit.size(), 2u);
  EXPECT_EQ(a.audit[0].pid, 8);
  EXPECT_EQ(a.audit[0].reason, "the container was not allocated this device");
  EXPECT_EQ(a.audit[0].allocated, std::vector<std::string>{"GPU-b"});
  EXPECT_EQ(a.audit[0].cgroup, "/kubepods/podB/c2");
  EXPECT_EQ(a.audit[1].pid, 9);
  EXPECT_EQ(a.audit[1].reason, "the process belongs to no pod");
}

// A process escaping into a GPU its pod was not allocated (NVIDIA_VISIBLE_DEVICES): the owner
// still pays for its exclusive device, but the escapee's compute and memory are its own,
// reported in the audit record and as unallocated use, and not counted as the owner's.
TEST(AttributionTest, RogueUseIsReportedAndNotTheOwners) {
  Recording r;
  r.first_t = 0;
  r.last_t = 100;
  for (int t = 0; t <= 100; t += 10) {
    r.devices.push_back(DeviceSample{double(t), "GPU-a", 0, "M", 100, 40, 50, false});
    r.processes.push_back(ProcessSample{double(t), "GPU-a", 7, 30, std::nullopt});
    r.processes.push_back(ProcessSample{double(t), "GPU-a", 8, 10, std::nullopt});  // escapee
    if (t > 0) {
      r.process_utils.push_back(
          ProcessUtilSample{double(t), "GPU-a", 7, int64_t{t} * 1000000, 30, 0});
      r.process_utils.push_back(
          ProcessUtilSample{double(t), "GPU-a", 8, int64_t{t} * 1000000, 20, 0});
    }
  }
  ContainerRef owner{"ns", "trainer", "main"}, other{"ns", "notebook", "nb"};
  Ownership own;
  own.owners["GPU-a"] = {owner};
  own.owners["GPU-b"] = {other};
  PidResolver resolve = [&](int64_t pid) -> std::optional<ProcessOwner> {
    if (pid == 7) return ProcessOwner{owner, "/kubepods/podA/c1"};
    return ProcessOwner{other, "/kubepods/podB/c2"};
  };
  Prices prices;
  prices.default_price = 3.6;
  Attribution a = Attribute(r, resolve, own, prices);
  ASSERT_EQ(a.pods.size(), 1u);
  EXPECT_EQ(a.pods[0].who, owner);
  EXPECT_DOUBLE_EQ(a.pods[0].sm_seconds, 30);             // 50 s busy, 20 s of them the escapee's
  EXPECT_DOUBLE_EQ(a.pods[0].memory_byte_seconds, 3000);  // 40 x 100 less the escapee's 10 x 100
  EXPECT_EQ(a.pods[0].cost_nano, 100'000'000);            // the whole device, as before
  ASSERT_EQ(a.audit.size(), 1u);
  EXPECT_EQ(a.audit[0].pid, 8);
  EXPECT_DOUBLE_EQ(a.audit[0].sm_seconds, 20);
  EXPECT_DOUBLE_EQ(a.audit[0].memory_byte_seconds, 1000);
  EXPECT_EQ(a.audit[0].max_memory_bytes, 10);
  ASSERT_EQ(a.unallocated.size(), 1u);
  EXPECT_EQ(a.unallocated[0].who, other);
  EXPECT_EQ(a.unallocated[0].device, "GPU-a");
  EXPECT_DOUBLE_EQ(a.unallocated[0].sm_seconds, 20);
  EXPECT_DOUBLE_EQ(a.devices[0].unattributed_sm_seconds, 20);  // busy time no allocated pod used
}

TEST(RecordingTest, RoundTripAndBadLines) {
  Synthetic syn = MakeSynthetic(SyntheticSpec{Sharing::kTimeSlicing, 2, 5, 4});
  std::string text;
  for (const DeviceSample& s : syn.recording.devices) text += ToJsonLine(s) + "\n";
  for (const ProcessSample& s : syn.recording.processes) text += ToJsonLine(s) + "\n";
  for (const ProcessUtilSample& s : syn.recording.process_utils) text += ToJsonLine(s) + "\n";
  text += "not json\n{\"t\":1,\"type\":\"device\"}\n{\"t\":1,\"type\":\"gpu\"}\n";
  text +=
      "{\"t\":1,\"type\":\"process_util\",\"uuid\":\"u\",\"pid\":1,\"ts_us\":5,\"sm\":101,\"mem\":"
      "0}\n";
  Recording r = ParseRecording(text, "rec.jsonl");
  EXPECT_EQ(r.devices.size(), syn.recording.devices.size());
  EXPECT_EQ(r.processes.size(), syn.recording.processes.size());
  EXPECT_EQ(r.process_utils.size(), syn.recording.process_utils.size());
  ASSERT_EQ(r.problems.size(), 4u);
  size_t first_bad = syn.recording.devices.size() + syn.recording.processes.size() +
                     syn.recording.process_utils.size() + 1;
  EXPECT_EQ(r.problems[0],
            "rec.jsonl:" + std::to_string(first_bad) + ": line skipped: not a JSON object");
  EXPECT_NE(r.problems[1].find("\"uuid\" must be a non-empty string"), std::string::npos);
  EXPECT_NE(r.problems[2].find("unknown type \"gpu\""), std::string::npos);
  EXPECT_NE(r.problems[3].find("\"sm\" is 101, outside 0..100"), std::string::npos);
  EXPECT_EQ(r.process_utils[0].ts_us, syn.recording.process_utils[0].ts_us);
}

}  // namespace
}  // namespace gpuplane::acct
