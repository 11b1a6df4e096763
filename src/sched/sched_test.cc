#include <cmath>

#include "gtest/gtest.h"
#include "sched/cluster_view.h"
#include "sched/fragmentation.h"
#include "sched/policy.h"
#include "sched/rng.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

NodeView Node(const std::string& name, std::vector<int> free, int64_t cpu = 64000, int model = 0) {
  NodeView n;
  n.name = name;
  n.model = model;
  n.cpu_capacity = 64000;
  n.cpu_free = cpu;
  n.memory_capacity = 256000;
  n.memory_free = 256000;
  n.gpu_free = std::move(free);
  n.gpu_devices.assign(n.gpu_free.size(), 0);
  n.Refresh();
  return n;
}

ClusterView View(std::vector<NodeView> nodes) {
  ClusterView v;
  v.models = {"A", "B"};
  v.nodes = std::move(nodes);
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < v.nodes.size(); ++i) {
    order.push_back(i);
    v.total_milli += int64_t{v.nodes[i].gpus()} * kMilli;
    v.max_gpus_per_node = std::max(v.max_gpus_per_node, v.nodes[i].gpus());
  }
  v.SetPriority(order);
  return v;
}

PodDemand Pod(int num_gpu, int milli, int64_t cpu = 1000, uint64_t models = 0) {
  PodDemand p;
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.models = models;
  return p;
}

TEST(ClusterViewTest, Feasibility) {
  NodeView n = Node("n", {1000, 300, 0}, 4000);
  EXPECT_EQ(n.gpu_left(), 1300);
  EXPECT_EQ(n.whole_free(), 1);
  EXPECT_EQ(n.max_free(), 1000);
  EXPECT_TRUE(Feasible(n, Pod(1, 300)));
  EXPECT_TRUE(Feasible(n, Pod(1, 301)));  // on GPU 0
  EXPECT_TRUE(Feasible(n, Pod(1, 1000)));
  EXPECT_FALSE(Feasible(n, Pod(2, 1000)));          // one whole GPU free
  EXPECT_FALSE(Feasible(n, Pod(1, 100, 4001)));     // CPU
  EXPECT_TRUE(Feasible(n, Pod(0, 0, 4000)));        // CPU only, exactly fits
  EXPECT_FALSE(Feasible(n, Pod(1, 100, 1000, 2)));  // model B only; the node is A
  EXPECT_TRUE(Feasible(n, Pod(1, 100, 1000, 3)));
  n.memory_free = 10;
  EXPECT_FALSE(Feasible(n, Pod(1, 100)));
}

TEST(ClusterViewTest, TightestGpus) {
  NodeView n = Node("n", {1000, 400, 300, 400, 1000});
  EXPECT_EQ(TightestGpus(n, Pod(1, 300)), std::vector<int>{2});
  EXPECT_EQ(TightestGpus(n, Pod(1, 350)), std::vector<int>{1});  // lowest index on ties
  EXPECT_EQ(TightestGpus(n, Pod(1, 1000)), std::vector<int>{0});
  EXPECT_EQ(TightestGpus(n, Pod(2, 1000)), (std::vector<int>{0, 4}));
}

TEST(WorkloadTest, TypesCoverTheTraceByFrequency) {
  std::vector<PodDemand> pods;
  pods.reserve(100);
  for (int i = 0; i < 60; ++i) pods.push_back(Pod(1, 1000));
  for (int i = 0; i < 30; ++i) pods.push_back(Pod(1, 500));
  for (int i = 0; i < 6; ++i) pods.push_back(Pod(8, 1000));
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(0, 0));
  Workload w = Workload::FromPods(pods);
  ASSERT_EQ(w.types().size(), 3u);  // 60 + 30 + 6 = 96 >= 95% of 100
  EXPECT_EQ(w.types()[0].gpu_milli, 1000);
  EXPECT_DOUBLE_EQ(w.types()[0].probability, 60.0 / 96);
  EXPECT_EQ(w.types()[2].num_gpu, 8);
  EXPECT_EQ(pods[0].type, 0);
  EXPECT_EQ(pods[99].type, -1);  // CPU-only pods are not among the types
}

TEST(WorkloadTest, NodeFragmentationByHand) {
  std::vector<PodDemand> pods = {Pod(1, 500), Pod(1, 1000)};  // p = 1/2 each
  Workload w = Workload::FromPods(pods, 1.0);
  // GPUs free 1000, 300: the 500-share fits (frag = 300 below 500); the whole GPU fits (frag =
  // 300 below 1000). F = 0.5 * 300 + 0.5 * 300.
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(0, 64000, {1000, 300}), 300);
  // Only 300 free: neither fits, all 300 is fragmented for both.
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(0, 64000, {0, 300}), 300);
  // 600 free: the share fits (nothing below 500), the whole GPU does not (600 fragmented).
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(0, 64000, {600}), 300);
  // No CPU left: every type is unhostable.
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(0, 0, {1000, 1000}), 2000);
}

