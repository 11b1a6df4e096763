// Where a pending pod's volumes can be used, as kube-scheduler's VolumeBinding plugin decides it
// for the common cases: every PersistentVolumeClaim a pod names (a `persistentVolumeClaim`
// volume, or an `ephemeral` volume's `<pod>-<volume>`) must exist and not be being deleted; a
// bound claim's PersistentVolume must exist and its node affinity match the node; an unbound
// claim whose StorageClass binds immediately (or which has no class) waits for its binding; an
// unbound WaitForFirstConsumer claim is provisioned for the chosen node (its class's allowed
// topologies must match the node; the scheduler writes `volume.kubernetes.io/selected-node`
// before binding the pod), or stays on the node it was already given to. Not built: choosing
// among existing PersistentVolumes for a WaitForFirstConsumer claim whose class has no
// provisioner (local volumes): such a pod waits with that reason.
// Pure functions over borrowed objects; not synchronized.
#ifndef GPUPLANE_SCHED_POD_VOLUMES_H_
#define GPUPLANE_SCHED_POD_VOLUMES_H_

#include <map>
#include <string>
#include <string_view>

#include "api/object.h"
#include "sched/pod_set.h"

namespace gpuplane::sched {

struct VolumeIndex {
  std::map<std::string, const api::PersistentVolumeClaim*> claims;  // "ns/name"
  std::map<std::string, const api::PersistentVolume*> volumes;      // name
  std::map<std::string, const api::StorageClass*> classes;          // name
  void Add(const api::Object& o);
};

// Fills `p`'s volume constraints (volume_selectors, volume_node, volumes_to_provision), or its
// problem naming the volume and what to do. `where`: "file:line: Pod ns/name: ". The index's
// objects must outlive `p`.
void ResolveVolumes(const VolumeIndex& ix, std::string_view where, PodInfo& p);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_POD_VOLUMES_H_
