#include "sim/fill.h"
#include "gtest/gtest.h"
#include "sched/policy.h"
#include "sim/experiment.h"
#include "sim/sim_cluster.h"
#include "sim/workload.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

std::shared_ptr<const SimCluster> SmallCluster() {
  std::vector<TraceNode> nodes;
  nodes.reserve(22);
  for (int i = 0; i < 12; ++i) {
    nodes.push_back({util::Cat("g2-", i), "G2", 96000, 393216, 8, "gen"});
  }
  for (int i = 0; i < 10; ++i)
    nodes.push_back({util::Cat("t4-", i), "T4", 32000, 131072, 2, "gen"});
  return *SimCluster::FromNodes(nodes);
}

std::vector<sched::PodDemand> SmallTrace(const sched::ClusterView& view) {
  std::vector<TracePod> pods;
  const int milli[] = {1000, 1000, 1000, 460, 810, 250, 1000, 500};
  for (int i = 0; i < 120; ++i) {
    TracePod p;
    p.name = util::Cat("p", i);
    p.cpu_milli = 2000 + 1000 * (i % 5);
    p.memory_mib = 4096;
    p.num_gpu = i % 17 == 0 ? 4 : (i % 11 == 0 ? 0 : 1);
    p.gpu_milli = p.num_gpu == 0 ? 0 : (p.num_gpu > 1 ? 1000 : milli[i % 8]);
    if (i % 13 == 0 && p.num_gpu == 1) p.models = {"T4"};
    p.source = util::Cat("gen:", i);
    pods.push_back(p);
  }
  return ToDemands(pods, view).pods;
}

// A policy that answers with the placements it is given, in order.
class Scripted : public sched::Policy {
 public:
  explicit Scripted(std::vector<sched::Placement> script) : script_(std::move(script)) {}
  std::optional<sched::Placement> Place(const sched::ClusterView& /*view*/,
                                        const sched::PodDemand& /*pod*/,
                                        sched::Rng& /*rng*/) override {
    return next_ < script_.size() ? std::optional(script_[next_++]) : std::nullopt;
  }

 private:
  std::vector<sched::Placement> script_;
  size_t next_ = 0;
};

TEST(SimStateTest, PlacementsGoThroughTheSessionAndRelease) {
  std::shared_ptr<const SimCluster> cluster = SmallCluster();
  sched::Rng rng(1);
  std::vector<sched::Placement> script = {{0, {3}}, {0, {3}}, {0, {4, 5, 6, 7}}};
  std::unique_ptr<SimState> sim =
      *SimState::Make(cluster, std::make_unique<Scripted>(std::move(script)), rng);
  sched::PodDemand share;
  share.cpu_milli = 1000;
  share.num_gpu = 1;
  share.gpu_milli = 460;
  ASSERT_EQ(sim->Place(0, share).outcome, SimState::Outcome::kPlaced);
  EXPECT_EQ(sim->view().nodes[0].gpu_free[3], 540);
  EXPECT_EQ(sim->allocated_milli(), 460);
  // 540 left on GPU 3: a 600 share cannot go there; the allocator takes GPU 0 instead and the
  // disagreement is counted.
  sched::PodDemand big = share;
  big.gpu_milli = 600;
  ASSERT_EQ(sim->Place(1, big).outcome, SimState::Outcome::kPlaced);
  EXPECT_EQ(sim->disagreements(), 1);
  EXPECT_EQ(sim->view().nodes[0].gpu_free[0], 400);
  // Four whole GPUs, the policy's choice.
  sched::PodDemand four = share;
  four.num_gpu = 4;
  four.gpu_milli = 1000;
  ASSERT_EQ(sim->Place(2, four).outcome, SimState::Outcome::kPlaced);
  EXPECT_EQ(sim->view().nodes[0].whole_free(), 2);  // GPUs 1 and 2
  // The script is spent: the policy finds no node.
  EXPECT_EQ(sim->Place(3, share).outcome, SimState::Outcome::kNoNode);
  ASSERT_TRUE(sim->Release(2).ok());
  ASSERT_TRUE(sim->Release(0).ok());
  EXPECT_EQ(sim->view().nodes[0].gpu_free[3], 1000);
  EXPECT_EQ(sim->view().nodes[0].whole_free(), 7);
  EXPECT_EQ(sim->allocated_milli(), 600);
  EXPECT_FALSE(sim->Release(0).ok());  // not twice
  EXPECT_FALSE(sim->Release(9).ok());  // never placed
}