TEST(PolicyTest, FormulasPickTheExpectedNodes) {
  std::vector<PodDemand> pods = {Pod(1, 500), Pod(1, 1000)};
  Workload w = Workload::FromPods(pods, 1.0);
  Rng rng(1);
  ClusterView v =
      View({Node("empty", {1000, 1000}), Node("half", {500, 1000}), Node("full", {0, 0})});
  auto place = [&](const char* policy, const PodDemand& p) {
    std::unique_ptr<Policy> pol = *MakePolicy(policy, w);
    std::optional<Placement> pl = pol->Place(v, p, rng);
    EXPECT_TRUE(pl.has_value()) << policy;
    if (!pl) return std::string("none");
    return util::Cat(v.nodes[pl->node].name, ":", pl->gpus.empty() ? -1 : pl->gpus[0]);
  };
  // A 500 share: best fit, packing and FGD fill the half-used GPU exactly.
  EXPECT_EQ(place("bestfit", Pod(1, 500)), "half:0");
  EXPECT_EQ(place("packing", Pod(1, 500)), "half:0");
  EXPECT_EQ(place("fgd", Pod(1, 500)), "half:0");
  EXPECT_EQ(place("gpuplane", Pod(1, 500)), "half:0");
  // dotprod: both nodes score trunc(100 * (1 - n.p / 2)) = 99 (99.02 and 99.22), so the
  // first in priority order wins. With 32 cores asked and "half" at 40 free: 92 vs 95.
  EXPECT_EQ(place("dotprod", Pod(1, 500)), "empty:0");
  v.nodes[1].cpu_free = 40000;
  EXPECT_EQ(place("dotprod", Pod(1, 500, 32000)), "half:0");
  v.nodes[1].cpu_free = 64000;
  // k8s: least allocated CPU and memory, first fit device: all equal, first node, no GPU pick.
  EXPECT_EQ(place("k8s", Pod(1, 500)), "empty:-1");
  // Clustering: a node without GPU pods gets +25, one with only share pods +75 for shares.
  v.nodes[1].tags[0] = 1;
  EXPECT_EQ(place("clustering", Pod(1, 500)), "half:0");
  EXPECT_EQ(place("clustering", Pod(1, 1000)), "empty:0");  // "half" has another tag
  // Nothing fits a 3-GPU pod.
  std::unique_ptr<Policy> fgd = *MakePolicy("fgd", w);
  EXPECT_FALSE(fgd->Place(v, Pod(3, 1000), rng).has_value());
  EXPECT_FALSE(MakePolicy("nope", w).ok());
}

std::string PlaceWith(const char* policy, const Workload& w, const ClusterView& v,
                      const PodDemand& p) {
  Rng rng(1);
  std::unique_ptr<Policy> pol = *MakePolicy(policy, w);
  std::optional<Placement> pl = pol->Place(v, p, rng);
  return pl ? v.nodes[pl->node].name : "none";
}

TEST(GpuplanePolicyTest, ASharePodKeepsCpuWithTheGpus) {
  // Both nodes can host every type before and after, so the worth lost is the same; on "poor"
  // the pod would leave 10 cores for 1.5 free GPUs, less than its own 12 cores per GPU.
  std::vector<PodDemand> pods = {Pod(1, 500, 6000), Pod(1, 1000, 2000)};
  Workload w = Workload::FromPods(pods, 1.0);
  ClusterView v = View({Node("poor", {1000, 1000}, 16000), Node("rich", {1000, 1000}, 64000)});
  EXPECT_EQ(PlaceWith("gpuplane", w, v, Pod(1, 500, 6000)), "rich");
  // A pod that keeps its ratio on both goes by the other rules (the first node on ties).
  EXPECT_EQ(PlaceWith("gpuplane", w, v, Pod(1, 500, 1000)), "poor");
}

TEST(GpuplanePolicyTest, PodsOfAnyModelLeaveContendedModelsToThoseThatNeedThem) {
  // Half the pods may only run on model A; the cluster is half A, half B: A is contended. The
  // half-used GPU on "a" would otherwise win (a partly used GPU before a fresh one).
  std::vector<PodDemand> pods = {Pod(1, 500, 1000, 1), Pod(1, 500, 2000)};
  Workload w = Workload::FromPods(pods, 1.0);
  ClusterView v = View({Node("a", {500, 1000}, 64000, 0), Node("b", {1000, 1000}, 64000, 1)});
  EXPECT_EQ(PlaceWith("gpuplane", w, v, Pod(1, 500, 2000)), "b");
  EXPECT_EQ(PlaceWith("gpuplane", w, v, Pod(1, 500, 1000, 1)), "a");
  // With no type limited to a model, nothing is contended.
  std::vector<PodDemand> free_pods = {Pod(1, 500, 2000)};
  Workload any = Workload::FromPods(free_pods, 1.0);
  EXPECT_EQ(PlaceWith("gpuplane", any, v, Pod(1, 500, 2000)), "a");
}

