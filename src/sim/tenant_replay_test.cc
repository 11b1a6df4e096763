// The tenant replay's reasons for pending jobs on random busy workloads (checked by a
// what-if), jobs larger than the cluster, and the policies' names. The worked examples, with
// every figure worked out by hand, are scenario files (tenant_scenario_test.cc).
#include "sim/tenant_replay.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "gtest/gtest.h"

namespace gpuplane::sim {
namespace {

TenantWorkload Two(std::vector<TenantJob> jobs, std::vector<int> guarantees = {8, 8}) {
  TenantWorkload w;
  w.tenants = {"a", "b"};
  w.guarantee_gpus = std::move(guarantees);
  w.jobs = std::move(jobs);
  return w;
}

// Checkpoints every 1,800 s, a 60 s restore.
TenantRunOptions Options(int nodes) {
  TenantRunOptions o;
  o.nodes = nodes;
  o.checkpoint_interval = 1800;
  o.restore_seconds = 60;
  return o;
}

TenantSummary Replay(const TenantWorkload& w, const std::string& policy, int nodes) {
  absl::StatusOr<TenantPolicy> p = TenantPolicyNamed(policy);
  EXPECT_TRUE(p.ok());
  return RunTenantReplay(w, *p, Options(nodes), 1);
}

// A day of random work from three tenants on 16 nodes, more than fits.
TenantWorkload Busy(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1 / 120.0), run(1 / 7200.0);
  std::discrete_distribution<int> size({40, 10, 10, 15, 5, 3});
  const int sizes[] = {1, 2, 4, 8, 16, 32};
  TenantWorkload w;
  w.tenants = {"a", "b", "c"};
  w.guarantee_gpus = {64, 40, 24};
  double t = 0;
  for (int i = 0; i < 700; ++i) {
    t += gap(rng);
    w.jobs.push_back({t, run(rng), sizes[size(rng)], static_cast<int>(rng() % 3), rng() % 5 == 0});
  }
  return w;
}

TEST(TenantReplay, EveryExplainedPendingJobFitsWithoutItsBlockers) {
  TenantWorkload w = Busy(7);
  for (const std::string& policy : TenantPolicyNames()) {
    SCOPED_TRACE(policy);
    TenantRunOptions o;
    o.nodes = 16;
    o.reason_samples = 200;
    TenantSummary s = RunTenantReplay(w, *TenantPolicyNamed(policy), o, 1);
    ASSERT_EQ(s.samples.size(), 200u);
    int fits = 0;
    for (const PendingSample& p : s.samples) {
      EXPECT_FALSE(p.reason.text.empty());
      fits += p.fits_without_blockers ? 1 : 0;
    }
    EXPECT_GE(fits, 190) << "of 200";
    std::printf("%s: %d of 200 explained pending jobs fit without their blockers\n", policy.c_str(),
                fits);
  }
}

TEST(TenantReplay, AJobLargerThanTheClusterNeverStartsAndTheReplayEnds) {
  TenantWorkload w = Two({{0, 100, 16, 0, false}, {5, 100, 8, 1, false}});
  for (const std::string& policy : TenantPolicyNames()) {
    SCOPED_TRACE(policy);
    TenantSummary s = Replay(w, policy, 1);
    EXPECT_EQ(s.finished, 1);
    EXPECT_DOUBLE_EQ(s.end_s, 105);
  }
}

// One 8-GPU node; tenant a's low-priority job runs from 0 (checkpoints every 1,800 s, restore
// 60 s) and its high-priority one comes at 1,790 s.
TenantSummary WithGrace(double duration, double grace) {
  TenantWorkload w = Two({{0, duration, 8, 0, false}, {1790, 100, 8, 0, true}});
  TenantRunOptions o = Options(1);
  o.preemption_grace = grace;
  return RunTenantReplay(w, *TenantPolicyNamed("gpuplane"), o, 1);
}

TEST(TenantReplay, AGracePeriodLetsADueCheckpointLand) {
  // At once: everything since 0 is lost, 8 x (1,790 + 60) GPU-s; the victim restarts from 0
  // when the preemptor ends (1,890) and needs 10,000 + 60 more.
  TenantSummary now = WithGrace(10'000, 0);
  EXPECT_EQ(now.preemptions, 1);
  EXPECT_NEAR(now.lost_gpu_hours, 8 * 1850 / 3600.0, 1e-9);
  EXPECT_DOUBLE_EQ(now.queue_delay_p95_high_s, 0);
  EXPECT_DOUBLE_EQ(now.end_s, 1890 + 10'060);
  // 30 s of grace: the checkpoint at 1,800 lands; it stops at 1,820 having lost 20 s, and the
  // preemptor starts then (30 s of waiting), ending at 1,920.
  TenantSummary grace = WithGrace(10'000, 30);
  EXPECT_EQ(grace.preemptions, 1);
  EXPECT_NEAR(grace.lost_gpu_hours, 8 * 80 / 3600.0, 1e-9);
  EXPECT_DOUBLE_EQ(grace.queue_delay_p95_high_s, 30);
  EXPECT_DOUBLE_EQ(grace.end_s, 1920 + 10'000 - 1800 + 60);
}

TEST(TenantReplay, AVictimThatEndsWithinItsGraceFinishes) {
  TenantSummary s = WithGrace(1800, 30);
  EXPECT_EQ(s.preemptions, 0);
  EXPECT_DOUBLE_EQ(s.lost_gpu_hours, 0);
  EXPECT_EQ(s.finished, 2);
  EXPECT_DOUBLE_EQ(s.end_s, 1920);
}

// A job of 10,000 s on one node that saves on the termination signal in `save` seconds, and
// a non-preemptible job of the same tenant at 1,700 s; 30 s of grace.
TenantSummary SavingOnSignal(double save) {
  TenantJob victim{0, 10'000, 8, 0, false};
  victim.saves_on_signal = true;
  TenantWorkload w = Two({victim, {1700, 100, 8, 0, true}});
  TenantRunOptions o = Options(1);
  o.preemption_grace = 30;
  o.signal_save_seconds = save;
  return RunTenantReplay(w, *TenantPolicyNamed("gpuplane"), o, 1);
}

TEST(TenantReplay, AJobThatSavesOnTheSignalWithinItsGraceKeepsItsWork) {
  // It saves in 20 s of its 30 and exits: it keeps the 1,700 s it ran and loses the restore
  // only; the preemptor waits 20 s and runs 1,720-1,820, and the victim needs 8,300 + 60 more.
  TenantSummary saved = SavingOnSignal(20);
  EXPECT_EQ(saved.preemptions, 1);
  EXPECT_NEAR(saved.lost_gpu_hours, 8 * 60 / 3600.0, 1e-9);
  EXPECT_DOUBLE_EQ(saved.queue_delay_p95_high_s, 20);
  EXPECT_DOUBLE_EQ(saved.end_s, 1820 + 8360);
  // It needs 40 s: killed at 30 before it has saved, it loses all since its start (no
  // interval checkpoint by 1,730).
  TenantSummary killed = SavingOnSignal(40);
  EXPECT_NEAR(killed.lost_gpu_hours, 8 * 1790 / 3600.0, 1e-9);
  EXPECT_DOUBLE_EQ(killed.queue_delay_p95_high_s, 30);
  EXPECT_DOUBLE_EQ(killed.end_s, 1830 + 10'060);
}

TEST(TenantReplay, LostWorkChoosesTheJobThatSavesOnTheSignal) {
  // Two 8-GPU jobs of tenant 0 on two nodes: the first checkpointed at 1,800 (100 s ago at
  // 1,900: 8 x 160 GPU-s to lose); the second started at 200 and has not checkpointed since
  // (8 x 1,760), but saves on the signal (8 x 60). A non-preemptible job at 1,900 takes the
  // second.
  TenantJob saver{200, 10'000, 8, 0, false};
  saver.saves_on_signal = true;
  TenantWorkload w = Two({{0, 10'000, 8, 0, false}, saver, {1900, 100, 8, 0, true}});
  TenantRunOptions o = Options(2);
  o.signal_save_seconds = 0;
  TenantSummary s = RunTenantReplay(w, *TenantPolicyNamed("gpuplane"), o, 1);
  ASSERT_EQ(s.evictions, std::vector<int>{1});
  EXPECT_NEAR(s.lost_gpu_hours, 8 * 60 / 3600.0, 1e-9);
}

TEST(TenantReplay, SignalSaversAreDrawnByTheJobNotItsPlace) {
  TenantWorkload w = Busy(7);
  DrawSignalSavers(w, 0.5, 42);
  const auto savers = std::count_if(w.jobs.begin(), w.jobs.end(),
                                    [](const TenantJob& j) { return j.saves_on_signal; });
  EXPECT_GT(savers, 300);
  EXPECT_LT(savers, 400);
  // The same job draws the same without the jobs before it.
  TenantWorkload tail = w;
  tail.jobs.erase(tail.jobs.begin(), tail.jobs.begin() + 100);
  DrawSignalSavers(tail, 0.5, 42);
  for (size_t i = 0; i < tail.jobs.size(); ++i) {
    EXPECT_EQ(tail.jobs[i].saves_on_signal, w.jobs[i + 100].saves_on_signal);
  }
  DrawSignalSavers(w, 0, 42);
  EXPECT_TRUE(std::none_of(w.jobs.begin(), w.jobs.end(),
                           [](const TenantJob& j) { return j.saves_on_signal; }));
}

TEST(TenantReplay, PolicyNames) {
  EXPECT_EQ(TenantPolicyNames().size(), 6u);
  EXPECT_EQ(TenantPolicyNamed("slurm").status().message(),
            "unknown multi-tenant policy \"slurm\"; known: kube, kai, volcano, kueue, yunikorn, "
            "gpuplane");
  EXPECT_EQ(TenantPolicyNamed("kueu").status().message(),
            "unknown multi-tenant policy \"kueu\"; known: kube, kai, volcano, kueue, yunikorn, "
            "gpuplane; did you mean \"kueue\"?");
}

}  // namespace
}  // namespace gpuplane::sim
