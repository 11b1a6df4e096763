// gpuplane's own placement policy. It prices the trace's task types with the packing program
// (packing_lp.h): the dual prices say what each free share of a GPU is worth to the workload,
// counting only the types the node still has CPU for (gap_values.h). Lexicographically:
// 1. never strand whole GPUs: a node whose free whole GPUs could host the cheapest whole-GPU
//    task type (by CPU) is not given a pod that leaves it too little CPU for that type, unless
//    every feasible node would be stranded;
// 2. a sharing pod destroys the least worth: the node's worth before, less the pod's own net
//    value, less the node's worth after (free shares it shrinks, and shares its CPU use makes
//    unusable), on the GPU of the node where that is least;
// 3. a partly used GPU before a fresh one;
// 4. FGD's fragmentation gradient, the least left over, the priority order.
// Rule 2 keeps to the pairs an optimal packing makes (two 470s on a GPU, 650 with 320) and
// keeps CPU for the shares that could still fill a GPU; rule 1 keeps whole GPUs usable for
// whole-GPU pods, the largest share of demand. docs/SIMULATOR.md has the measurements,
// including what did not help.
#include <algorithm>
#include <cmath>
#include <optional>

#include "sched/gap_values.h"
#include "sched/policy.h"

namespace gpuplane::sched {
namespace {

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
    if (!values_) values_.emplace(workload_, static_cast<double>(view.total_milli) / kMilli);
    cache_.NewPod(view, pod);
    std::optional<Placement> best;
    // Lexicographic: (does not strand whole GPUs, least worth lost, on a partly used GPU,
    // gradient score, -leftover, -rank).
    bool best_partial = false, best_strands = false;
    int best_left = 0;
    double best_score = 0, best_loss = 0;
    uint32_t best_rank = 0;
    for (uint32_t n = 0; n < view.nodes.size(); ++n) {
      const NodeView& node = view.nodes[n];
      if (!Feasible(node, pod)) continue;
      const GradientCache::Answer& answer =
          cache_.Get(view, n, [&] { return cache_.Evaluate(workload_, view, n, pod); });
      const Choice share = pod.sharing() ? LeastLoss(node, pod) : Choice{};
      const bool partial = share.gpu >= 0 && node.gpu_free[share.gpu] < kMilli;
      const int left = partial ? node.gpu_free[share.gpu] - pod.gpu_milli : 0;
      const int* gpus = share.gpu >= 0 ? &share.gpu : answer.gpus.data();
      const size_t gpu_count = share.gpu >= 0 ? 1 : answer.gpus.size();
      const bool strands = Strands(node, pod, gpus, gpu_count);
      if (best && strands && !best_strands) continue;
      const bool better =
          !best || (best_strands && !strands) ||
          (strands == best_strands &&
           (share.loss < best_loss ||
            (share.loss == best_loss &&
             ((partial && !best_partial) ||
              (partial == best_partial &&
               (answer.score > best_score ||
                (answer.score == best_score &&
                 (left < best_left || (left == best_left && view.rank[n] < best_rank)))))))));
      if (!better) continue;
      best_partial = partial;
      best_strands = strands;
      best_left = left;
      best_loss = share.loss;
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

  struct Choice {
    int gpu = -1;     // -1: not a sharing pod
    double loss = 0;  // worth destroyed, in milli-GPU, rounded to 1/1000
  };

  // The GPU of `node` where the sharing pod destroys the least worth (the fullest on ties,
  // then the lowest index).
  Choice LeastLoss(const NodeView& node, const PodDemand& pod) const {
    const std::vector<double>* before = values_->ValuesFor(node.cpu_free);
    const std::vector<double>* after = values_->ValuesFor(node.cpu_free - pod.cpu_milli);
    double worth_before = 0, worth_after = 0;
    for (int f : node.gpu_free) {
      worth_before += before != nullptr ? (*before)[f] : 0;
      worth_after += after != nullptr ? (*after)[f] : 0;
    }
    const double net = values_->NetValue(pod.gpu_milli);
    Choice best;
    for (int g = 0; g < node.gpus(); ++g) {
      const int f = node.gpu_free[g];
      if (f < pod.gpu_milli) continue;
      const double changed = after != nullptr ? (*after)[f - pod.gpu_milli] - (*after)[f] : 0;
      const double loss = std::round((worth_before - net - (worth_after + changed)) * 1000) / 1000;
      if (best.gpu < 0 || loss < best.loss || (loss == best.loss && f < node.gpu_free[best.gpu])) {
        best = {g, loss};
      }
    }
    return best;
  }

  const Workload& workload_;
  GradientCache cache_;
  std::optional<GapValues> values_;  // built on the first pod, from the cluster's GPU count
  int64_t min_whole_cpu_ = -1;       // CPU of the cheapest whole-GPU task type; -1: none
};

}  // namespace

std::unique_ptr<Policy> MakeGpuplanePolicy(const Workload& workload) {
  return std::make_unique<GpuplanePolicy>(workload);
}

}  // namespace gpuplane::sched
