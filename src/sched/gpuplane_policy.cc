// gpuplane's own placement policy. It prices the trace's task types with the packing program
// (packing_lp.h): the dual prices say what each free share of a GPU is worth to the workload,
// counting only the types the node still has CPU for (gap_values.h). Lexicographically:
// 1. never strand whole GPUs: a node whose free whole GPUs could host the cheapest whole-GPU
//    task type (by CPU) is not given a pod that leaves it too little CPU for that type, unless
//    every feasible node would be stranded;
// 2. a sharing pod destroys the least worth: the node's worth before, less the pod's own net
//    value, less the node's worth after (free shares it shrinks, and shares its CPU use makes
//    unusable), on the GPU of the node where that is least;
// 3. a sharing pod keeps CPU with the GPUs: it prefers a node that keeps at least the pod's
//    own CPU per milli-GPU for the GPU share left free there, and, when it may run on any
//    model, a node whose model is not contended (wanted more, per GPU, by the task types
//    limited to some models than the cluster as a whole is);
// 4. a partly used GPU before a fresh one;
// 5. FGD's fragmentation gradient, the least left over, the priority order.
// Rule 2 keeps to the pairs an optimal packing makes (two 470s on a GPU, 650 with 320); rules
// 1 and 3 keep GPUs usable: CPU-hungry pods on CPU-poor nodes leave GPUs nobody can use.
// docs/SIMULATOR.md has the measurements, including what did not help.
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
    if (!values_) {
      values_.emplace(workload_, static_cast<double>(view.total_milli) / kMilli);
      contended_ = ContendedModels(view);
    }
    cache_.NewPod(view, pod);
    std::optional<Placement> best;
    // Lexicographic: (does not strand whole GPUs, least worth lost, keeps CPU with the GPUs,
    // on a partly used GPU, gradient score, -leftover, -rank).
    bool best_partial = false, best_strands = false, best_keeps = false;
    int best_left = 0;
    double best_score = 0, best_loss = 0;
    uint32_t best_rank = 0;
    for (uint32_t n = 0; n < view.nodes.size(); ++n) {
      const NodeView& node = view.nodes[n];
      if (!Feasible(node, pod)) continue;
      // The worth lost depends on the same inputs as FGD's answer, so it is memoized with it.
      const GradientCache::Answer& answer = cache_.Get(view, n, [&] {
        GradientCache::Answer a = cache_.Evaluate(workload_, view, n, pod);
        if (pod.sharing()) {
          const Choice c = LeastLoss(node, pod);
          a.extra = c.loss;
          a.extra_gpu = c.gpu;
        }
        return a;
      });
      const Choice share{answer.extra_gpu, answer.extra};
      const bool partial = share.gpu >= 0 && node.gpu_free[share.gpu] < kMilli;
      const int left = partial ? node.gpu_free[share.gpu] - pod.gpu_milli : 0;
      const int* gpus = share.gpu >= 0 ? &share.gpu : answer.gpus.data();
      const size_t gpu_count = share.gpu >= 0 ? 1 : answer.gpus.size();
      const bool strands = Strands(node, pod, gpus, gpu_count);
      if (best && strands && !best_strands) continue;
      const bool keeps = !pod.sharing() || KeepsCpu(node, pod);
      const bool better =
          !best || (best_strands && !strands) ||
          (strands == best_strands &&
           (share.loss < best_loss ||
            (share.loss == best_loss &&
             ((keeps && !best_keeps) ||
              (keeps == best_keeps &&
               ((partial && !best_partial) ||
                (partial == best_partial &&
                 (answer.score > best_score ||
                  (answer.score == best_score &&
                   (left < best_left || (left == best_left && view.rank[n] < best_rank)))))))))));
      if (!better) continue;
      best_partial = partial;
      best_strands = strands;
      best_keeps = keeps;
      best_left = left;
      best_loss = share.loss;
      best_score = answer.score;
      best_rank = view.rank[n];
      best = Placement{n, std::vector<int>(gpus, gpus + gpu_count)};
    }
    return best;
  }

 private:
  // Rule 3 for a sharing pod on `node`.
  bool KeepsCpu(const NodeView& node, const PodDemand& pod) const {
    if (pod.models == 0 && node.model >= 0 && node.model < 64 && (contended_ >> node.model & 1)) {
      return false;
    }
    const int64_t left_milli = node.gpu_left() - pod.gpu_milli;
    if (left_milli <= 0) return true;
    // left CPU / left milli >= pod CPU / pod milli, in integers.
    return (node.cpu_free - pod.cpu_milli) * pod.gpu_milli >= pod.cpu_milli * left_milli;
  }

  // Models whose GPUs the task types limited to some models want more of, per GPU, than they
  // want of the cluster's GPUs as a whole (each type's demand spread over its models by their
  // GPU counts). Bit per model id.
  uint64_t ContendedModels(const ClusterView& view) const {
    std::vector<double> gpus(64, 0.0), demand(64, 0.0);
    double all_gpus = 0, limited = 0;
    for (const NodeView& node : view.nodes) {
      if (node.model < 0 || node.model >= 64) continue;
      gpus[node.model] += node.gpus();
      all_gpus += node.gpus();
    }
    for (const TaskType& t : workload_.types()) {
      if (t.num_gpu <= 0 || t.models == 0) continue;
      const double d = t.probability * t.num_gpu * std::min(t.gpu_milli, kMilli);
      double on = 0;
      for (int m = 0; m < 64; ++m) on += (t.models >> m & 1) != 0 ? gpus[m] : 0;
      if (on <= 0) continue;
      limited += d;
      for (int m = 0; m < 64; ++m) demand[m] += (t.models >> m & 1) != 0 ? d * gpus[m] / on : 0;
    }
    uint64_t contended = 0;
    for (int m = 0; m < 64; ++m) {
      if (demand[m] > 0 && demand[m] / gpus[m] > limited / all_gpus) contended |= uint64_t{1} << m;
    }
    return contended;
  }

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
  uint64_t contended_ = 0;           // models (bits) rule 3 keeps pods of any model off
  int64_t min_whole_cpu_ = -1;       // CPU of the cheapest whole-GPU task type; -1: none
};

}  // namespace

std::unique_ptr<Policy> MakeGpuplanePolicy(const Workload& workload) {
  return std::make_unique<GpuplanePolicy>(workload);
}

}  // namespace gpuplane::sched
