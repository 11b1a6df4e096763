// core/v1 Pod (with its volumes) and Node, scheduling.x-k8s.io/v1alpha1 PodGroup and
// scheduling.k8s.io/v1alpha1 Workload (Kubernetes 1.35's Workload API): the fields gpuplane reads;
// every other field Kubernetes defines is kept in `extra` and written back unchanged.
// Plain value types; copyable; not synchronized.
#ifndef GPUPLANE_API_CORE_TYPES_H_
#define GPUPLANE_API_CORE_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/quantity.h"

namespace gpuplane::api {

struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const PodResourceClaim&) const = default;
};

struct ResourceClaimRef {  // containers[].resources.claims[]
  std::string name;
  std::string request;
  bool operator==(const ResourceClaimRef&) const = default;
};

struct ResourceRequirements {
  std::map<std::string, Quantity> requests;
  std::map<std::string, Quantity> limits;
  std::vector<ResourceClaimRef> claims;
  // The request of `name`, or its limit where no request is given (what the API server
  // defaults the request to); null when neither is.
  const Quantity* RequestOf(const std::string& name) const {
    auto it = requests.find(name);
    if (it != requests.end()) return &it->second;
    it = limits.find(name);
    return it == limits.end() ? nullptr : &it->second;
  }
  bool operator==(const ResourceRequirements&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  Passthrough extra;
  bool operator==(const Container&) const = default;
};

// pod.spec.workloadRef (Kubernetes 1.35, Workload API): the Workload and its pod group.
struct WorkloadReference {
  std::string name;
  std::string pod_group;
  std::string pod_group_replica_key;
  bool operator==(const WorkloadReference&) const = default;
};

// pod.spec.affinity. The scheduler enforces the required terms (node affinity, and pod
// affinity and anti-affinity: sched/pod_topology.h) and scores nodes by the preferred ones
// (sched/preferences.h).
// A preferred node affinity term: a node matching `preference` scores `weight` (1-100).
struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution, preferredDuringScheduling...
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

// A term of podAffinity or podAntiAffinity: pods matching `label_selector` in `namespaces`
// (the pod's own when both lists are empty; every namespace when namespace_selector is the
// empty selector), in the same domain of `topology_key` as the node.
struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
  std::optional<LabelSelector> namespace_selector;
  Passthrough extra;  // matchLabelKeys, mismatchLabelKeys (the API server merges them in)
  bool operator==(const PodAffinityTerm&) const = default;
};

// A preferred pod (anti-)affinity term: each placed pod it matches in the node's domain adds
// (affinity) or takes away (anti-affinity) `weight` (1-100).
struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;  // podAffinityTerm
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

struct PodAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution, preferredDuringScheduling...
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  bool operator==(const Affinity&) const = default;
};

// pod.spec.topologySpreadConstraints[]: DoNotSchedule ones are node filters
// (sched/pod_topology.h); ScheduleAnyway ones score nodes (sched/preferences.h).
struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // DoNotSchedule, ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::string node_affinity_policy;  // Honor (default), Ignore
  std::string node_taints_policy;    // Ignore (default), Honor
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

// pod.spec.volumes[]: the claim a persistentVolumeClaim volume names; an `ephemeral` volume's
// claim is `<pod>-<volume>`, made by the ephemeral volume controller. Every other volume
// source is kept as written.
struct PersistentVolumeClaimVolumeSource {
  std::string claim_name;
  std::optional<bool> read_only;
  bool operator==(const PersistentVolumeClaimVolumeSource&) const = default;
};

struct Volume {
  std::string name;
  std::optional<PersistentVolumeClaimVolumeSource> persistent_volume_claim;
  Passthrough extra;  // the other sources (ephemeral, emptyDir, configMap, csi, ...)
  bool operator==(const Volume&) const = default;
};

struct PodSpec {
  std::string scheduler_name;
  std::string node_name;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::vector<PodResourceClaim> resource_claims;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::string> node_selector;
  std::optional<Affinity> affinity;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::optional<WorkloadReference> workload_ref;
  std::vector<Volume> volumes;
  // Seconds between the termination signal and the kill; absent: the API server's 30.
  std::optional<int64_t> termination_grace_period_seconds;
  Passthrough extra;
  bool operator==(const PodSpec&) const = default;
};

struct ContainerStatus {
  std::string name;
  std::string container_id;
  Passthrough extra;
  bool operator==(const ContainerStatus&) const = default;
};

struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

struct PodStatus {
  std::string phase;
  std::vector<ContainerStatus> container_statuses;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
  Passthrough extra;
  bool operator==(const PodStatus&) const = default;
};

struct Pod {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  bool operator==(const Pod&) const = default;
};

struct NodeSpec {
  std::vector<Taint> taints;
  std::optional<bool> unschedulable;
  Passthrough extra;
  bool operator==(const NodeSpec&) const = default;
};

struct NodeStatus {
  std::map<std::string, Quantity> capacity;
  std::map<std::string, Quantity> allocatable;
  Passthrough extra;
  bool operator==(const NodeStatus&) const = default;
};

struct Node {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
  bool operator==(const Node&) const = default;
};

// What pod affinity terms' namespaceSelectors read of a namespace: its labels (metadata). The
// API server labels every namespace kubernetes.io/metadata.name=<name>.
struct Namespace {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  Passthrough spec;    // finalizers
  Passthrough status;  // phase, conditions
  bool operator==(const Namespace&) const = default;
};

struct PodGroupSpec {
  int32_t min_member = 0;
  std::optional<int32_t> schedule_timeout_seconds;
  std::map<std::string, Quantity> min_resources;
  std::string queue;
  std::string priority_class_name;
  bool operator==(const PodGroupSpec&) const = default;
};

struct PodGroup {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  PodGroupSpec spec;
  Passthrough status;
  bool operator==(const PodGroup&) const = default;
};

struct GangSchedulingPolicy {
  int32_t min_count = 0;
  bool operator==(const GangSchedulingPolicy&) const = default;
};

// Exactly one of basic (no gang semantics; kept as written) and gang.
struct PodGroupPolicy {
  std::optional<Doc> basic;
  std::optional<GangSchedulingPolicy> gang;
  bool operator==(const PodGroupPolicy&) const = default;
};

struct WorkloadPodGroup {
  std::string name;
  PodGroupPolicy policy;
  bool operator==(const WorkloadPodGroup&) const = default;
};

struct TypedLocalObjectReference {
  std::string api_group;
  std::string kind;
  std::string name;
  bool operator==(const TypedLocalObjectReference&) const = default;
};

struct WorkloadSpec {
  std::optional<TypedLocalObjectReference> controller_ref;
  std::vector<WorkloadPodGroup> pod_groups;  // 1..8, names unique
  bool operator==(const WorkloadSpec&) const = default;
};

struct Workload {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  WorkloadSpec spec;
  bool operator==(const Workload&) const = default;
};

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_CORE_TYPES_H_
