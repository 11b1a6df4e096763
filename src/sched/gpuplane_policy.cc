// gpuplane's own placement policy: FGD's fragmentation gradient (over the trace's task types)
// everywhere, except that a sharing pod that fits a partly used GPU almost exactly (less than
// a tenth of a GPU left over) takes the tightest such GPU anywhere in the cluster (the
// gradient score, then the priority order, break ties). Near-perfect fits close GPUs that
// the gradient, quantized to 100 levels, would otherwise leave to chance. docs/SIMULATOR.md
// has the measurements, including what did not help.
#include <cmath>

#include "sched/policy.h"

namespace gpuplane::sched {
namespace {

constexpr int kNearPerfect = 100;  // milli-GPU left over that still counts as a near-perfect fit

class GpuplanePolicy : public Policy {
 public:
  explicit GpuplanePolicy(const Workload& workload) : workload_(workload) {}

  std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod, Rng&) override {
    cache_.NewPod(view, pod);
    std::optional<Placement> best;
    // Lexicographic: (fits a partly used GPU nearly exactly, -leftover, gradient score, -rank).
    bool best_partial = false;
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
      bool better =
          !best || (partial && !best_partial) ||
          (partial == best_partial &&
           (left < best_left ||
            (left == best_left && (answer.score > best_score ||
                                   (answer.score == best_score && view.rank[n] < best_rank)))));
      if (!better) continue;
      best_partial = partial;
      best_left = left;
      best_score = answer.score;
      best_rank = view.rank[n];
      best = Placement{n, partial ? std::vector<int>{partial_gpu} : answer.gpus};
    }
    return best;
  }

 private:
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
};

}  // namespace

std::unique_ptr<Policy> MakeGpuplanePolicy(const Workload& workload) {
  return std::make_unique<GpuplanePolicy>(workload);
}

}  // namespace gpuplane::sched
