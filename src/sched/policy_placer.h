// The simulator's placement policies (policy.h: random, dotprod, clustering, packing, bestfit,
// fgd, k8s, gpuplane) as a Session Placer: the policy chooses a node and GPUs on its
// ClusterView, the Session allocates the pod's claims there through the allocator (preferring
// those GPUs), and Reserve/Unreserve keep the view in step with what the allocator actually
// took. A pod is described to the policy by its PodDemand, `demands[pod.input]`.
//
// The view's nodes and GPUs must be the snapshot's (same names; `NodeView::gpu_devices` the
// snapshot's device ids): Make checks it. Ownership: owns the policy and its view; borrows
// `demands` and `rng`, which must outlive it. Not thread-safe; one per simulation run.
#ifndef GPUPLANE_SCHED_POLICY_PLACER_H_
#define GPUPLANE_SCHED_POLICY_PLACER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sched/cluster_view.h"
#include "sched/plugins.h"
#include "sched/policy.h"
#include "sched/rng.h"
#include "sched/snapshot.h"

namespace gpuplane::sched {

class PolicyPlacer : public Placer {
 public:
  // Errors: a view node or GPU the snapshot does not have.
  static absl::StatusOr<std::unique_ptr<PolicyPlacer>> Make(std::unique_ptr<Policy> policy,
                                                            ClusterView view,
                                                            const Snapshot& snapshot,
                                                            const std::vector<PodDemand>& demands,
                                                            Rng& rng);

  ClusterView& view() { return view_; }
  const ClusterView& view() const { return view_; }
  int64_t allocated_milli() const { return allocated_milli_; }
  // Placements where the allocator took other GPUs than the policy chose (expected: 0).
  int64_t disagreements() const { return disagreements_; }
  // Whether the last Choose found a node.
  bool chose() const { return chose_; }
  // The view's node of an inventory node.
  uint32_t ViewNode(model::NodeId node) const { return view_node_[node]; }

  std::optional<Pick> Choose(const Snapshot& s, const PodInfo& pod) override;
  void Reserve(const PodInfo& pod, model::NodeId node,
               const std::vector<alloc::Choice>& choices) override;
  void Unreserve(const PodInfo& pod, model::NodeId node,
                 const std::vector<alloc::Choice>& choices) override;

 private:
  PolicyPlacer(std::unique_ptr<Policy> policy, ClusterView view,
               const std::vector<PodDemand>& demands, Rng& rng);
  // Applies an allocation (+1) or its release (-1) to the view.
  void Apply(const PodDemand& pod, uint32_t node, const std::vector<alloc::Choice>& choices,
             int sign);

  std::unique_ptr<Policy> policy_;
  ClusterView view_;
  const std::vector<PodDemand>& demands_;
  Rng& rng_;
  std::vector<model::NodeId> inventory_node_;         // view node -> inventory node
  std::vector<uint32_t> view_node_;                   // inventory node -> view node
  std::vector<std::pair<uint32_t, int>> device_gpu_;  // device -> (view node, GPU index)
  std::vector<int32_t> gpu_capacity_;  // device -> index of its "gpu" capacity, or -1
  std::vector<int> picked_;            // the GPUs of the last Choose
  bool chose_ = false;
  int64_t allocated_milli_ = 0;
  int64_t disagreements_ = 0;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_POLICY_PLACER_H_
