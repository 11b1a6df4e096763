// A simulated cluster: trace nodes published as DRA objects (one pool per node, one
// shareable device per GPU with a "gpu" capacity of 1, so a pod may take a share such as
// 460m or whole GPUs), the allocator's inventory over them, and the placement step every
// simulated pod goes through: a policy's choice is allocated by the real allocator
// (alloc::Allocator) and committed to its AllocationState, and the policies' ClusterView is
// updated from what the allocator actually chose. Not thread-safe; one per simulation run
// (the inventory may be shared read-only).
#ifndef GPUPLANE_SIM_SIM_CLUSTER_H_
#define GPUPLANE_SIM_SIM_CLUSTER_H_

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "alloc/allocator.h"
#include "alloc/request.h"
#include "api/object.h"
#include "model/allocation_state.h"
#include "model/inventory.h"
#include "sched/cluster_view.h"
#include "sched/policy.h"
#include "sim/trace.h"

namespace gpuplane::sim {

inline constexpr char kSimDriver[] = "gpu.sim.gpuplane.io";

// The immutable part: DRA objects, inventory, and an empty ClusterView.
class SimCluster {
 public:
  static absl::StatusOr<std::shared_ptr<const SimCluster>> FromNodes(
      const std::vector<TraceNode>& nodes);

  const model::Inventory& inventory() const { return inventory_; }
  const std::vector<api::SourcedObject>& objects() const { return objects_; }
  const sched::ClusterView& empty_view() const { return view_; }

 private:
  explicit SimCluster(model::Inventory inv) : inventory_(std::move(inv)) {}
  std::vector<api::SourcedObject> objects_;
  model::Inventory inventory_;
  sched::ClusterView view_;
};

// What one placement did: the allocator's choices (to release later) and the GPUs by index.
struct Placed {
  uint32_t node = 0;
  std::vector<alloc::Choice> choices;
};

// The mutable state of one run: allocation state, view, and the placement step.
class SimState {
 public:
  explicit SimState(std::shared_ptr<const SimCluster> cluster);

  sched::ClusterView& view() { return view_; }
  const sched::ClusterView& view() const { return view_; }
  int64_t allocated_milli() const { return allocated_milli_; }
  // Placements where the allocator took other GPUs than the policy chose (expected: 0).
  int64_t disagreements() const { return disagreements_; }

  // Allocates `pod` as the policy placed it: CPU and memory on the node, and a DRA claim for
  // its GPUs through the allocator, preferring the policy's GPUs (first fit when it named
  // none). Nullopt when the allocator refuses (the caller counts that as a disagreement
  // between the view and the allocator, which tests require to be zero).
  std::optional<Placed> Place(const sched::PodDemand& pod, const sched::Placement& where);
  // Undoes a Place of the same pod.
  absl::Status Release(const sched::PodDemand& pod, const Placed& placed);

 private:
  const alloc::CompiledClaim& ClaimFor(const sched::PodDemand& pod);

  std::shared_ptr<const SimCluster> cluster_;
  model::AllocationState state_;
  sched::ClusterView view_;
  alloc::PreferScorer prefer_;
  alloc::Allocator allocator_;
  alloc::SelectorCache selectors_;
  std::map<std::tuple<int, int, uint64_t>, std::unique_ptr<alloc::CompiledClaim>> claims_;
  std::vector<std::pair<uint32_t, int>> device_gpu_;  // device id -> (node, GPU index)
  std::vector<model::NodeId> inventory_node_;         // view node -> inventory node
  int64_t allocated_milli_ = 0;
  int64_t disagreements_ = 0;
};

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_SIM_CLUSTER_H_