TEST(PolicyTest, RandomIsFeasibleAndSeeded) {
  std::vector<PodDemand> pods = {Pod(1, 500)};
  Workload w = Workload::FromPods(pods);
  ClusterView v = View({Node("a", {1000, 200}), Node("b", {0, 0}), Node("c", {700, 1000})});
  std::unique_ptr<Policy> random = *MakePolicy("random", w);
  Rng r1(7), r2(7);
  for (int i = 0; i < 50; ++i) {
    std::optional<Placement> a = random->Place(v, Pod(1, 500), r1);
    std::optional<Placement> b = random->Place(v, Pod(1, 500), r2);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->node, b->node);
    EXPECT_EQ(a->gpus, b->gpus);
    EXPECT_NE(a->node, 1u);
    EXPECT_GE(v.nodes[a->node].gpu_free[a->gpus.at(0)], 500);
  }
}

// The FGD policy (memoized per node state, deduplicated GPUs, cached node fragmentation)
// against a direct implementation of the method's text on random clusters: same choices.
std::optional<Placement> ReferenceFgd(const ClusterView& v, const PodDemand& pod,
                                      const Workload& w) {
  std::optional<Placement> best;
  double best_score = -1;
  for (uint32_t n : v.priority) {
    const NodeView& node = v.nodes[n];
    if (!Feasible(node, pod)) continue;
    double before = w.NodeFragmentation(node.model, node.cpu_free, node.gpu_free);
    std::vector<std::vector<int>> options;
    if (pod.sharing()) {
      for (int g = 0; g < node.gpus(); ++g) {
        if (node.gpu_free[g] >= pod.gpu_milli) options.push_back({g});
      }
    } else {
      options.push_back(TightestGpus(node, pod));
    }
    for (const std::vector<int>& gpus : options) {
      std::vector<int> after = node.gpu_free;
      for (int g : gpus) after[g] -= pod.gpu_milli;
      double delta = before - w.NodeFragmentation(node.model, node.cpu_free - pod.cpu_milli, after);
      double score = std::trunc(100 / (1 + std::exp(-delta / 1000)));
      if (score > best_score) {
        best_score = score;
        best = Placement{n, gpus};
      }
    }
  }
  return best;
}

TEST(PolicyPropertyTest, MemoizedFgdMatchesTheDirectMethod) {
  Rng rng(20261130);
  const int milli[] = {100, 250, 460, 500, 810, 1000};
  int compared = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<NodeView> nodes;
    int count = 2 + static_cast<int>(rng.Below(30));
    for (int i = 0; i < count; ++i) {
      // Few distinct states, so the memo is exercised.
      std::vector<int> free(1 + rng.Below(4) * 2 + (rng.Below(2) ? 0 : 1));
      for (int& f : free) f = static_cast<int>(rng.Below(3)) * 500;
      nodes.push_back(Node(util::Cat("n", i), free, static_cast<int64_t>(rng.Below(4)) * 8000,
                           static_cast<int>(rng.Below(2))));
    }
    ClusterView v = View(nodes);
    std::vector<uint32_t> order = v.priority;
    rng.Shuffle(order);
    v.SetPriority(order);
    std::vector<PodDemand> trace;
    for (int i = 0; i < 40; ++i) {
      int g = rng.Below(5) == 0 ? 1 + static_cast<int>(rng.Below(3)) : 1;
      trace.push_back(Pod(g, g > 1 ? 1000 : milli[rng.Below(6)],
                          static_cast<int64_t>(rng.Below(3)) * 4000, rng.Below(4)));
    }
    Workload w = Workload::FromPods(trace);
    std::unique_ptr<Policy> fgd = *MakePolicy("fgd", w);
    for (const PodDemand& pod : trace) {
      std::optional<Placement> got = fgd->Place(v, pod, rng);
      std::optional<Placement> want = ReferenceFgd(v, pod, w);
      ASSERT_EQ(got.has_value(), want.has_value()) << "iteration " << iter;
      if (!got) continue;
      ASSERT_EQ(got->node, want->node) << "iteration " << iter;
      ASSERT_EQ(got->gpus, want->gpus) << "iteration " << iter;
      ++compared;
      // Apply it, so later pods see changed nodes (and the caches must notice).
      NodeView& node = v.nodes[got->node];
      for (int g : got->gpus) node.gpu_free[g] -= pod.gpu_milli;
      node.cpu_free -= pod.cpu_milli;
      node.Refresh();
      ++node.version;
    }
  }
  EXPECT_GT(compared, 3000);
}

}  // namespace
}  // namespace gpuplane::sched
