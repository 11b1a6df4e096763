// The work of one scheduling pass, read from workload objects: Pods with their claims
// (ResourceClaims they name; for a template, the claim the pod's status.resourceClaimStatuses
// names, as the resourceclaim controller made it, else one instantiated as `<pod>-<claim>`; for
// resources a DeviceClass serves, as `nvidia.com/gpu`, the claim made for them:
// sched/extended_resources.h), and
// gangs from scheduling.x-k8s.io PodGroups (pods labelled `scheduling.x-k8s.io/pod-group`,
// `minMember`) and scheduling.k8s.io Workloads (pods with `spec.workloadRef`,
// `podGroups[].policy.gang.minCount`; one gang per pod group and replica key). Topology requests
// are annotations on the PodGroup, Workload or pod: `gpuplane.io/topology-required` and
// `gpuplane.io/topology-preferred`, naming a node label key or a DRA device attribute.
//
// A pod's PersistentVolumeClaims, their PersistentVolumes and StorageClasses, from either list,
// decide where its volumes can be used (sched/pod_volumes.h). Namespaces, from either list, give
// the namespace labels pod affinity terms' namespaceSelectors read (sched/pod_topology.h).
//
// Problems in the input (a pod naming a missing claim, template, PodGroup or Workload; a
// minMember above the pods present) are warnings with file:line and a status on the pods
// concerned; the rest of the work goes on. Plain values; the PodSet borrows the objects it
// was built from (they must outlive it); not synchronized.
#ifndef GPUPLANE_SCHED_POD_SET_H_
#define GPUPLANE_SCHED_POD_SET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/object.h"
#include "sched/disk_conflicts.h"
#include "sched/host_ports.h"
#include "sched/pod_topology.h"
#include "sched/status.h"
#include "sched/storage_capacity.h"
#include "sched/volume_limits.h"

