// The placement policies. Formulas: ../shared/docs/fgd-method.md (FGD artifact) and
// docs/SIMULATOR.md (k8s, gpuplane).
#include <algorithm>
#include <cmath>

#include "sched/policy.h"
#include "util/strings.h"
#include "util/suggest.h"

namespace gpuplane::sched {
namespace {

constexpr double kCpuScale = 128000;  // the artifact's normalization: 128 cores
constexpr double kGpuScale = 8000;    // and 8 GPUs

// The feasible node with the highest `score(node, gpus)` (which may fill `gpus`); ties go to
// the node earlier in the priority order. Nodes are visited in index order (sequential
// memory) and ties compared by rank, which picks the same node as a scan in priority order.
template <class Score>
std::optional<Placement> Best(const ClusterView& view, const PodDemand& pod, Score score) {
  std::optional<Placement> best;
  double best_score = 0;
  uint32_t best_rank = 0;
  std::vector<int> gpus;
  for (uint32_t n = 0; n < view.nodes.size(); ++n) {
    const NodeView& node = view.nodes[n];
    if (!Feasible(node, pod)) continue;
    gpus.clear();
    double s = score(node, gpus);
    if (!best || s > best_score || (s == best_score && view.rank[n] < best_rank)) {
      best_score = s;
      best_rank = view.rank[n];
      best = Placement{n, gpus};
    }
  }
  return best;
}

class RandomPolicy : public Policy {
 public:
  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng& rng) override {
    std::vector<uint32_t> feasible;
    for (uint32_t n = 0; n < view.nodes.size(); ++n) {
      if (Feasible(view.nodes[n], pod)) feasible.push_back(n);
    }
    if (feasible.empty()) return std::nullopt;
    Placement p{feasible[rng.Below(feasible.size())], {}};
    const NodeView& node = view.nodes[p.node];
    std::vector<int> fitting;
    for (int g = 0; g < node.gpus(); ++g) {
      if (pod.num_gpu == 1 ? node.gpu_free[g] >= pod.gpu_milli : node.gpu_free[g] == kMilli) {
        fitting.push_back(g);
      }
    }
    if (pod.num_gpu > 0) {
      rng.Shuffle(fitting);
      fitting.resize(pod.num_gpu);
      std::sort(fitting.begin(), fitting.end());
      p.gpus = fitting;
    }
    return p;
  }
};

class DotProductPolicy : public Policy {
 public:
  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    return Best(view, pod, [&](const NodeView& node, std::vector<int>& gpus) {
      gpus = TightestGpus(node, pod);
      double dot = static_cast<double>(node.cpu_free) / kCpuScale *
                       static_cast<double>(pod.cpu_milli) / kCpuScale +
                   static_cast<double>(node.gpu_left()) / kGpuScale *
                       static_cast<double>(pod.gpu_request()) / kGpuScale;
      return std::trunc(100 * (1 - dot / 2));
    });
  }
};

class PackingPolicy : public Policy {
 public:
  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    return Best(view, pod, [&](const NodeView& node, std::vector<int>& gpus) -> double {
      gpus = TightestGpus(node, pod);
      if (pod.num_gpu == 0) return 0;
      int n = node.gpus();
      if (node.whole_free() == n) return std::max(33 - n, n);
      int whole_used = 0;
      int64_t left_tenths = 0;
      for (int g : gpus) {
        if (node.gpu_free[g] == kMilli) ++whole_used;
        int left = node.gpu_free[g] - pod.gpu_milli;
        left_tenths += left * 100 / kMilli / 10;
      }
      if (whole_used > 0) return std::max(50 - whole_used, 33);
      return static_cast<double>(std::max<int64_t>(100 - left_tenths, 50));
    });
  }
};

class ClusteringPolicy : public Policy {
 public:
  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    return Best(view, pod, [&](const NodeView& node, std::vector<int>& gpus) -> double {
      gpus = TightestGpus(node, pod);
      if (pod.num_gpu == 0) return 0;
      int64_t base = 25 * (static_cast<int64_t>(kGpuScale) - node.gpu_left()) /
                     static_cast<int64_t>(kGpuScale);
      int tag = TagOf(pod), kinds = 0;
      for (int c : node.tags) kinds += c > 0 ? 1 : 0;
      int bonus = 0;
      if (kinds == 0) {
        bonus = 25;
      } else if (node.tags[tag] > 0) {
        bonus = kinds == 1 ? 75 : 50;
      }
      return static_cast<double>(base + bonus);
    });
  }
};

