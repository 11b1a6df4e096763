// A simulated cluster: trace nodes published as DRA objects (a Node with the node's CPU and
// memory; one pool per node, one shareable device per GPU with a "gpu" capacity of 1, so a pod
// may take a share such as 460m or whole GPUs), the allocator's inventory over them, and the
// placement step every simulated pod goes through (SimState: the scheduling core's Session
// with the run's policy as its placer). SimCluster is immutable and may be shared between
// threads; a SimState is one run's, not thread-safe: it holds the cluster (shared), owns its
// snapshot, pods, placer and session, and borrows the run's random source.
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
#include "sched/pod_set.h"
#include "sched/policy.h"
#include "sched/policy_placer.h"
#include "sched/rng.h"
#include "sched/session.h"
#include "sched/snapshot.h"
#include "sim/trace.h"

namespace gpuplane::sim {

inline constexpr char kSimDriver[] = "gpu.sim.gpuplane.io";

// The immutable part: DRA objects, inventory, and an empty ClusterView.
class SimCluster {
 public:
  static absl::StatusOr<std::shared_ptr<const SimCluster>> FromNodes(
      const std::vector<TraceNode>& nodes);

  const model::Inventory& inventory() const { return *inventory_; }
  // Shared with every run's snapshot.
  const std::shared_ptr<const model::Inventory>& shared_inventory() const { return inventory_; }
  const std::vector<api::SourcedObject>& objects() const { return objects_; }
  const sched::ClusterView& empty_view() const { return view_; }

 private:
  explicit SimCluster(model::Inventory inv)
      : inventory_(std::make_shared<const model::Inventory>(std::move(inv))) {}
  std::vector<api::SourcedObject> objects_;
  std::shared_ptr<const model::Inventory> inventory_;
  sched::ClusterView view_;
};

// The mutable state of one run: a scheduling-core Session over a Snapshot of the cluster,
// whose placer is the run's policy on its ClusterView (sched/policy_placer.h). Every
// placement goes through the Session: the policy chooses a node and GPUs, the allocator
// allocates the pod's claim there (preferring those GPUs), and the view follows what the
// allocator took. Jobs are numbered by the caller (a retried job keeps its number).
class SimState {
 public:
  // `rng` (the run's) must outlive the state. Errors: the policy name is unknown.
  static absl::StatusOr<std::unique_ptr<SimState>> Make(std::shared_ptr<const SimCluster> cluster,
                                                        std::unique_ptr<sched::Policy> policy,
                                                        sched::Rng& rng);
  ~SimState();

  sched::ClusterView& view() { return placer_->view(); }
  const sched::ClusterView& view() const { return placer_->view(); }
  int64_t allocated_milli() const { return placer_->allocated_milli(); }
  // Placements where the allocator took other GPUs than the policy chose (expected: 0).
  int64_t disagreements() const { return placer_->disagreements(); }

  enum class Outcome {
    kPlaced,
    kNoNode,   // the policy found no feasible node
    kRefused,  // the allocator refused the policy's node (a disagreement; expected never)
  };
  struct Placed {
    Outcome outcome = Outcome::kNoNode;
    uint32_t node = 0;  // the view's node, when placed
  };
  // Places job `job` with `pod`'s demand: CPU and memory on the node, and a DRA claim for its
  // GPUs. REQUIRES: the job is not placed.
  Placed Place(size_t job, const sched::PodDemand& pod);
  // Removes a placed job.
  absl::Status Release(size_t job);

 private:
  SimState(std::shared_ptr<const SimCluster> cluster, sched::Rng& rng);
  // The Session's pod for `job`, created on first use.
  size_t PodOf(size_t job, const sched::PodDemand& pod);
  api::ResourceClaimSpec ClaimFor(const sched::PodDemand& pod) const;

  std::shared_ptr<const SimCluster> cluster_;
  api::SourcedObject pod_object_;  // what the pods' filters read (no tolerations, selectors)
  std::unique_ptr<sched::Snapshot> snapshot_;
  sched::PodSet pods_;
  std::vector<sched::PodDemand> demands_;  // parallel to pods_.pods
  std::vector<size_t> pod_of_job_;         // SIZE_MAX: none yet
  std::unique_ptr<sched::PolicyPlacer> placer_;
  std::unique_ptr<sched::Session> session_;
};

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_SIM_CLUSTER_H_
