#include "sim/replay.h"
#include "gtest/gtest.h"
#include "sim/sim_cluster.h"
#include "sim/workload_generator.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

std::shared_ptr<const SimCluster> Cluster(int nodes) {
  std::vector<TraceNode> ns;
  ns.reserve(static_cast<size_t>(nodes));
  for (int i = 0; i < nodes; ++i) ns.push_back({util::Cat("n", i), "H100", 64000, 262144, 8, "t"});
  return *SimCluster::FromNodes(ns);
}

ReplayJob Job(double arrival, double duration, int gpus, int milli = 1000) {
  ReplayJob j;
  j.arrival = arrival;
  j.duration = duration;
  j.demand.num_gpu = gpus;
  j.demand.gpu_milli = gpus == 0 ? 0 : milli;
  j.demand.cpu_milli = 1000;
  j.demand.memory_mib = 1024;
  return j;
}

TEST(ReplayTest, QueueWaitsForCapacityInOrder) {
  std::shared_ptr<const SimCluster> cluster = Cluster(1);
  std::vector<sched::PodDemand> none;
  sched::Workload w = sched::Workload::FromPods(none);
  // 8 GPUs: a 6-GPU job until t=100, then a 4-GPU job must wait for it; a 2-GPU job that
  // arrives later fits next to the first at once.
  std::vector<ReplayJob> jobs = {Job(0, 100, 6), Job(10, 50, 4), Job(20, 30, 2)};
  ReplayRun r = *RunReplay(cluster, jobs, w, "bestfit", ReplayOptions{1, 10});
  EXPECT_EQ(r.started, 3);
  EXPECT_EQ(r.never_started, 0);
  ASSERT_EQ(r.waits.size(), 3u);
  EXPECT_EQ(r.waits[0], 0);
  EXPECT_EQ(r.waits[1], 0);   // the 2-GPU job, started at 20
  EXPECT_EQ(r.waits[2], 90);  // the 4-GPU job, started at 100
  EXPECT_DOUBLE_EQ(r.end_time, 150);
  // GPU time: 6 x 100 + 2 x 30 + 4 x 50 = 860 GPU-seconds.
  EXPECT_NEAR(r.gpu_hours, 860.0 / 3600, 1e-9);
  EXPECT_EQ(r.disagreements, 0);
}

TEST(ReplayTest, JobsThatNeverFitStayQueued) {
  std::shared_ptr<const SimCluster> cluster = Cluster(1);
  std::vector<sched::PodDemand> none;
  sched::Workload w = sched::Workload::FromPods(none);
  std::vector<ReplayJob> jobs = {Job(0, -1, 8), Job(1, 10, 1)};  // the first runs forever
  ReplayRun r = *RunReplay(cluster, jobs, w, "k8s", ReplayOptions{1, 10});
  EXPECT_EQ(r.started, 1);
  EXPECT_EQ(r.never_started, 1);
  std::vector<ReplayJob> unsorted = {Job(5, 1, 1), Job(1, 1, 1)};
  EXPECT_FALSE(RunReplay(cluster, unsorted, w, "k8s", ReplayOptions{}).ok());
}

// The shortcut that retries queued jobs only when they fit a node that just freed room must
// not change any outcome: compare with a naive replay that retries every queued job fully.
TEST(ReplayTest, RetryShortcutChangesNothing) {
  std::shared_ptr<const SimCluster> cluster = Cluster(20);
  std::vector<ReplayJob> jobs = GenerateJobs(JobMixSpec{3000, 1.2, 7}, cluster->empty_view());
  std::vector<sched::PodDemand> demands;
  demands.reserve(jobs.size());
  for (const ReplayJob& j : jobs) demands.push_back(j.demand);
  sched::Workload w = sched::Workload::FromPods(demands);
  for (const char* policy : {"k8s", "bestfit", "gpuplane"}) {
    ReplayRun a = *RunReplay(cluster, jobs, w, policy, ReplayOptions{3, 50});
    ReplayRun b = *RunReplay(cluster, jobs, w, policy, ReplayOptions{3, 50});
    ReplayRun naive = *RunReplay(cluster, jobs, w, policy, ReplayOptions{3, 50, true});
    EXPECT_EQ(a.waits, b.waits) << policy;  // deterministic
    EXPECT_EQ(a.utilization, b.utilization) << policy;
    EXPECT_EQ(a.waits, naive.waits) << policy;
    EXPECT_EQ(a.gpu_hours, naive.gpu_hours) << policy;
    EXPECT_EQ(a.disagreements, 0) << policy;
    EXPECT_GT(a.started, 2500) << policy;
    double max_wait = 0;
    for (double x : a.waits) max_wait = std::max(max_wait, x);
    EXPECT_GT(max_wait, 0) << policy << ": at 120% load something should wait";
  }
}

}  // namespace
}  // namespace gpuplane::sim
