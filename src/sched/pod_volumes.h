// Where a pending pod's volumes can be used, as kube-scheduler's VolumeBinding plugin decides it
// for the common cases: every PersistentVolumeClaim a pod names (a `persistentVolumeClaim`
// volume, or an `ephemeral` volume's `<pod>-<volume>`) must exist and not be being deleted; a
// bound claim's PersistentVolume must exist and its node affinity match the node; an unbound
// claim whose StorageClass binds immediately (or which has no class) waits for its binding. An
// unbound WaitForFirstConsumer claim is bound on the chosen node to the smallest Available
// PersistentVolume of its class that fits it (capacity, access modes, volume mode) and whose
// node affinity matches the node, one volume per claim; where none is free, it is provisioned
// for the node when its class has a provisioner whose allowed topologies match the node (the
// scheduler writes `volume.kubernetes.io/selected-node` before binding the pod); a claim
// already given a node by that annotation keeps the pod on that node; a claim's `spec.selector`
// limits the volumes it may be given to those whose labels match it. A volume is provisioned for
// a node only where the provisioner's CSIDriver, if it publishes storage capacity
// (spec.storageCapacity), has a CSIStorageCapacity of the claim's class whose nodeTopology
// selects the node and whose maximumVolumeSize (else capacity) holds the claim's storage
// request, as kube's VolumeBinding checks it. A ReadWriteOncePod claim is
// used by one pod at a time (ReadWriteOncePodClaims; the filters check the snapshot's users).
// Pure functions over borrowed objects; not synchronized.
#ifndef GPUPLANE_SCHED_POD_VOLUMES_H_
#define GPUPLANE_SCHED_POD_VOLUMES_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/object.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"
#include "sched/status.h"
#include "sched/storage_capacity.h"

namespace gpuplane::sched {

struct VolumeIndex {
  std::map<std::string, const api::PersistentVolumeClaim*> claims;  // "ns/name"
  std::map<std::string, const api::PersistentVolume*> volumes;      // name
  std::map<std::string, const api::StorageClass*> classes;          // name
  // Volumes no claim holds (no spec.claimRef), by storage class, with their capacity: what an
  // unbound claim may be given.
  std::map<std::string, std::vector<std::pair<api::Quantity, const api::PersistentVolume*>>>
      free_by_class;
  std::map<std::string, const api::PersistentVolume*> reserved;  // by spec.claimRef "ns/name"
  std::map<std::string, const api::CSIDriver*> drivers;          // name
  // CSIStorageCapacity objects by storage class, each once (by "ns/name" in capacity_names).
  std::map<std::string, std::shared_ptr<StorageCapacities>> capacities;
  std::set<std::string> capacity_names;
  // The first object of a name counts (a file given as both cluster and work is read twice).
  void Add(const api::Object& o);
};

// Fills `p`'s volume constraints (volume_selectors, volume_node, volumes_to_bind), or its
// problem naming the volume and what to do. `where`: "file:line: Pod ns/name: ". The index's
// objects must outlive `p`.
void ResolveVolumes(const VolumeIndex& ix, std::string_view where, PodInfo& p);

// The ReadWriteOncePod PersistentVolumeClaims ("ns/name") `pod`'s persistentVolumeClaim
// volumes name (an ephemeral volume's claim is the pod's own), as kube's VolumeRestrictions
// counts them; claims not in the index are left out.
std::vector<std::string> ReadWriteOncePodClaims(const VolumeIndex& ix, const api::Pod& pod);

// The CSI volumes `pod`'s PersistentVolumeClaims (and ephemeral volumes' claims) and inline
// volumes stand for, as kube's NodeVolumeLimits counts them (sched/volume_limits.h), in-tree
// volumes of plugins migrated to CSI included (sched/csi_migration.h); claims not in the index,
// and volumes that are neither, are left out.
std::vector<CsiVolume> CsiVolumesOf(const VolumeIndex& ix, const api::Pod& pod);

// Chooses on the node (`name`, `labels`) a volume for every claim in `pods`' volumes_to_bind,
// in order, each volume for one claim and none of those in `taken`; nullopt when every claim
// has one, else the rule of the first claim that has no free candidate there and whose
// provisioner does not reach the node (kVolumeNode) or has no storage capacity published
// there (kVolumeCapacity). `out`, when given, gets each pod's choices.
std::optional<Rule> ChooseVolumes(const std::vector<const PodInfo*>& pods, const std::string& name,
                                  const std::map<std::string, std::string>& labels,
                                  const std::set<std::string>& taken,
                                  std::vector<std::vector<VolumeChoice>>* out = nullptr);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_POD_VOLUMES_H_
