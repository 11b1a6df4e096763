// Fidelity of the fill-mode reimplementation of the FGD experiment: on every openb trace, the
// mean allocation ratio at 100% arrived workload over seeds 42-51 of each FGD-artifact policy
// is within 1.0 percentage point of the published value for bestfit and fgd and within 1.5
// for the others (../shared/docs/fgd-method.md). Reads ../shared/data/openb; skipped, with a
// message, when it is absent. Also runs our `gpuplane` policy on the same inputs and checks
// issue 5's goals: a higher mean than fgd on every trace, and on the default trace at least
// 20% fewer unallocated GPUs than fgd (96.2%); deterministic for these seeds, and
// docs/SIMULATOR.md says by how much. Every run also stays under its packing bound.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "gtest/gtest.h"
#include "sched/fragmentation.h"
#include "sim/experiment.h"
#include "sim/trace.h"
#include "sim/workload.h"

namespace gpuplane::sim {
namespace {

struct Published {
  const char* trace;
  double value[6];  // random, dotprod, clustering, packing, bestfit, fgd
};

// ../shared/docs/fgd-method.md, from the FGD paper's artifact.
const Published kPublished[] = {
    {"default", {86.30, 90.62, 91.65, 91.78, 92.86, 95.23}},
    {"cpu050", {89.02, 93.03, 93.52, 93.46, 93.56, 95.00}},
    {"gpushare40", {84.86, 89.30, 89.76, 89.77, 91.44, 93.96}},
    {"multigpu20", {86.92, 91.85, 93.34, 93.50, 93.73, 95.53}},
    {"multigpu30", {86.63, 93.11, 94.55, 94.70, 94.57, 96.36}},
    {"gpuspec10", {86.26, 90.17, 91.96, 92.24, 93.10, 94.66}},
    {"gpuspec20", {85.90, 88.29, 89.11, 89.28, 88.46, 94.66}},
};
const std::vector<std::string> kPolicies = {"random",  "dotprod", "clustering", "packing",
                                            "bestfit", "fgd",     "gpuplane"};

std::string DataDir() { return std::string(GPUPLANE_SOURCE_DIR) + "/../shared/data/openb"; }

class FidelityTest : public ::testing::TestWithParam<Published> {};

TEST_P(FidelityTest, MatchesThePublishedAllocationRatio) {
  const Published& p = GetParam();
  std::string nodes = DataDir() + "/openb_node_list_gpu_node.csv";
  std::string pods = DataDir() + "/openb_pod_list_" + p.trace + ".csv";
  if (!std::filesystem::exists(nodes) || !std::filesystem::exists(pods)) {
    GTEST_SKIP() << "openb data not found at " << DataDir()
                 << " (../shared/data/openb beside the checkout); fidelity not checked";
  }
  NodeTrace nt = *ReadOpenbNodes(nodes);
  ASSERT_TRUE(nt.problems.empty());
  std::shared_ptr<const SimCluster> cluster = *SimCluster::FromNodes(nt.nodes);
  PodTrace pt = *ReadOpenbPods(pods);
  ASSERT_TRUE(pt.problems.empty());
  Demands d = ToDemands(pt.pods, cluster->empty_view());
  sched::Workload w = sched::Workload::FromPods(d.pods);
  std::vector<uint64_t> seeds;
  for (uint64_t s = 42; s <= 51; ++s) seeds.push_back(s);
  std::vector<FillRun> runs = *RunFills(cluster, d.pods, w, kPolicies, seeds, 1.3, 2);
  std::vector<PolicySummary> summary = Summarize(runs, cluster->empty_view().total_milli);
  for (size_t i = 0; i + 1 < kPolicies.size(); ++i) {
    double ours = summary[i].alloc_ratio_at_100.mean;
    double tolerance = kPolicies[i] == "bestfit" || kPolicies[i] == "fgd" ? 1.0 : 1.5;
    std::printf("  %-11s %-10s ours %6.2f  published %6.2f  diff %+5.2f\n", p.trace,
                kPolicies[i].c_str(), ours, p.value[i], ours - p.value[i]);
    EXPECT_NEAR(ours, p.value[i], tolerance) << p.trace << " " << kPolicies[i];
  }
  double fgd = summary[5].alloc_ratio_at_100.mean, mine = summary[6].alloc_ratio_at_100.mean;
  std::printf("  %-11s gpuplane   ours %6.2f  fgd       %6.2f  diff %+5.2f\n", p.trace, mine, fgd,
              mine - fgd);
  EXPECT_GT(mine, fgd) << p.trace;
  if (std::string(p.trace) == "default") {
    const double unallocated = summary[6].unallocated_gpus_at_100.mean;
    const double fgd_unallocated = summary[5].unallocated_gpus_at_100.mean;
    std::printf("  default     gpuplane   unallocated %.1f GPUs, fgd %.1f: %.1f%% fewer\n",
                unallocated, fgd_unallocated, 100 * (1 - unallocated / fgd_unallocated));
    EXPECT_LE(unallocated, 0.8 * fgd_unallocated);
    EXPECT_GE(mine, 96.2);
  }
  for (const FillRun& r : runs) {
    EXPECT_EQ(r.disagreements, 0);
    EXPECT_LE(r.AllocAt(100), r.packing_bound_at_100) << r.policy << " seed " << r.seed;
  }
}

INSTANTIATE_TEST_SUITE_P(OpenbTraces, FidelityTest, ::testing::ValuesIn(kPublished),
                         [](const auto& info) { return std::string(info.param.trace); });

}  // namespace
}  // namespace gpuplane::sim
