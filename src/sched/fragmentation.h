// Fragmentation as the FGD paper measures it (../shared/docs/fgd-method.md): a target
// workload of task types with probabilities, and for a node the expected share of its free
// GPU capacity that a random task of that workload could not use. Immutable; thread-safe.
// A GradientCache is owned by one policy instance (one run) and is not thread-safe.
#ifndef GPUPLANE_SCHED_FRAGMENTATION_H_
#define GPUPLANE_SCHED_FRAGMENTATION_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sched/cluster_view.h"

namespace gpuplane::sched {

struct TaskType {
  int64_t cpu_milli = 0;
  int gpu_milli = 0;
  int num_gpu = 0;
  uint64_t models = 0;  // 0: any
  double probability = 0;
};

class Workload {
 public:
  Workload() = default;
  // The most frequent (cpu, gpu_milli, num_gpu, models) types of `pods`, taken until they
  // cover `coverage` of the pods, with probabilities proportional to their counts. Sets each
  // pod's `type` to its type's index (or -1).
  static Workload FromPods(std::vector<PodDemand>& pods, double coverage = 0.95);

  const std::vector<TaskType>& types() const { return types_; }

  // F_n: sum over types of probability x free milli-GPU the type cannot use on this node,
  // given the node's model, free CPU and per-GPU free shares.
  double NodeFragmentation(int model, int64_t cpu_free, const std::vector<int>& gpu_free) const;

 private:
  std::vector<TaskType> types_;
};

// What the fragmentation-gradient policies compute per node for one pod, memoized: nodes
// equal in model, free CPU and per-GPU free shares get the same answer, and each node's own
// fragmentation is cached across pods until the node changes (NodeView::version).
class GradientCache {
 public:
  struct Answer {
    double score = 0;
    std::vector<int> gpus;
    // A policy's own per-node answer for the same inputs, memoized with FGD's (gpuplane: the
    // worth a sharing pod destroys and the GPU where it is least).
    double extra = 0;
    int extra_gpu = -1;
  };

  // Call at the start of each placement decision. An answer depends on the node's state and
  // on the pod's CPU, GPU count and share (its shape), nothing else.
  void NewPod(const ClusterView& view, const PodDemand& pod);
  // The answer for `node`: remembered from an earlier pod of the same shape if the node has
  // not changed since (NodeView::version), else from a node in the same state this decision,
  // else `compute()`.
  template <class Compute>
  const Answer& Get(const ClusterView& view, uint32_t node, Compute compute) {
    std::pair<uint64_t, Answer>& slot = (*per_node_)[node];
    uint64_t version = view.nodes[node].version + 1;
    if (slot.first == version) return slot.second;
    if (const Answer* same = Find(view, node)) {
      slot.second = *same;
    } else {
      slot.second = compute();
      Put(view, node, slot.second);
    }
    slot.first = version;
    return slot.second;
  }
  // F_n of the node as it is now.
  double Fragmentation(const Workload& workload, const ClusterView& view, uint32_t node);
  // FGD's answer for placing `pod` on `node`: score int(100 x sigmoid((F_n - F_n') / 1000));
  // whole-GPU pods take the lowest-index free GPUs, a share the best fitting GPU (first on
  // ties; GPUs with equal free shares are evaluated once).
  Answer Evaluate(const Workload& workload, const ClusterView& view, uint32_t node,
                  const PodDemand& pod);

 private:
  const Answer* Find(const ClusterView& view, uint32_t node) const;
  void Put(const ClusterView& view, uint32_t node, const Answer& answer);
  static uint64_t Hash(const NodeView& n);
  static bool Same(const NodeView& a, const NodeView& b);
  std::vector<std::pair<uint64_t, double>> frag_;     // per node: version + 1, F_n
  std::unordered_multimap<uint64_t, size_t> memo_;    // node hash -> index into entries_
  std::vector<std::pair<uint32_t, Answer>> entries_;  // representative node, answer
  // Per pod shape (CPU, GPU count, share): per node, version + 1 and the answer.
  std::map<std::tuple<int64_t, int, int>, std::vector<std::pair<uint64_t, Answer>>> by_shape_;
  std::vector<std::pair<uint64_t, Answer>>* per_node_ = nullptr;
  std::vector<int> scratch_;  // per-GPU free shares after a trial placement
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_FRAGMENTATION_H_