namespace gpuplane::sched {

inline constexpr char kPodGroupLabel[] = "scheduling.x-k8s.io/pod-group";
inline constexpr char kTopologyRequired[] = "gpuplane.io/topology-required";
inline constexpr char kTopologyPreferred[] = "gpuplane.io/topology-preferred";
// The label the API server sets on every Namespace: its name.
inline constexpr char kNamespaceNameLabel[] = "kubernetes.io/metadata.name";

// A claim a pass reads: borrowed when it is a ResourceClaim among the objects read (they
// outlive the pass, as its pods do), owned when instantiated from a template or made for
// extended resources. Either way never changed: copies of a PodInfo share it.
using ClaimRef = std::shared_ptr<const api::ResourceClaim>;
inline ClaimRef BorrowedClaim(const api::ResourceClaim& c) { return ClaimRef(ClaimRef(), &c); }
inline ClaimRef OwnedClaim(api::ResourceClaim c) {
  return std::make_shared<const api::ResourceClaim>(std::move(c));
}

struct ClaimUse {
  std::string key;     // "ns/name"
  ClaimRef claim;      // as named, or instantiated from its template; never null
  bool named = false;  // a ResourceClaim object (other pods may share it)
  // Claims with one non-empty compile key have equal specs and are compiled once (the
  // simulator's claims per pod shape); empty: compiled per key.
  std::string compile_key;
  // The claim made for the pod's extended resources backed by DRA (sched/extended_resources.h):
  // the object when one exists, else to be created as `<pod>-extended-resources-` plus a
  // suffix the API server picks (the key until then: "ns/<pod>-extended-resources-").
  bool extended = false;
};

// Which device request of the pod's extended-resource claim serves which container's resource
// (pod.status.extendedResourceClaimStatus.requestMappings).
struct ExtendedRequestMapping {
  std::string container, resource, request;
  bool operator==(const ExtendedRequestMapping&) const = default;
};

// An unbound WaitForFirstConsumer PersistentVolumeClaim of a pod: bound, on the chosen node, to
// the smallest of its candidate PersistentVolumes there that no other claim took, else
// provisioned there when its class has a provisioner whose allowed topologies match the node.
struct VolumeToBind {
  std::string claim;  // "ns/name"
  std::string uid;
  std::vector<const api::PersistentVolume*> candidates;  // smallest first; borrowed
  bool provision = false;
  std::optional<api::NodeSelector> topology;  // the class's allowed topologies
  // Set when the provisioner's CSIDriver publishes its storage capacity and the claim asks for
  // storage (`storage`): the class's CSIStorageCapacity objects, one of which must select the
  // node with room for it to be provisioned there.
  std::shared_ptr<const StorageCapacities> capacity;
  api::Quantity storage;
};

struct PodInfo {
  size_t input = 0;  // position in the input
  std::string key;   // "ns/name"
  const api::SourcedObject* source = nullptr;
  const api::Pod* pod = nullptr;
  std::vector<ClaimUse> claims;
  int64_t cpu_milli = 0;  // requests: containers summed, init containers at their max
  int64_t memory_bytes = 0;
  // Every other resource requested (ephemeral-storage, hugepages, extended resources such as a
  // device plugin's nvidia.com/gpu), in thousandths of its unit, the same way.
  std::map<std::string, int64_t> other_milli;
  // Of those, the ones a DeviceClass serves (sched/extended_resources.h): counted on nodes that
  // advertise them, else allocated through the claim among `claims` marked `extended`;
  // other_milli_dra is other_milli without them (set only when there are some).
  std::vector<std::string> extended_resources;
  std::map<std::string, int64_t> other_milli_dra;
  std::vector<ExtendedRequestMapping> extended_mappings;
  std::vector<HostPort> host_ports;      // taken on its node (sched/host_ports.h)
  std::vector<InlineDisk> inline_disks;  // no other pod there may use (sched/disk_conflicts.h)
  int32_t priority = 0;
  int gang = -1;           // index into PodSet::gangs
  std::string bound_node;  // spec.nodeName: already running there
  // For preemption: being deleted (metadata.deletionTimestamp), spec.preemptionPolicy Never,
  // status.nominatedNodeName (where it waits for victims to leave), and when it started
  // (status.startTime, else metadata.creationTimestamp; seconds since 1970, -1 unknown).
  bool terminating = false;
  bool never_preempts = false;
  std::string nominated_node;
  double started = -1;
  // Where the pod's volumes can be used (sched/pod_volumes.h): node selectors a node must match
  // (bound PersistentVolumes' node affinity), the node its volumes are already being
  // provisioned for ("": any), and its unbound WaitForFirstConsumer claims.
  std::vector<api::NodeSelector> volume_selectors;
  std::string volume_node;
  std::vector<VolumeToBind> volumes_to_bind;
  // Its ReadWriteOncePod PersistentVolumeClaims ("ns/name"), which no other pod may use while
  // it is placed (kube's VolumeRestrictions); set for bound and pending pods.
  std::vector<std::string> rwop_claims;
  // Its CSI volumes, which count against the node's limits (sched/volume_limits.h); set for
  // bound and pending pods.
  std::vector<CsiVolume> csi_volumes;
  // Its namespace, labels and anti-affinity terms for other pods' terms (sched/pod_topology.h);
  // set for every pod of a set where some pod asks for pod affinity, anti-affinity or spread.
  std::shared_ptr<const PodLabels> labels;
  std::optional<Status> problem;
};

struct Gang {
  std::string key;   // "ns/name" (Workload: "ns/name/podGroup[/replicaKey]")
  std::string kind;  // "PodGroup", "Workload", or "Pod" (one pod asking for topology)
  std::string file;
  uint32_t line = 0;
  int min = 1;
  std::vector<size_t> members;  // indices into PodSet::pods, in input order
  std::string topology_required, topology_preferred;
  std::optional<Status> problem;
};

struct PodSet {
  std::vector<PodInfo> pods;
  std::vector<Gang> gangs;
  std::vector<std::string> warnings;  // "file:line: object: message"
};

// One Pod's entry without its claims or gang: key, requests (containers summed, init
// containers at their max), priority, spec.nodeName. REQUIRES: `o` holds a Pod and outlives
// the result. For engines that build a PodSet themselves (the simulator).
PodInfo DescribePod(const api::SourcedObject& o, size_t input);

// Whether `a` and `b` may go to the same nodes: same claims (all from templates), requests,
// host ports, CSI volumes, ReadWriteOncePod claims, tolerations, nodeSelector, affinity, spread
// constraints, volume constraints, and labels where terms read them; namespace and priority are not
// compared.
bool Interchangeable(const PodInfo& a, const PodInfo& b);

// `cluster`: the cluster's objects, whose ResourceClaims (allocated ones) pods may name too.
// The set borrows `work` (it must outlive the set).
PodSet BuildPodSet(const std::vector<api::SourcedObject>& work,
                   const std::vector<api::SourcedObject>& cluster = {});
PodSet BuildPodSet(const api::ObjectRefs& work, const api::ObjectRefs& cluster);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_POD_SET_H_