TEST(SimStateTest, TheNodeMustHaveRoomForTheCpu) {
  // A policy that picks a node without the CPU the pod asks for is refused by the Session's
  // node filter (NodeResourcesFit), and that is counted as a refusal, not placed.
  std::shared_ptr<const SimCluster> cluster = SmallCluster();
  sched::Rng rng(1);
  std::unique_ptr<SimState> sim = *SimState::Make(
      cluster, std::make_unique<Scripted>(std::vector<sched::Placement>{{0, {}}}), rng);
  sched::PodDemand huge;
  huge.cpu_milli = sim->view().nodes[0].cpu_capacity + 1;
  EXPECT_EQ(sim->Place(0, huge).outcome, SimState::Outcome::kRefused);
  EXPECT_EQ(sim->allocated_milli(), 0);
}

TEST(FillTest, EveryPolicyIsDeterministicAndAgreesWithTheAllocator) {
  std::shared_ptr<const SimCluster> cluster = SmallCluster();
  std::vector<sched::PodDemand> pods = SmallTrace(cluster->empty_view());
  sched::Workload workload = sched::Workload::FromPods(pods);
  for (const std::string& policy : sched::PolicyNames()) {
    SCOPED_TRACE(policy);
    FillRun a = *RunFill(cluster, pods, workload, policy, FillOptions{42, 1.3});
    FillRun b = *RunFill(cluster, pods, workload, policy, FillOptions{42, 1.3});
    FillRun c = *RunFill(cluster, pods, workload, policy, FillOptions{43, 1.3});
    EXPECT_EQ(a.alloc_ratio, b.alloc_ratio);
    EXPECT_EQ(a.frag_ratio, b.frag_ratio);
    EXPECT_EQ(a.failed_pods, b.failed_pods);
    EXPECT_NE(a.alloc_ratio, c.alloc_ratio);  // another seed, another order
    EXPECT_EQ(a.disagreements, 0);
    ASSERT_EQ(a.alloc_ratio.size(), static_cast<size_t>(kMaxArrived + 1));
    EXPECT_GT(a.AllocAt(100), 50);
    EXPECT_LE(a.AllocAt(130), 100);
    // The allocation ratio never exceeds the arrived workload.
    for (int x = 0; x <= kMaxArrived; ++x) EXPECT_LE(a.alloc_ratio[x], x + 0.5) << x;
    // Nor the packing bound, which depends on the seed only.
    EXPECT_LE(a.AllocAt(100), a.packing_bound_at_100 + 1e-9);
    EXPECT_LE(a.packing_bound_at_100, 100 + 1e-9);
    EXPECT_EQ(a.packing_bound_at_100, b.packing_bound_at_100);
  }
}

TEST(FillTest, PackingBoundIsTheSameForEveryPolicyOfASeed) {
  std::shared_ptr<const SimCluster> cluster = SmallCluster();
  std::vector<sched::PodDemand> pods = SmallTrace(cluster->empty_view());
  sched::Workload workload = sched::Workload::FromPods(pods);
  std::vector<FillRun> runs =
      *RunFills(cluster, pods, workload, {"random", "gpuplane"}, {5, 6}, 1.3, 1);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].packing_bound_at_100, runs[2].packing_bound_at_100);  // seed 5
  EXPECT_EQ(runs[1].packing_bound_at_100, runs[3].packing_bound_at_100);  // seed 6
  std::vector<PolicySummary> s = Summarize(runs, cluster->empty_view().total_milli);
  EXPECT_EQ(s[0].packing_bound_at_100.mean, s[1].packing_bound_at_100.mean);
  EXPECT_GE(s[1].packing_bound_at_100.mean, s[1].alloc_ratio_at_100.mean);
}

TEST(FillTest, ParallelRunsComeBackInOrder) {
  std::shared_ptr<const SimCluster> cluster = SmallCluster();
  std::vector<sched::PodDemand> pods = SmallTrace(cluster->empty_view());
  sched::Workload workload = sched::Workload::FromPods(pods);
  std::vector<FillRun> serial =
      *RunFills(cluster, pods, workload, {"bestfit", "fgd"}, {1, 2, 3}, 1.3, 1);
  std::vector<FillRun> parallel =
      *RunFills(cluster, pods, workload, {"bestfit", "fgd"}, {1, 2, 3}, 1.3, 4);
  ASSERT_EQ(serial.size(), 6u);
  for (size_t i = 0; i < serial.size(); ++i) {
    EXPECT_EQ(serial[i].policy, parallel[i].policy);
    EXPECT_EQ(serial[i].seed, parallel[i].seed);
    EXPECT_EQ(serial[i].alloc_ratio, parallel[i].alloc_ratio);
  }
  std::vector<PolicySummary> s = Summarize(serial, cluster->empty_view().total_milli);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].policy, "fgd");
  EXPECT_FALSE(RunFills(cluster, pods, workload, {"nope"}, {1}, 1.3, 1).ok());
}

TEST(MeanSdTest, SampleStandardDeviation) {
  MeanSd m = MeanAndSd({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(m.mean, 5);
  EXPECT_NEAR(m.sd, 2.138, 1e-3);
  EXPECT_EQ(MeanAndSd({3}).sd, 0);
}

}  // namespace
}  // namespace gpuplane::sim