class BestFitPolicy : public Policy {
 public:
  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    // Normalizing (raw - min) * 100 / (max - min) keeps the order of raw scores (they span at
    // most 100), so the highest raw score wins, ties to the earlier node.
    return Best(view, pod, [&](const NodeView& node, std::vector<int>& gpus) {
      gpus = TightestGpus(node, pod);
      double cpu = static_cast<double>(node.cpu_free - pod.cpu_milli) / kCpuScale;
      double gpu = static_cast<double>(node.gpu_left() - pod.gpu_request()) / kGpuScale;
      return std::trunc(100 * (1 - (0.5 * cpu + 0.5 * gpu)));
    });
  }
};

// Fragmentation gradient: how much placing the pod lowers the node's expected fragmentation.
class FgdPolicy : public Policy {
 public:
  explicit FgdPolicy(const Workload& workload) : workload_(workload) {}

  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    cache_.NewPod(view, pod);
    std::optional<Placement> best;
    double best_score = 0;
    uint32_t best_rank = 0;
    for (uint32_t n = 0; n < view.nodes.size(); ++n) {
      const NodeView& node = view.nodes[n];
      if (!Feasible(node, pod)) continue;
      const GradientCache::Answer& a =
          cache_.Get(view, n, [&] { return cache_.Evaluate(workload_, view, n, pod); });
      if (!best || a.score > best_score || (a.score == best_score && view.rank[n] < best_rank)) {
        best_score = a.score;
        best_rank = view.rank[n];
        best = Placement{n, a.gpus};
      }
    }
    return best;
  }

 private:
  const Workload& workload_;
  GradientCache cache_;
};

// Kubernetes today: the scheduler looks for feasible nodes from a rotating start and stops
// after numFeasibleNodesToFind (percentageOfNodesToScore, adaptive: 50% - nodes/125, at least
// 5% and 100 nodes), scores them with NodeResourcesFit's LeastAllocated over CPU and memory
// (DRA devices are not scored), and the DRA allocator takes the first fitting device.
class KubernetesPolicy : public Policy {
 public:
  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    const size_t all = view.priority.size();
    if (all == 0) return std::nullopt;
    size_t want = all;
    if (all >= 100) {
      int64_t percent = std::max<int64_t>(5, 50 - static_cast<int64_t>(all) / 125);
      want = std::max<size_t>(100, all * static_cast<size_t>(percent) / 100);
    }
    std::optional<Placement> best;
    double best_score = 0;
    size_t found = 0, visited = 0;
    for (; visited < all && found < want; ++visited) {
      uint32_t n = view.priority[(start_ + visited) % all];
      const NodeView& node = view.nodes[n];
      if (!Feasible(node, pod)) continue;
      ++found;
      double cpu = node.cpu_capacity > 0 ? static_cast<double>(node.cpu_free - pod.cpu_milli) /
                                               static_cast<double>(node.cpu_capacity)
                                         : 0;
      double mem = node.memory_capacity > 0
                       ? static_cast<double>(node.memory_free - pod.memory_mib) /
                             static_cast<double>(node.memory_capacity)
                       : 0;
      double score = std::trunc(100 * (cpu + mem) / 2);
      if (!best || score > best_score) {
        best_score = score;
        best = Placement{n, {}};
      }
    }
    start_ = (start_ + visited) % all;
    return best;
  }

 private:
  size_t start_ = 0;  // nextStartNodeIndex
};

}  // namespace

std::unique_ptr<Policy> MakeGpuplanePolicy(const Workload& workload);

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> kNames = {"random",  "dotprod", "clustering", "packing",
                                                  "bestfit", "fgd",     "k8s",        "gpuplane"};
  return kNames;
}

absl::StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                                   const Workload& workload) {
  if (name == "random") return std::make_unique<RandomPolicy>();
  if (name == "dotprod") return std::make_unique<DotProductPolicy>();
  if (name == "clustering") return std::make_unique<ClusteringPolicy>();
  if (name == "packing") return std::make_unique<PackingPolicy>();
  if (name == "bestfit") return std::make_unique<BestFitPolicy>();
  if (name == "fgd") return std::make_unique<FgdPolicy>(workload);
  if (name == "k8s") return std::make_unique<KubernetesPolicy>();
  if (name == "gpuplane") return MakeGpuplanePolicy(workload);
  std::string known;
  for (const std::string& n : PolicyNames()) util::Append(known, known.empty() ? "" : ", ", n);
  return absl::InvalidArgumentError(util::Cat("unknown policy \"", name, "\"; known policies: ",
                                              known, util::DidYouMean(name, PolicyNames())));
}

}  // namespace gpuplane::sched
