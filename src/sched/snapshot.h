// The cluster as one scheduling cycle sees it: the DRA inventory, what is allocated, the node
// index for fast node choice, per node the facts the node filters read (taints, cordon,
// allocatable and requested CPU and memory, worth), and which pods and claims are placed.
// Taken once per cycle (a simulator event, a live cycle, one `gpuplane schedule` pass).
//
// Ownership: owns everything it holds (the inventory is built from the objects given, which
// need not outlive it, or shared read-only with its other users). Mutated only through a Statement
// (statement.h), which keeps the allocation state, the index and the bookkeeping in step. Not
// thread-safe.
#ifndef GPUPLANE_SCHED_SNAPSHOT_H_
#define GPUPLANE_SCHED_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "alloc/node_index.h"
#include "alloc/scorer.h"
#include "alloc/selector_memo.h"
#include "api/object.h"
#include "model/allocation_state.h"
#include "model/inventory.h"
#include "sched/disk_conflicts.h"
#include "sched/host_ports.h"
#include "sched/pod_topology.h"
#include "sched/volume_limits.h"

namespace gpuplane::sched {

struct NodeFacts {
  bool has_node = false;  // a Node object was given (else nothing below but worth is known)
  std::vector<api::Taint> taints;
  bool unschedulable = false;
  int64_t cpu_allocatable = -1;  // milli; -1: not known (no Node object), never limits
  int64_t memory_allocatable = -1;
  int64_t cpu_requested = 0;
  int64_t memory_requested = 0;
  int64_t pods_allocatable = -1;  // status.allocatable.pods; -1: not known, never limits
  int64_t pods_placed = 0;
  // The other resources in status.allocatable, and what placed pods request of them
  // (thousandths); a resource a Node does not list is 0 there (unknown without a Node object).
  std::map<std::string, int64_t> other_allocatable, other_requested;
  std::vector<HostPort> host_ports;      // taken by placed pods
  std::vector<InlineDisk> inline_disks;  // placed pods' (sched/disk_conflicts.h)
  // Its CSINode's volume limits (driver -> volumes it may attach), and the CSI volumes attached:
  // placed pods' and its VolumeAttachments' (sched/volume_limits.h).
  std::map<std::string, int64_t> volume_limits;
  AttachedVolumes csi_volumes;
  double worth = 0;  // of its most valuable device (worth.h)
};

// A claim allocated in the snapshot: where, the allocator's choices (for claims that came
// allocated from the input: their devices, request and alternative 0), its result, and the pods
// using it (for input claims, also the pods its status.reservedFor names).
struct ClaimAllocation {
  model::NodeId node = model::kNoId;  // kNoId when not node-local
  std::vector<alloc::Choice> choices;
  api::AllocationResult result;
  std::vector<std::string> users;  // pod keys
};

// One unbound WaitForFirstConsumer claim's volume where its pod is placed: a PersistentVolume's
// name, or "" to provision one for the node (sched/pod_volumes.h).
struct VolumeChoice {
  std::string claim;  // "ns/name"
  std::string uid;
  std::string volume;
  bool operator==(const VolumeChoice&) const = default;
};

struct PodPlacement {
  std::string pod;  // "ns/name"
  model::NodeId node = model::kNoId;
  std::vector<std::string> claims;  // keys of every claim it uses
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::map<std::string, int64_t> other_milli;
  std::vector<HostPort> host_ports;
  std::vector<VolumeChoice> volumes;
  // What other pods' affinity, anti-affinity and spread terms read of it (sched/pod_topology.h);
  // null when no pod of the pass has such terms.
  std::shared_ptr<const PodLabels> labels;
  std::vector<std::string> rwop_claims;  // PodInfo::rwop_claims
  std::vector<CsiVolume> csi_volumes;    // PodInfo::csi_volumes
  std::vector<InlineDisk> inline_disks;  // PodInfo::inline_disks
};

class Snapshot {
 public:
  // `cluster`: DeviceClasses, ResourceSlices, Nodes, CSINodes, allocated ResourceClaims, and
  // VolumeAttachments with the PersistentVolumes they name (a CSI volume attached to a node
  // counts against its limit whether or not a pod uses it).
  // `prices`: dollars per GPU-hour by product name, for the devices' worth (worth.h). Taken by
  // value: pass it with std::move when done with it, and its slices move into the inventory (the
  // other objects stay).
  static std::unique_ptr<Snapshot> Build(std::vector<api::SourcedObject> cluster,
                                         const std::map<std::string, double>& prices = {});
  // On an inventory already built from `cluster` (shared read-only, so repeated runs on one
  // cluster build it once); `cluster` gives the Nodes and allocated claims.
  static std::unique_ptr<Snapshot> Build(std::shared_ptr<const model::Inventory> inventory,
                                         const std::vector<api::SourcedObject>& cluster,
                                         const std::map<std::string, double>& prices = {});
  static std::unique_ptr<Snapshot> Build(std::shared_ptr<const model::Inventory> inventory,
                                         const api::ObjectRefs& cluster,
                                         const std::map<std::string, double>& prices = {});

