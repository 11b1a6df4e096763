// The tenant replay on hand-made workloads where every figure can be worked out: lost work
// from the checkpoint interval, a gang held pod by pod until its timeout, a gang broken by
// pod-level victims, reclaim by fair share, and the policies' names.
#include "sim/tenant_replay.h"

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

TenantSummary Replay(const TenantWorkload& w, const std::string& policy, int nodes) {
  absl::StatusOr<TenantPolicy> p = TenantPolicyNamed(policy);
  EXPECT_TRUE(p.ok());
  TenantRunOptions o;
  o.nodes = nodes;
  o.checkpoint_interval = 1800;
  o.restore_seconds = 60;
  return RunTenantReplay(w, *p, o, 1);
}

TEST(TenantReplay, NonPreemptibleWorkPreemptsAndTheVictimLosesOnlyWorkSinceItsCheckpoint) {
  // One node. Tenant a's preemptible 8-GPU job runs from 0 for 10,000 s; a's non-preemptible
  // 8-GPU job arrives at 4,000 s. Checkpoints at 1,800 and 3,600: 400 s lost + 60 s restore.
  TenantWorkload w = Two({{0, 10000, 8, 0, false}, {4000, 1000, 8, 0, true}});
  for (const char* policy : {"kube", "kai", "gpuplane"}) {
    SCOPED_TRACE(policy);
    TenantSummary s = Replay(w, policy, 1);
    EXPECT_EQ(s.preemptions, 1);
    EXPECT_NEAR(s.lost_gpu_hours, 8 * 460 / 3600.0, 1e-9);
    EXPECT_EQ(s.finished, 2);
    EXPECT_DOUBLE_EQ(s.queue_delay_p95_high_s, 0);
    // The victim restarts at 5,000 s with 10,000 - 3,600 + 60 s to go: done at 11,460 s.
    EXPECT_DOUBLE_EQ(s.end_s, 11460);
  }
}

TEST(TenantReplay, PodByPodGangsHoldGpusUntilTheirTimeout) {
  // Two nodes; a 4-GPU job holds half of node 0 until 2,000 s. A 16-GPU gang (two 8-GPU pods)
  // arrives at 10 s: kube places one member on node 1 and holds it; each 300 s timeout
  // releases it and the next cycle places it again, so 8 GPUs are held from 10 s until the
  // gang completes at 2,000 s. An atomic policy holds nothing.
  TenantWorkload w = Two({{0, 2000, 4, 0, false}, {10, 100, 16, 1, false}});
  TenantSummary kube = Replay(w, "kube", 2);
  TenantSummary gpuplane = Replay(w, "gpuplane", 2);
  EXPECT_DOUBLE_EQ(kube.incomplete_gang_gpu_seconds, 8 * 1990);
  EXPECT_EQ(gpuplane.incomplete_gang_gpu_seconds, 0);
  EXPECT_EQ(kube.finished, 2);
  EXPECT_EQ(gpuplane.finished, 2);
  EXPECT_DOUBLE_EQ(gpuplane.end_s, 2100);  // the gang starts when the 4-GPU job ends
}

TEST(TenantReplay, PodLevelVictimsBreakGangsWholeJobVictimsDoNot) {
  // Two nodes filled by tenant b's preemptible 16-GPU gang; tenant a's non-preemptible job
  // needs 8 GPUs. kube and volcano evict one member (the gang dies: a partial eviction);
  // gpuplane evicts the gang as a whole.
  TenantWorkload w = Two({{0, 5000, 16, 1, false}, {100, 100, 8, 1, true}}, {0, 16});
  EXPECT_EQ(Replay(w, "kube", 2).partial_gang_evictions, 1);
  EXPECT_EQ(Replay(w, "volcano", 2).partial_gang_evictions, 1);
  TenantSummary g = Replay(w, "gpuplane", 2);
  EXPECT_EQ(g.partial_gang_evictions, 0);
  EXPECT_EQ(g.preemptions, 1);
}

TEST(TenantReplay, ReclaimGivesTheUnderServedTenantItsShareWithoutCycles) {
  // Two nodes, guarantees 8 each. Tenant b borrows both nodes; tenant a then asks for one
  // node: the fair-share policies reclaim it, kube (no quotas) lets a wait.
  TenantWorkload w = Two({{0, 9000, 8, 1, false}, {0, 9000, 8, 1, false}, {100, 100, 8, 0, false}});
  for (const char* policy : {"kai", "volcano", "gpuplane"}) {
    SCOPED_TRACE(policy);
    TenantSummary s = Replay(w, policy, 2);
    EXPECT_EQ(s.preemptions, 1);
    EXPECT_EQ(s.fair_share_cycles, 0);
    EXPECT_DOUBLE_EQ(s.queue_delay_p95_low_s, 0);  // a starts at once; b's victim restarts
  }
  TenantSummary kube = Replay(w, "kube", 2);
  EXPECT_EQ(kube.preemptions, 0);
  EXPECT_DOUBLE_EQ(kube.queue_delay_p95_low_s, 8900);
}

TEST(TenantReplay, GpuplaneReclaimsRightAfterACheckpoint) {
  // One node, guarantees 4 and 4. Tenant b's two preemptible 4-GPU jobs fill it from 0 s;
  // tenant a asks for 4 GPUs at 1,000 s. kai reclaims at once (1,000 s of work lost);
  // gpuplane waits for b's checkpoint at 1,800 s, reclaims at its next try (every 60 s from
  // 1,000 s: 1,840 s), and loses 40 s of work plus the restore.
  TenantWorkload w =
      Two({{0, 9000, 4, 1, false}, {0, 9000, 4, 1, false}, {1000, 100, 4, 0, false}}, {4, 4});
  TenantSummary kai = Replay(w, "kai", 1);
  EXPECT_EQ(kai.preemptions, 1);
  EXPECT_NEAR(kai.lost_gpu_hours, 4 * (1000 + 60) / 3600.0, 1e-9);
  TenantSummary g = Replay(w, "gpuplane", 1);
  EXPECT_EQ(g.preemptions, 1);
  EXPECT_NEAR(g.lost_gpu_hours, 4 * (40 + 60) / 3600.0, 1e-9);
  EXPECT_DOUBLE_EQ(g.queue_delay_p95_low_s, 840);
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
