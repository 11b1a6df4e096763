// gpuplane's own placement policy: FGD's fragmentation gradient (over the trace's task types),
// with two rules before it:
// 1. never strand whole GPUs: a node whose free whole GPUs could host the cheapest whole-GPU
//    task type (by CPU) is not given a pod that leaves it too little CPU for that type, unless
//    every feasible node would be stranded;
// 2. a sharing pod that fits a partly used GPU almost exactly (less than a tenth of a GPU left
//    over) goes to such a GPU (any node in the cluster) rather than to a fresh one.
// Then the gradient score, then the least left over, then the priority order. Near-perfect
// fits close GPUs that the gradient, quantized to 100 levels, would otherwise leave to chance;
// stranded whole GPUs are what whole-GPU pods, the largest share of demand, fail on.
// docs/SIMULATOR.md has the measurements, including what did not help.
#include <algorithm>
#include <cmath>

#include "sched/policy.h"

namespace gpuplane::sched {
namespace {

constexpr int kNearPerfect = 100;  // milli-GPU left over that still counts as a near-perfect fit

class GpuplanePolicy : public Policy {
 public:
  explicit GpuplanePolicy(const Workload& workload) : workload_(workload) {
    for (const TaskType& t : workload.types()) {
      if (t.num_gpu >= 1 && t.gpu_milli == kMilli) {
        min_whole_cpu_ = min_whole_cpu_ < 0 ? t.cpu_milli : std::min(min_whole_cpu_, t.cpu_milli);
      }
    }
  }

  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    cache_.NewPod(view, pod);
    std::optional<Placement> best;
    // Lexicographic: (does not strand whole GPUs, fits a partly used GPU nearly exactly,
    // gradient score, -leftover, -rank).
    bool best_partial = false, best_strands = false;
    int best_left = 0;
    double best_score = 0;
    uint32_t best_rank = 0;
    for (uint32_t n = 0; n < view.nodes.size(); ++n) {
      const NodeView& node = view.nodes[n];
      if (!Feasible(node, pod)) continue;
      const GradientCache::Answer& answer =
          cache_.Get(view, n, [&] { return cache_.Evaluate(workload_, view, n, pod); });
      int partial_gpu = pod.sharing() ? TightestPartlyUsed(node, pod) : -1;
      if (partial_gpu >= 0 && node.gpu_free[partial_gpu] - pod.gpu_milli >= kNearPerfect) {
        partial_gpu = -1;
      }
      bool partial = partial_gpu >= 0;
      int left = partial ? node.gpu_free[partial_gpu] - pod.gpu_milli : 0;
      const int* gpus = partial ? &partial_gpu : answer.gpus.data();
      const size_t gpu_count = partial ? 1 : answer.gpus.size();
      bool strands = Strands(node, pod, gpus, gpu_count);
      if (best && strands && !best_strands) continue;
      bool better = !best || (best_strands && !strands) || (partial && !best_partial) ||
                    (partial == best_partial &&
                     (answer.score > best_score ||
                      (answer.score == best_score &&
                       (left < best_left || (left == best_left && view.rank[n] < best_rank)))));
      if (!better) continue;
      best_partial = partial;
      best_strands = strands;
      best_left = left;
      best_score = answer.score;
      best_rank = view.rank[n];
      best = Placement{n, std::vector<int>(gpus, gpus + gpu_count)};
    }
    return best;
  }

 private:
  // Whether placing `pod` on `gpus` of `node` newly leaves free whole GPUs there with less CPU
  // than the cheapest whole-GPU task type needs.
  bool Strands(const NodeView& node, const PodDemand& pod, const int* gpus, size_t count) const {
    // Cheap tests first: most nodes keep enough CPU (this runs for every feasible node).
    if (node.cpu_free - pod.cpu_milli >= min_whole_cpu_) return false;
    if (min_whole_cpu_ < 0 || node.cpu_free < min_whole_cpu_) return false;  // none, or already
    int whole = 0;
    for (int f : node.gpu_free) whole += f == kMilli ? 1 : 0;
    for (size_t i = 0; i < count; ++i) whole -= node.gpu_free[gpus[i]] == kMilli ? 1 : 0;
    return whole > 0;
  }

  // The partly used GPU that fits the pod with the least left over (lowest index on ties).
  static int TightestPartlyUsed(const NodeView& node, const PodDemand& pod) {
    int best = -1;
    for (int g = 0; g < node.gpus(); ++g) {
      int f = node.gpu_free[g];
      if (f >= pod.gpu_milli && f < kMilli && (best < 0 || f < node.gpu_free[best])) best = g;
    }
    return best;
  }

  const Workload& workload_;
  GradientCache cache_;
  int64_t min_whole_cpu_ = -1;  // CPU of the cheapest whole-GPU task type; -1: none
};

}  // namespace

std::unique_ptr<Policy> MakeGpuplanePolicy(const Workload& workload) {
  return std::make_unique<GpuplanePolicy>(workload);
}

}  // namespace gpuplane::sched
