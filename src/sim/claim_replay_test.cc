#include "sim/claim_replay.h"

#include "gtest/gtest.h"
#include "sim/cluster_generator.h"

namespace gpuplane::sim {
namespace {

std::vector<api::SourcedObject> Generated(const std::string& mix) {
  return ToObjects(*GenerateCluster(*ParseClusterMix(mix)));
}

TEST(ClaimReplayTest, JobsWaitForCapacityInArrivalOrder) {
  ClaimWorkload w = *LoadClaimWorkload({"testdata/sim/claims/workload.yaml"});
  ASSERT_TRUE(w.problems.empty()) << w.problems.front();
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(w.jobs[0].label, "pod train/job-a");
  EXPECT_EQ(w.jobs[0].where, "testdata/sim/claims/workload.yaml:18");
  EXPECT_EQ(w.jobs[0].claims.at(0).metadata.name, "job-a-gpus");
  const std::vector<api::SourcedObject> cluster = Generated("h100=1");
  const model::Inventory inv = model::Inventory::Build(cluster);
  for (const char* policy : {"gpuplane", "k8s"}) {
    std::vector<ClaimJob> jobs = w.jobs;
    std::vector<std::string> problems;
    absl::StatusOr<ReplayRun> r = ReplayClaims(cluster, jobs, policy, problems);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(r->jobs, 3);
    EXPECT_EQ(r->started, 3);
    EXPECT_EQ(r->never_started, 0);
    EXPECT_EQ(r->waits, (std::vector<double>{0, 0, 100}));
    // 8 GPUs busy for 100 s, then 4 for 100 s: 1,200 GPU-seconds over 8 GPUs x 200 s.
    EXPECT_EQ(GpuCapacity(inv), 8);
    EXPECT_EQ(r->end_time, 200);
    EXPECT_NEAR(r->gpu_hours * 3600, 1200, 1e-9) << policy;
    ASSERT_FALSE(r->utilization.empty());
    // Samples show the state before the events at their time, as in the trace replay.
    EXPECT_EQ(r->utilization.front(), (std::pair<double, double>{0, 0}));
    EXPECT_EQ(r->utilization[r->utilization.size() / 2].second, 100);
  }
}

TEST(ClaimReplayTest, BadJobsAreReportedWithFileAndLine) {
  ClaimWorkload w = *LoadClaimWorkload({"testdata/sim/claims/bad.yaml"});
  ASSERT_EQ(w.problems.size(), 2u);
  EXPECT_EQ(w.problems[0],
            "testdata/sim/claims/bad.yaml:27: pod train/no-duration: annotation "
            "sim.gpuplane.io/duration (seconds) is missing; skipped");
  EXPECT_NE(w.problems[1].find("bad.yaml:36: pod train/bad-arrival: annotation "
                               "sim.gpuplane.io/arrival: \"soon\" is not a number"),
            std::string::npos)
      << w.problems[1];
  ASSERT_EQ(w.jobs.size(), 1u);
  const std::vector<api::SourcedObject> cluster = Generated("h100=2");
  std::vector<std::string> problems;
  absl::StatusOr<ReplayRun> r = ReplayClaims(cluster, w.jobs, "gpuplane", problems);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs, 0);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("bad.yaml:16: pod train/too-big: fits no node"), std::string::npos)
      << problems[0];
  EXPECT_FALSE(ReplayClaims(cluster, w.jobs, "fgd", problems).ok());
}

TEST(ClaimReplayTest, PackingKeepsWholeNodesFree) {
  // Two 1-GPU jobs, then an 8-GPU job, on two nodes: k8s spreads the small jobs over both
  // nodes, so the big one waits for them; gpuplane packs them and the big one starts at once.
  ClaimJob small = LoadClaimWorkload({"testdata/sim/claims/workload.yaml"})->jobs.at(0);
  small.claims[0].spec.devices.requests[0].exactly->count = 1;
  small.duration = 1000;
  ClaimJob big = small;
  big.claims[0].spec.devices.requests[0].exactly->count = 8;
  big.arrival = 10;
  big.duration = 10;
  const std::vector<api::SourcedObject> cluster = Generated("h100=2");
  double wait[2];
  int i = 0;
  for (const char* policy : {"k8s", "gpuplane"}) {
    std::vector<ClaimJob> jobs = {small, small, big};
    std::vector<std::string> problems;
    absl::StatusOr<ReplayRun> r = ReplayClaims(cluster, jobs, policy, problems);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->waits.size(), 3u);
    wait[i++] = r->waits[2];  // the big job's (the small ones start at once)
  }
  EXPECT_EQ(wait[0], 990) << "k8s: the 8-GPU job waits for a small one to end";
  EXPECT_EQ(wait[1], 0) << "gpuplane: a whole node stayed free";
}

TEST(ClaimReplayTest, SmallJobsLeaveTheBigModelToJobsThatNeedIt) {
  // A 1-GPU job that fits any GPU, then an 8-GPU job that needs 120 GiB per GPU, on one H100
  // node and one B200 node: gpuplane puts the small job on the H100 (worth less), so the big
  // one starts at once on the B200.
  ClaimJob small = LoadClaimWorkload({"testdata/sim/claims/workload.yaml"})->jobs.at(0);
  small.claims[0].spec.devices.requests[0].exactly->count = 1;
  small.duration = 1000;
  ClaimJob big = small;
  api::ExactDeviceRequest& req = *big.claims[0].spec.devices.requests[0].exactly;
  req.count = 8;
  req.selectors.push_back(api::DeviceSelector{api::CelDeviceSelector{
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('120Gi')) >= 0"}});
  big.arrival = 10;
  big.duration = 10;
  const std::vector<api::SourcedObject> cluster = Generated("b200=1,h100=1");
  std::vector<ClaimJob> jobs = {small, big};
  std::vector<std::string> problems;
  absl::StatusOr<ReplayRun> r = ReplayClaims(cluster, jobs, "gpuplane", problems);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(r->waits, (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace gpuplane::sim