  const model::Inventory& inventory() const { return inv_; }
  const model::AllocationState& state() const { return state_; }
  alloc::NodeIndex& index() { return *index_; }
  // Selector results on this inventory, shared by the index and the allocators of the
  // sessions on this snapshot (AllocatorOptions::memo), so each (selector, device) pair is
  // evaluated once per snapshot.
  alloc::SelectorMemo& memo() { return *memo_; }
  const NodeFacts& node(model::NodeId n) const { return facts_[n]; }
  const std::vector<double>& device_worth() const { return device_worth_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const ClaimAllocation* claim(const std::string& key) const;
  const PodPlacement* placement(const std::string& pod) const;
  // PersistentVolumes placed pods' claims were given in this snapshot (VolumeChoice).
  const std::set<std::string>& volumes_taken() const { return volumes_taken_; }
  // A placed pod using the ReadWriteOncePod claim `claim` ("ns/name"), or null.
  const std::string* ReadWriteOncePodUser(const std::string& claim) const;
  // Every pod placed, by key.
  const std::map<std::string, PodPlacement, std::less<>>& placements() const { return pods_; }
  // Changes with every Place and Remove: what was computed from the placements at one version
  // holds while it is unchanged.
  uint64_t version() const { return version_; }
  // Changes with every Remove (a pod gone: rules it held may pass now) and every SetOrder.
  uint64_t removals() const { return removals_; }
  uint64_t order_version() const { return order_version_; }
  // How many placed pods have required anti-affinity terms, which every pod placed after them
  // must respect (sched/pod_topology.h), and those whose terms may match a pod with `labels`
  // (each term is indexed by one of its matchLabels pairs; terms without any always come).
  int anti_affinity_pods() const { return anti_.pods; }
  std::vector<const PodPlacement*> AntiAffinityCandidates(
      const std::map<std::string, std::string>& labels) const {
    return anti_.Candidates(labels);
  }
  // The same for placed pods' terms that score the pods placed after them (PodLabels::scoring).
  int scoring_pods() const { return scoring_.pods; }
  std::vector<const PodPlacement*> ScoringCandidates(
      const std::map<std::string, std::string>& labels) const {
    return scoring_.Candidates(labels);
  }
  // Placed pods with labels (PodPlacement::labels) that `selector` may match: those holding
  // its rarest matchLabels pair, else one of the values of an In requirement, else all of
  // them. The caller checks the selector on each.
  std::vector<const PodPlacement*> Candidates(const api::LabelSelector& selector) const;
  // Every claim allocated, by key.
  const std::map<std::string, ClaimAllocation, std::less<>>& claims() const { return claims_; }
  // Replaces the node order the index searches in (a policy's preference).
  void SetOrder(std::vector<model::NodeId> order);

  // What Remove took away, so Restore can put it back.
  struct Removed {
    PodPlacement placement;
    std::map<std::string, ClaimAllocation> released;  // claims no pod uses any more
  };
  // Used by Statement only. REQUIRES: the claims in `fresh` are not allocated yet.
  absl::Status Place(PodPlacement p, std::map<std::string, ClaimAllocation> fresh);
  absl::StatusOr<Removed> Remove(const std::string& pod);
  absl::Status Restore(Removed r);

 private:
  explicit Snapshot(std::shared_ptr<const model::Inventory> inv);
  absl::Status Take(const std::vector<alloc::Choice>& choices);
  // Counts each attachment's CSI volume on its node (Build).
  void AttachVolumes(const std::vector<const api::VolumeAttachment*>& attachments,
                     const std::vector<const api::PersistentVolume*>& volumes);
  absl::Status Give(const std::vector<alloc::Choice>& choices);
  // Adds a placed pod with labels to (or removes it from) the label indexes.
  void Index(const PodPlacement& p, bool add);

  std::shared_ptr<const model::Inventory> owned_;
  const model::Inventory& inv_;
  model::AllocationState state_;
  std::unique_ptr<alloc::SelectorMemo> memo_;
  std::unique_ptr<alloc::NodeIndex> index_;
  std::vector<NodeFacts> facts_;
  std::vector<double> device_worth_;
  std::vector<std::string> warnings_;
  std::map<std::string, ClaimAllocation, std::less<>> claims_;
  std::map<std::string, PodPlacement, std::less<>> pods_;
  std::set<std::string> volumes_taken_;
  std::multimap<std::string, std::string> rwop_users_;  // claim -> placed pod
  uint64_t version_ = 0;
  uint64_t removals_ = 0;
  uint64_t order_version_ = 0;
  using Postings = std::map<std::pair<std::string, std::string>, std::set<const PodPlacement*>>;
  // Placed pods holding terms that read other pods' labels, each term under one of its
  // matchLabels pairs, or among `unindexed` when it has none (a term without a selector
  // matches nothing and is left out).
  struct TermIndex {
    int pods = 0;
    Postings by_label;
    std::set<const PodPlacement*> unindexed;
    void Change(const PodPlacement* p, const std::optional<api::LabelSelector>& selector, bool add);
    std::vector<const PodPlacement*> Candidates(
        const std::map<std::string, std::string>& labels) const;
  };
  TermIndex anti_;     // required anti-affinity terms
  TermIndex scoring_;  // PodLabels::scoring
  Postings by_label_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_SNAPSHOT_H_
