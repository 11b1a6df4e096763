// Field tables for every Kubernetes struct gpuplane reads and writes (see internal/schema.h).
// The limits are Kubernetes 1.35's (../shared/reference/dra.md). Internal to api/.
// Immutable static data; thread-safe.
#ifndef GPUPLANE_API_INTERNAL_SCHEMAS_H_
#define GPUPLANE_API_INTERNAL_SCHEMAS_H_

#include <array>
#include <string_view>
#include <tuple>

#include "api/core_types.h"
#include "api/internal/beta_types.h"
#include "api/internal/schema.h"
#include "api/queue_types.h"
#include "api/resource_types.h"
#include "api/storage_types.h"

namespace gpuplane::api::internal {

inline constexpr Rule kRequired{.required = true};
inline constexpr Rule kDnsLabel{.value = Fmt::kDnsLabel};
inline constexpr Rule kRequiredDnsLabel{.required = true, .value = Fmt::kDnsLabel};
inline constexpr Rule kRequiredSubdomain{.required = true, .value = Fmt::kDnsSubdomain};
inline constexpr Rule kLabels{.value = Fmt::kLabelValue, .key = Fmt::kLabelKey};
inline constexpr Rule kAnnotations{.key = Fmt::kLabelKey};
inline constexpr Rule kDriver{.required = true, .value = Fmt::kDriverName};
inline constexpr Rule kResourceMap{.key = Fmt::kLabelKey};
inline constexpr uint32_t kMaxAttributeValueLength = 64;

// Checks shared by several structs.
// A request's `exactly`, or a firstAvailable subrequest (which may not ask for admin access).
enum class RequestLevel { kRequest, kSubrequest };
void CheckExactRequest(Decoder& d, const Doc& n, const ExactDeviceRequest& r, RequestLevel level);
void CheckDeviceFields(Decoder& d, const Doc& n, const Device& v);
void CheckSliceSpec(Decoder& d, const Doc& n, const ResourceSliceSpec& s,
                    const std::vector<uint32_t>& device_lines);
void CheckRequestReferences(Decoder& d, const Doc& n, const DeviceClaim& c);

// ---- metadata and shared shapes ----

template <>
struct Schema<ObjectMeta> {
  static constexpr auto kFields =
      std::tuple{F("name", &ObjectMeta::name),
                 F("generateName", &ObjectMeta::generate_name),
                 F("namespace", &ObjectMeta::namespace_name, kDnsLabel),
                 F("uid", &ObjectMeta::uid),
                 F("resourceVersion", &ObjectMeta::resource_version),
                 F("generation", &ObjectMeta::generation),
                 F("creationTimestamp", &ObjectMeta::creation_timestamp),
                 F("labels", &ObjectMeta::labels, kLabels),
                 F("annotations", &ObjectMeta::annotations, kAnnotations)};
  static constexpr std::array<std::string_view, 6> kPassthrough = {"ownerReferences",
                                                                   "finalizers",
                                                                   "managedFields",
                                                                   "deletionTimestamp",
                                                                   "deletionGracePeriodSeconds",
                                                                   "selfLink"};
};

template <>
struct Schema<NodeSelectorRequirement> {
  static constexpr auto kFields = std::tuple{F("key", &NodeSelectorRequirement::key, kRequired),
                                             F("operator", &NodeSelectorRequirement::op, kRequired),
                                             F("values", &NodeSelectorRequirement::values)};
  static void Check(Decoder& d, const Doc& n, const NodeSelectorRequirement& v);
};

template <>
struct Schema<NodeSelectorTerm> {
  static constexpr auto kFields =
      std::tuple{F("matchExpressions", &NodeSelectorTerm::match_expressions),
                 F("matchFields", &NodeSelectorTerm::match_fields)};
};

template <>
struct Schema<NodeSelector> {
  static constexpr auto kFields =
      std::tuple{F("nodeSelectorTerms", &NodeSelector::node_selector_terms, kRequired)};
  static void Check(Decoder& d, const Doc& n, const NodeSelector& v);
};

template <>
struct Schema<Taint> {
  static constexpr auto kFields =
      std::tuple{F("key", &Taint::key, {.required = true, .value = Fmt::kLabelKey}),
                 F("value", &Taint::value, {.value = Fmt::kLabelValue}),
                 F("effect", &Taint::effect, kRequired), F("timeAdded", &Taint::time_added)};
  static void Check(Decoder& d, const Doc& n, const Taint& v);
};

template <>
struct Schema<Toleration> {
  static constexpr auto kFields = std::tuple{
      F("key", &Toleration::key, {.value = Fmt::kLabelKey}), F("operator", &Toleration::op),
      F("value", &Toleration::value, {.value = Fmt::kLabelValue}), F("effect", &Toleration::effect),
      F("tolerationSeconds", &Toleration::toleration_seconds)};
  static void Check(Decoder& d, const Doc& n, const Toleration& v);
};

// ---- DeviceClass ----

template <>
struct Schema<CelDeviceSelector> {
  static constexpr auto kFields = std::tuple{
      F("expression", &CelDeviceSelector::expression, {.required = true, .value = Fmt::kCel})};
};

template <>
struct Schema<DeviceSelector> {
  static constexpr auto kFields = std::tuple{F("cel", &DeviceSelector::cel, kRequired)};
};

template <>
struct Schema<OpaqueDeviceConfiguration> {
  static constexpr auto kFields =
      std::tuple{F("driver", &OpaqueDeviceConfiguration::driver, kDriver),
                 F("parameters", &OpaqueDeviceConfiguration::parameters, kRequired)};
  static void Check(Decoder& d, const Doc& n, const OpaqueDeviceConfiguration& v);
};

template <>
struct Schema<DeviceClassConfiguration> {
  static constexpr auto kFields =
      std::tuple{F("opaque", &DeviceClassConfiguration::opaque, kRequired)};
};

template <>
struct Schema<DeviceClassSpec> {
  static constexpr auto kFields =
      std::tuple{F("selectors", &DeviceClassSpec::selectors, {.max_items = 32}),
                 F("config", &DeviceClassSpec::config, {.max_items = 32}),
                 F("extendedResourceName", &DeviceClassSpec::extended_resource_name)};
  static void Check(Decoder& d, const Doc& n, const DeviceClassSpec& v);
};

template <>
struct Schema<DeviceClass> {
  static constexpr auto kFields =
      std::tuple{F("apiVersion", &DeviceClass::api_version), F("kind", &DeviceClass::kind),
                 F("metadata", &DeviceClass::metadata), F("spec", &DeviceClass::spec)};
};

// ---- ResourceSlice ----

template <>
struct Schema<DeviceAttribute> {
  static constexpr auto kFields =
      std::tuple{F("int", &DeviceAttribute::int_value), F("bool", &DeviceAttribute::bool_value),
                 F("string", &DeviceAttribute::string_value, {.max_len = kMaxAttributeValueLength}),
                 F("version", &DeviceAttribute::version_value,
                   {.value = Fmt::kSemver, .max_len = kMaxAttributeValueLength})};
  static void Check(Decoder& d, const Doc& n, const DeviceAttribute& v);
};

template <>
struct Schema<CapacityRequestPolicyRange> {
  static constexpr auto kFields = std::tuple{F("min", &CapacityRequestPolicyRange::min, kRequired),
                                             F("max", &CapacityRequestPolicyRange::max),
                                             F("step", &CapacityRequestPolicyRange::step)};
  static void Check(Decoder& d, const Doc& n, const CapacityRequestPolicyRange& v);
};

template <>
struct Schema<CapacityRequestPolicy> {
  static constexpr auto kFields =
      std::tuple{F("default", &CapacityRequestPolicy::default_value),
                 F("validValues", &CapacityRequestPolicy::valid_values, {.max_items = 10}),
                 F("validRange", &CapacityRequestPolicy::valid_range)};
  static void Check(Decoder& d, const Doc& n, const CapacityRequestPolicy& v);
};

template <>
struct Schema<DeviceCapacity> {
  static constexpr auto kFields = std::tuple{F("value", &DeviceCapacity::value, kRequired),
                                             F("requestPolicy", &DeviceCapacity::request_policy)};
};

template <>
struct Schema<Counter> {
  static constexpr auto kFields = std::tuple{F("value", &Counter::value, kRequired)};
};

template <>
struct Schema<CounterSet> {
  static constexpr auto kFields =
      std::tuple{F("name", &CounterSet::name, kRequiredDnsLabel),
                 F("counters", &CounterSet::counters,
                   {.required = true, .key = Fmt::kDnsLabel, .max_items = 32})};
};

template <>
struct Schema<DeviceCounterConsumption> {
  static constexpr auto kFields =
      std::tuple{F("counterSet", &DeviceCounterConsumption::counter_set, kRequiredDnsLabel),
                 F("counters", &DeviceCounterConsumption::counters,
                   {.required = true, .key = Fmt::kDnsLabel, .max_items = 32})};
};

#define GPUPLANE_DEVICE_FIELDS                                                                   \
  F("attributes", &Device::attributes, {.key = Fmt::kQualifiedName}),                            \
      F("capacity", &Device::capacity, {.key = Fmt::kQualifiedName}),                            \
      F("consumesCounters", &Device::consumes_counters, {.max_items = 2}),                       \
      F("nodeName", &Device::node_name, {.value = Fmt::kDnsSubdomain}),                          \
      F("nodeSelector", &Device::node_selector), F("allNodes", &Device::all_nodes),              \
      F("taints", &Device::taints, {.max_items = 16}), F("bindsToNode", &Device::binds_to_node), \
      F("bindingConditions", &Device::binding_conditions, {.max_items = 4}),                     \
      F("bindingFailureConditions", &Device::binding_failure_conditions, {.max_items = 4}),      \
      F("allowMultipleAllocations", &Device::allow_multiple_allocations)

template <>
struct Schema<Device> {
  static constexpr auto kFields =
      std::tuple{F("name", &Device::name, kRequiredDnsLabel), GPUPLANE_DEVICE_FIELDS};
  static void Check(Decoder& d, const Doc& n, const Device& v) { CheckDeviceFields(d, n, v); }
};

template <>
struct Schema<BetaBasicDevice> {
  static constexpr auto kFields = std::tuple{GPUPLANE_DEVICE_FIELDS};
  static void Check(Decoder& d, const Doc& n, const BetaBasicDevice& v) {
    CheckDeviceFields(d, n, v);
  }
};
#undef GPUPLANE_DEVICE_FIELDS

template <>
struct Schema<BetaDevice> {
  static constexpr auto kFields =
      std::tuple{F("name", &BetaDevice::name, kRequiredDnsLabel), F("basic", &BetaDevice::basic)};
};

template <>
struct Schema<ResourcePool> {
  static constexpr auto kFields =
      std::tuple{F("name", &ResourcePool::name, {.required = true, .value = Fmt::kPoolName}),
                 F("generation", &ResourcePool::generation, kRequired),
                 F("resourceSliceCount", &ResourcePool::resource_slice_count, kRequired)};
  static void Check(Decoder& d, const Doc& n, const ResourcePool& v);
};

#define GPUPLANE_SLICE_SPEC_FIELDS(T)                                     \
  F("driver", &T::driver, kDriver), F("pool", &T::pool, kRequired),       \
      F("nodeName", &T::node_name, {.value = Fmt::kDnsSubdomain}),        \
      F("nodeSelector", &T::node_selector), F("allNodes", &T::all_nodes), \
      F("perDeviceNodeSelection", &T::per_device_node_selection),         \
      F("sharedCounters", &T::shared_counters, {.max_items = 8}), F("devices", &T::devices)

template <>
struct Schema<ResourceSliceSpec> {
  static constexpr auto kFields = std::tuple{GPUPLANE_SLICE_SPEC_FIELDS(ResourceSliceSpec)};
  static void Check(Decoder& d, const Doc& n, const ResourceSliceSpec& v);
};

template <>
struct Schema<BetaResourceSliceSpec> {
  static constexpr auto kFields = std::tuple{GPUPLANE_SLICE_SPEC_FIELDS(BetaResourceSliceSpec)};
  static void Check(Decoder& d, const Doc& n, const BetaResourceSliceSpec& v);
};
#undef GPUPLANE_SLICE_SPEC_FIELDS

#define GPUPLANE_OBJECT_FIELDS(T, SPEC)                                               \
  F("apiVersion", &T::api_version), F("kind", &T::kind), F("metadata", &T::metadata), \
      F("spec", &T::spec, {.required = (SPEC)})

template <>
struct Schema<ResourceSlice> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(ResourceSlice, true)};
};

template <>
struct Schema<BetaResourceSlice> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(BetaResourceSlice, true)};
};

// ---- ResourceClaim ----

template <>
struct Schema<CapacityRequirements> {
  static constexpr auto kFields =
      std::tuple{F("requests", &CapacityRequirements::requests, {.key = Fmt::kQualifiedName})};
};

#define GPUPLANE_EXACT_FIELDS                                                       \
  F("deviceClassName", &ExactDeviceRequest::device_class_name, kRequiredSubdomain), \
      F("selectors", &ExactDeviceRequest::selectors, {.max_items = 32}),            \
      F("allocationMode", &ExactDeviceRequest::allocation_mode),                    \
      F("count", &ExactDeviceRequest::count),                                       \
      F("tolerations", &ExactDeviceRequest::tolerations, {.max_items = 16}),        \
      F("capacity", &ExactDeviceRequest::capacity)

template <>
struct Schema<ExactDeviceRequest> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_EXACT_FIELDS, F("adminAccess", &ExactDeviceRequest::admin_access)};
  static void Check(Decoder& d, const Doc& n, const ExactDeviceRequest& v) {
    CheckExactRequest(d, n, v, RequestLevel::kRequest);
  }
};

template <>
struct Schema<DeviceSubRequest> {
  static constexpr auto kFields =
      std::tuple{F("name", &DeviceSubRequest::name, kRequiredDnsLabel), GPUPLANE_EXACT_FIELDS};
  static void Check(Decoder& d, const Doc& n, const DeviceSubRequest& v) {
    CheckExactRequest(d, n, v, RequestLevel::kSubrequest);
  }
};

template <>
struct Schema<DeviceRequest> {
  static constexpr auto kFields = std::tuple{
      F("name", &DeviceRequest::name, kRequiredDnsLabel), F("exactly", &DeviceRequest::exactly),
      F("firstAvailable", &DeviceRequest::first_available, {.max_items = 8})};
  static void Check(Decoder& d, const Doc& n, const DeviceRequest& v);
};

template <>
struct Schema<BetaDeviceRequest> {
  static constexpr auto kFields = std::tuple{
      F("name", &BetaDeviceRequest::name, kRequiredDnsLabel),
      F("deviceClassName", &ExactDeviceRequest::device_class_name, {.value = Fmt::kDnsSubdomain}),
      F("selectors", &ExactDeviceRequest::selectors, {.max_items = 32}),
      F("allocationMode", &ExactDeviceRequest::allocation_mode),
      F("count", &ExactDeviceRequest::count),
      F("tolerations", &ExactDeviceRequest::tolerations, {.max_items = 16}),
      F("capacity", &ExactDeviceRequest::capacity),
      F("adminAccess", &ExactDeviceRequest::admin_access),
      F("firstAvailable", &BetaDeviceRequest::first_available, {.max_items = 8})};
  static void Check(Decoder& d, const Doc& n, const BetaDeviceRequest& v);
};
#undef GPUPLANE_EXACT_FIELDS

template <>
struct Schema<DeviceConstraint> {
  static constexpr auto kFields = std::tuple{
      F("requests", &DeviceConstraint::requests),
      F("matchAttribute", &DeviceConstraint::match_attribute, {.value = Fmt::kQualifiedName}),
      F("distinctAttribute", &DeviceConstraint::distinct_attribute,
        {.value = Fmt::kQualifiedName})};
  static void Check(Decoder& d, const Doc& n, const DeviceConstraint& v);
};

template <>
struct Schema<DeviceClaimConfiguration> {
  static constexpr auto kFields =
      std::tuple{F("requests", &DeviceClaimConfiguration::requests),
                 F("opaque", &DeviceClaimConfiguration::opaque, kRequired)};
};

#define GPUPLANE_DEVICE_CLAIM_FIELDS(T)                     \
  F("requests", &T::requests, {.max_items = 32}),           \
      F("constraints", &T::constraints, {.max_items = 32}), \
      F("config", &T::config, {.max_items = 32})

template <>
struct Schema<DeviceClaim> {
  static constexpr auto kFields = std::tuple{GPUPLANE_DEVICE_CLAIM_FIELDS(DeviceClaim)};
  static void Check(Decoder& d, const Doc& n, const DeviceClaim& v) {
    CheckRequestReferences(d, n, v);
  }
};

template <>
struct Schema<BetaDeviceClaim> {
  static constexpr auto kFields = std::tuple{GPUPLANE_DEVICE_CLAIM_FIELDS(BetaDeviceClaim)};
  static void Check(Decoder& d, const Doc& n, const BetaDeviceClaim& v);
};
#undef GPUPLANE_DEVICE_CLAIM_FIELDS

template <>
struct Schema<ResourceClaimSpec> {
  static constexpr auto kFields = std::tuple{F("devices", &ResourceClaimSpec::devices)};
};

template <>
struct Schema<BetaResourceClaimSpec> {
  static constexpr auto kFields = std::tuple{F("devices", &BetaResourceClaimSpec::devices)};
};

template <>
struct Schema<DeviceRequestAllocationResult> {
  using R = DeviceRequestAllocationResult;
  static constexpr auto kFields =
      std::tuple{F("request", &R::request, kRequired),
                 F("driver", &R::driver, kDriver),
                 F("pool", &R::pool, {.required = true, .value = Fmt::kPoolName}),
                 F("device", &R::device, kRequiredDnsLabel),
                 F("adminAccess", &R::admin_access),
                 F("tolerations", &R::tolerations, {.max_items = 16}),
                 F("shareID", &R::share_id),
                 F("consumedCapacity", &R::consumed_capacity, {.key = Fmt::kQualifiedName}),
                 F("bindingConditions", &R::binding_conditions, {.max_items = 4}),
                 F("bindingFailureConditions", &R::binding_failure_conditions, {.max_items = 4})};
};

template <>
struct Schema<DeviceAllocationConfiguration> {
  static constexpr auto kFields =
      std::tuple{F("source", &DeviceAllocationConfiguration::source, kRequired),
                 F("requests", &DeviceAllocationConfiguration::requests),
                 F("opaque", &DeviceAllocationConfiguration::opaque, kRequired)};
  static void Check(Decoder& d, const Doc& n, const DeviceAllocationConfiguration& v);
};

template <>
struct Schema<DeviceAllocationResult> {
  static constexpr auto kFields =
      std::tuple{F("results", &DeviceAllocationResult::results, {.max_items = 32}),
                 F("config", &DeviceAllocationResult::config, {.max_items = 64})};
};

template <>
struct Schema<AllocationResult> {
  static constexpr auto kFields = std::tuple{
      F("devices", &AllocationResult::devices), F("nodeSelector", &AllocationResult::node_selector),
      F("allocationTimestamp", &AllocationResult::allocation_timestamp)};
};

template <>
struct Schema<ResourceClaimConsumerReference> {
  using R = ResourceClaimConsumerReference;
  static constexpr auto kFields =
      std::tuple{F("apiGroup", &R::api_group), F("resource", &R::resource, kRequired),
                 F("name", &R::name, kRequired), F("uid", &R::uid, kRequired)};
};

template <>
struct Schema<ResourceClaimStatus> {
  static constexpr auto kFields =
      std::tuple{F("allocation", &ResourceClaimStatus::allocation),
                 F("reservedFor", &ResourceClaimStatus::reserved_for, {.max_items = 256})};
  static constexpr std::array<std::string_view, 1> kPassthrough = {"devices"};
};

template <>
struct Schema<ResourceClaim> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(ResourceClaim, true), F("status", &ResourceClaim::status)};
};

template <>
struct Schema<BetaResourceClaim> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(BetaResourceClaim, true),
                                             F("status", &BetaResourceClaim::status)};
};

template <>
struct Schema<ResourceClaimTemplateSpec> {
  static constexpr auto kFields =
      std::tuple{F("metadata", &ResourceClaimTemplateSpec::metadata),
                 F("spec", &ResourceClaimTemplateSpec::spec, kRequired)};
};

template <>
struct Schema<BetaResourceClaimTemplateSpec> {
  static constexpr auto kFields =
      std::tuple{F("metadata", &BetaResourceClaimTemplateSpec::metadata),
                 F("spec", &BetaResourceClaimTemplateSpec::spec, kRequired)};
};

template <>
struct Schema<ResourceClaimTemplate> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(ResourceClaimTemplate, true)};
};

template <>
struct Schema<BetaResourceClaimTemplate> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(BetaResourceClaimTemplate, true)};
};

// ---- core/v1 and scheduling ----

template <>
struct Schema<PodResourceClaim> {
  static constexpr auto kFields = std::tuple{
      F("name", &PodResourceClaim::name, kRequiredDnsLabel),
      F("resourceClaimName", &PodResourceClaim::resource_claim_name, {.value = Fmt::kDnsSubdomain}),
      F("resourceClaimTemplateName", &PodResourceClaim::resource_claim_template_name,
        {.value = Fmt::kDnsSubdomain})};
  static void Check(Decoder& d, const Doc& n, const PodResourceClaim& v);
};

template <>
struct Schema<ResourceClaimRef> {
  static constexpr auto kFields = std::tuple{F("name", &ResourceClaimRef::name, kRequired),
                                             F("request", &ResourceClaimRef::request)};
};

template <>
struct Schema<ResourceRequirements> {
  static constexpr auto kFields =
      std::tuple{F("requests", &ResourceRequirements::requests, kResourceMap),
                 F("limits", &ResourceRequirements::limits, kResourceMap),
                 F("claims", &ResourceRequirements::claims)};
};

template <>
struct Schema<Container> {
  static constexpr auto kFields =
      std::tuple{F("name", &Container::name, kRequiredDnsLabel), F("image", &Container::image),
                 F("resources", &Container::resources)};
  static constexpr std::array<std::string_view, 22> kPassthrough = {"command",
                                                                    "args",
                                                                    "env",
                                                                    "envFrom",
                                                                    "ports",
                                                                    "volumeMounts",
                                                                    "volumeDevices",
                                                                    "workingDir",
                                                                    "livenessProbe",
                                                                    "readinessProbe",
                                                                    "startupProbe",
                                                                    "lifecycle",
                                                                    "terminationMessagePath",
                                                                    "terminationMessagePolicy",
                                                                    "imagePullPolicy",
                                                                    "securityContext",
                                                                    "stdin",
                                                                    "stdinOnce",
                                                                    "tty",
                                                                    "resizePolicy",
                                                                    "restartPolicy",
                                                                    "restartPolicyRules"};
};

template <>
struct Schema<WorkloadReference> {
  static constexpr auto kFields =
      std::tuple{F("name", &WorkloadReference::name, kRequiredSubdomain),
                 F("podGroup", &WorkloadReference::pod_group, kRequiredDnsLabel),
                 F("podGroupReplicaKey", &WorkloadReference::pod_group_replica_key, kDnsLabel)};
};

template <>
struct Schema<PreferredSchedulingTerm> {
  static constexpr auto kFields =
      std::tuple{F("weight", &PreferredSchedulingTerm::weight, kRequired),
                 F("preference", &PreferredSchedulingTerm::preference, kRequired)};
  static void Check(Decoder& d, const Doc& n, const PreferredSchedulingTerm& v);
};

template <>
struct Schema<NodeAffinity> {
  static constexpr auto kFields =
      std::tuple{F("requiredDuringSchedulingIgnoredDuringExecution", &NodeAffinity::required),
                 F("preferredDuringSchedulingIgnoredDuringExecution", &NodeAffinity::preferred)};
};

template <>
struct Schema<LabelSelectorRequirement> {
  static constexpr auto kFields = std::tuple{
      F("key", &LabelSelectorRequirement::key, {.required = true, .value = Fmt::kLabelKey}),
      F("operator", &LabelSelectorRequirement::op, kRequired),
      F("values", &LabelSelectorRequirement::values, {.value = Fmt::kLabelValue})};
  static void Check(Decoder& d, const Doc& n, const LabelSelectorRequirement& v);
};

template <>
struct Schema<LabelSelector> {
  static constexpr auto kFields =
      std::tuple{F("matchLabels", &LabelSelector::match_labels,
                   {.value = Fmt::kLabelValue, .key = Fmt::kLabelKey}),
                 F("matchExpressions", &LabelSelector::match_expressions)};
};

template <>
struct Schema<PodAffinityTerm> {
  static constexpr auto kFields = std::tuple{
      F("labelSelector", &PodAffinityTerm::label_selector),
      F("namespaces", &PodAffinityTerm::namespaces, {.value = Fmt::kDnsLabel}),
      F("topologyKey", &PodAffinityTerm::topology_key, {.required = true, .value = Fmt::kLabelKey}),
      F("namespaceSelector", &PodAffinityTerm::namespace_selector)};
  static constexpr std::array<std::string_view, 2> kPassthrough = {"matchLabelKeys",
                                                                   "mismatchLabelKeys"};
};

template <>
struct Schema<WeightedPodAffinityTerm> {
  static constexpr auto kFields =
      std::tuple{F("weight", &WeightedPodAffinityTerm::weight, kRequired),
                 F("podAffinityTerm", &WeightedPodAffinityTerm::term, kRequired)};
  static void Check(Decoder& d, const Doc& n, const WeightedPodAffinityTerm& v);
};

template <>
struct Schema<PodAffinity> {
  static constexpr auto kFields =
      std::tuple{F("requiredDuringSchedulingIgnoredDuringExecution", &PodAffinity::required),
                 F("preferredDuringSchedulingIgnoredDuringExecution", &PodAffinity::preferred)};
};

template <>
struct Schema<Affinity> {
  static constexpr auto kFields = std::tuple{F("nodeAffinity", &Affinity::node_affinity),
                                             F("podAffinity", &Affinity::pod_affinity),
                                             F("podAntiAffinity", &Affinity::pod_anti_affinity)};
};

template <>
struct Schema<TopologySpreadConstraint> {
  static constexpr auto kFields = std::tuple{
      F("maxSkew", &TopologySpreadConstraint::max_skew, kRequired),
      F("topologyKey", &TopologySpreadConstraint::topology_key,
        {.required = true, .value = Fmt::kLabelKey}),
      F("whenUnsatisfiable", &TopologySpreadConstraint::when_unsatisfiable, kRequired),
      F("labelSelector", &TopologySpreadConstraint::label_selector),
      F("minDomains", &TopologySpreadConstraint::min_domains),
      F("nodeAffinityPolicy", &TopologySpreadConstraint::node_affinity_policy),
      F("nodeTaintsPolicy", &TopologySpreadConstraint::node_taints_policy),
      F("matchLabelKeys", &TopologySpreadConstraint::match_label_keys, {.value = Fmt::kLabelKey})};
  static void Check(Decoder& d, const Doc& n, const TopologySpreadConstraint& v);
};

template <>
struct Schema<PersistentVolumeClaimVolumeSource> {
  static constexpr auto kFields =
      std::tuple{F("claimName", &PersistentVolumeClaimVolumeSource::claim_name, kRequiredSubdomain),
                 F("readOnly", &PersistentVolumeClaimVolumeSource::read_only)};
};

// Every volume source of core/v1 VolumeSource but persistentVolumeClaim (Kubernetes 1.35).
inline constexpr std::array<std::string_view, 29> kOtherVolumeSources = {"hostPath",
                                                                         "emptyDir",
                                                                         "gcePersistentDisk",
                                                                         "awsElasticBlockStore",
                                                                         "gitRepo",
                                                                         "secret",
                                                                         "nfs",
                                                                         "iscsi",
                                                                         "glusterfs",
                                                                         "rbd",
                                                                         "flexVolume",
                                                                         "cinder",
                                                                         "cephfs",
                                                                         "flocker",
                                                                         "downwardAPI",
                                                                         "fc",
                                                                         "azureFile",
                                                                         "configMap",
                                                                         "vsphereVolume",
                                                                         "quobyte",
                                                                         "azureDisk",
                                                                         "photonPersistentDisk",
                                                                         "projected",
                                                                         "portworxVolume",
                                                                         "scaleIO",
                                                                         "storageos",
                                                                         "csi",
                                                                         "ephemeral",
                                                                         "image"};

template <>
struct Schema<Volume> {
  static constexpr auto kFields =
      std::tuple{F("name", &Volume::name, kRequiredDnsLabel),
                 F("persistentVolumeClaim", &Volume::persistent_volume_claim)};
  static constexpr auto kPassthrough = kOtherVolumeSources;
  static void Check(Decoder& d, const Doc& n, const Volume& v);
};

template <>
struct Schema<PodSpec> {
  static constexpr auto kFields =
      std::tuple{F("schedulerName", &PodSpec::scheduler_name),
                 F("nodeName", &PodSpec::node_name),
                 F("priority", &PodSpec::priority),
                 F("priorityClassName", &PodSpec::priority_class_name),
                 F("resourceClaims", &PodSpec::resource_claims),
                 F("containers", &PodSpec::containers),
                 F("initContainers", &PodSpec::init_containers),
                 F("tolerations", &PodSpec::tolerations),
                 F("nodeSelector", &PodSpec::node_selector),
                 F("affinity", &PodSpec::affinity),
                 F("topologySpreadConstraints", &PodSpec::topology_spread_constraints),
                 F("workloadRef", &PodSpec::workload_ref),
                 F("volumes", &PodSpec::volumes),
                 F("terminationGracePeriodSeconds", &PodSpec::termination_grace_period_seconds)};
  static constexpr std::array<std::string_view, 27> kPassthrough = {"restartPolicy",
                                                                    "dnsPolicy",
                                                                    "serviceAccountName",
                                                                    "serviceAccount",
                                                                    "securityContext",
                                                                    "hostNetwork",
                                                                    "hostPID",
                                                                    "hostIPC",
                                                                    "imagePullSecrets",
                                                                    "enableServiceLinks",
                                                                    "preemptionPolicy",
                                                                    "runtimeClassName",
                                                                    "overhead",
                                                                    "schedulingGates",
                                                                    "subdomain",
                                                                    "hostname",
                                                                    "activeDeadlineSeconds",
                                                                    "automountServiceAccountToken",
                                                                    "dnsConfig",
                                                                    "readinessGates",
                                                                    "shareProcessNamespace",
                                                                    "ephemeralContainers",
                                                                    "os",
                                                                    "hostAliases",
                                                                    "setHostnameAsFQDN",
                                                                    "hostUsers",
                                                                    "resources"};
  static void Check(Decoder& d, const Doc& n, const PodSpec& v);
};

template <>
struct Schema<ContainerStatus> {
  static constexpr auto kFields = std::tuple{F("name", &ContainerStatus::name),
                                             F("containerID", &ContainerStatus::container_id)};
  static constexpr std::array<std::string_view, 13> kPassthrough = {
      "ready",     "restartCount", "image",     "imageID",
      "started",   "state",        "lastState", "allocatedResources",
      "resources", "volumeMounts", "user",      "allocatedResourcesStatus",
      "stopSignal"};
};

template <>
struct Schema<PodResourceClaimStatus> {
  static constexpr auto kFields =
      std::tuple{F("name", &PodResourceClaimStatus::name, kRequired),
                 F("resourceClaimName", &PodResourceClaimStatus::resource_claim_name)};
};

template <>
struct Schema<PodStatus> {
  static constexpr auto kFields = std::tuple{
      F("phase", &PodStatus::phase), F("containerStatuses", &PodStatus::container_statuses),
      F("initContainerStatuses", &PodStatus::init_container_statuses),
      F("resourceClaimStatuses", &PodStatus::resource_claim_statuses)};
  static constexpr std::array<std::string_view, 13> kPassthrough = {"conditions",
                                                                    "hostIP",
                                                                    "hostIPs",
                                                                    "podIP",
                                                                    "podIPs",
                                                                    "startTime",
                                                                    "qosClass",
                                                                    "ephemeralContainerStatuses",
                                                                    "message",
                                                                    "reason",
                                                                    "nominatedNodeName",
                                                                    "resize",
                                                                    "observedGeneration"};
};

template <>
struct Schema<Pod> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(Pod, true), F("status", &Pod::status)};
};

template <>
struct Schema<NodeSpec> {
  static constexpr auto kFields =
      std::tuple{F("taints", &NodeSpec::taints), F("unschedulable", &NodeSpec::unschedulable)};
  static constexpr std::array<std::string_view, 5> kPassthrough = {
      "podCIDR", "podCIDRs", "providerID", "configSource", "externalID"};
};

template <>
struct Schema<NodeStatus> {
  static constexpr auto kFields =
      std::tuple{F("capacity", &NodeStatus::capacity, kResourceMap),
                 F("allocatable", &NodeStatus::allocatable, kResourceMap)};
  static constexpr std::array<std::string_view, 11> kPassthrough = {
      "conditions",      "addresses", "daemonEndpoints", "nodeInfo", "images", "volumesInUse",
      "volumesAttached", "config",    "runtimeHandlers", "features", "phase"};
};

template <>
struct Schema<Node> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(Node, false), F("status", &Node::status)};
};

template <>
struct Schema<Namespace> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(Namespace, false), F("status", &Namespace::status)};
  static void Check(Decoder& d, const Doc& n, const Namespace& v);
};

template <>
struct Schema<PodGroupSpec> {
  static constexpr auto kFields = std::tuple{
      F("minMember", &PodGroupSpec::min_member, kRequired),
      F("scheduleTimeoutSeconds", &PodGroupSpec::schedule_timeout_seconds),
      F("minResources", &PodGroupSpec::min_resources, kResourceMap),
      F("queue", &PodGroupSpec::queue), F("priorityClassName", &PodGroupSpec::priority_class_name)};
  static void Check(Decoder& d, const Doc& n, const PodGroupSpec& v);
};

template <>
struct Schema<PodGroup> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(PodGroup, true), F("status", &PodGroup::status)};
};
template <>
struct Schema<GangSchedulingPolicy> {
  static constexpr auto kFields =
      std::tuple{F("minCount", &GangSchedulingPolicy::min_count, kRequired)};
  static void Check(Decoder& d, const Doc& n, const GangSchedulingPolicy& v);
};

template <>
struct Schema<PodGroupPolicy> {
  static constexpr auto kFields =
      std::tuple{F("basic", &PodGroupPolicy::basic), F("gang", &PodGroupPolicy::gang)};
  static void Check(Decoder& d, const Doc& n, const PodGroupPolicy& v);
};

template <>
struct Schema<WorkloadPodGroup> {
  static constexpr auto kFields = std::tuple{F("name", &WorkloadPodGroup::name, kRequiredDnsLabel),
                                             F("policy", &WorkloadPodGroup::policy, kRequired)};
};

template <>
struct Schema<TypedLocalObjectReference> {
  static constexpr auto kFields =
      std::tuple{F("apiGroup", &TypedLocalObjectReference::api_group),
                 F("kind", &TypedLocalObjectReference::kind, kRequired),
                 F("name", &TypedLocalObjectReference::name, kRequiredSubdomain)};
};

template <>
struct Schema<WorkloadSpec> {
  static constexpr auto kFields =
      std::tuple{F("controllerRef", &WorkloadSpec::controller_ref),
                 F("podGroups", &WorkloadSpec::pod_groups, {.required = true, .max_items = 8})};
  static void Check(Decoder& d, const Doc& n, const WorkloadSpec& v);
};

template <>
struct Schema<Workload> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(Workload, true)};
};

// ---- core/v1 PersistentVolumeClaim, PersistentVolume; storage.k8s.io/v1 StorageClass ----

template <>
struct Schema<PersistentVolumeClaimSpec> {
  static constexpr auto kFields =
      std::tuple{F("storageClassName", &PersistentVolumeClaimSpec::storage_class_name),
                 F("volumeName", &PersistentVolumeClaimSpec::volume_name),
                 F("selector", &PersistentVolumeClaimSpec::selector)};
  static constexpr std::array<std::string_view, 6> kPassthrough = {
      "accessModes", "resources",     "volumeMode",
      "dataSource",  "dataSourceRef", "volumeAttributesClassName"};
};

template <>
struct Schema<PersistentVolumeClaimStatus> {
  static constexpr auto kFields = std::tuple{F("phase", &PersistentVolumeClaimStatus::phase)};
  static constexpr std::array<std::string_view, 7> kPassthrough = {
      "accessModes",
      "capacity",
      "conditions",
      "allocatedResources",
      "allocatedResourceStatuses",
      "currentVolumeAttributesClassName",
      "modifyVolumeStatus"};
};

template <>
struct Schema<PersistentVolumeClaim> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(PersistentVolumeClaim, true),
                                             F("status", &PersistentVolumeClaim::status)};
};

template <>
struct Schema<VolumeNodeAffinity> {
  static constexpr auto kFields = std::tuple{F("required", &VolumeNodeAffinity::required)};
};

template <>
struct Schema<CSIPersistentVolumeSource> {
  static constexpr auto kFields =
      std::tuple{F("driver", &CSIPersistentVolumeSource::driver, kRequired),
                 F("volumeHandle", &CSIPersistentVolumeSource::volume_handle, kRequired)};
  static constexpr std::array<std::string_view, 8> kPassthrough = {"readOnly",
                                                                   "fsType",
                                                                   "volumeAttributes",
                                                                   "controllerPublishSecretRef",
                                                                   "nodeStageSecretRef",
                                                                   "nodePublishSecretRef",
                                                                   "controllerExpandSecretRef",
                                                                   "nodeExpandSecretRef"};
  static void Check(Decoder& d, const Doc& n, const CSIPersistentVolumeSource& v);
};

template <>
struct Schema<PersistentVolumeSpec> {
  static constexpr auto kFields =
      std::tuple{F("storageClassName", &PersistentVolumeSpec::storage_class_name),
                 F("nodeAffinity", &PersistentVolumeSpec::node_affinity),
                 F("csi", &PersistentVolumeSpec::csi)};
  // What a volume holds and how, and every other PersistentVolumeSource (Kubernetes 1.35).
  static constexpr std::array<std::string_view, 28> kPassthrough = {"capacity",
                                                                    "accessModes",
                                                                    "claimRef",
                                                                    "persistentVolumeReclaimPolicy",
                                                                    "mountOptions",
                                                                    "volumeMode",
                                                                    "volumeAttributesClassName",
                                                                    "gcePersistentDisk",
                                                                    "awsElasticBlockStore",
                                                                    "hostPath",
                                                                    "glusterfs",
                                                                    "nfs",
                                                                    "rbd",
                                                                    "iscsi",
                                                                    "cinder",
                                                                    "cephfs",
                                                                    "fc",
                                                                    "flocker",
                                                                    "flexVolume",
                                                                    "azureFile",
                                                                    "vsphereVolume",
                                                                    "quobyte",
                                                                    "azureDisk",
                                                                    "photonPersistentDisk",
                                                                    "portworxVolume",
                                                                    "scaleIO",
                                                                    "local",
                                                                    "storageos"};
};

template <>
struct Schema<PersistentVolumeStatus> {
  static constexpr auto kFields = std::tuple{F("phase", &PersistentVolumeStatus::phase)};
  static constexpr std::array<std::string_view, 3> kPassthrough = {"message", "reason",
                                                                   "lastPhaseTransitionTime"};
};

template <>
struct Schema<PersistentVolume> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(PersistentVolume, true),
                                             F("status", &PersistentVolume::status)};
};

template <>
struct Schema<TopologySelectorRequirement> {
  static constexpr auto kFields =
      std::tuple{F("key", &TopologySelectorRequirement::key, kRequired),
                 F("values", &TopologySelectorRequirement::values, kRequired)};
};

template <>
struct Schema<TopologySelectorTerm> {
  static constexpr auto kFields =
      std::tuple{F("matchLabelExpressions", &TopologySelectorTerm::match_label_expressions)};
};

template <>
struct Schema<StorageClass> {
  static constexpr auto kFields =
      std::tuple{F("apiVersion", &StorageClass::api_version),
                 F("kind", &StorageClass::kind),
                 F("metadata", &StorageClass::metadata),
                 F("provisioner", &StorageClass::provisioner, kRequired),
                 F("volumeBindingMode", &StorageClass::volume_binding_mode),
                 F("allowedTopologies", &StorageClass::allowed_topologies)};
  static constexpr std::array<std::string_view, 4> kPassthrough = {
      "parameters", "reclaimPolicy", "mountOptions", "allowVolumeExpansion"};
  static void Check(Decoder& d, const Doc& n, const StorageClass& v);
};

template <>
struct Schema<VolumeNodeResources> {
  static constexpr auto kFields = std::tuple{F("count", &VolumeNodeResources::count)};
};

template <>
struct Schema<CSINodeDriver> {
  static constexpr auto kFields = std::tuple{F("name", &CSINodeDriver::name, kRequired),
                                             F("nodeID", &CSINodeDriver::node_id, kRequired),
                                             F("topologyKeys", &CSINodeDriver::topology_keys),
                                             F("allocatable", &CSINodeDriver::allocatable)};
  static void Check(Decoder& d, const Doc& n, const CSINodeDriver& v);
};

template <>
struct Schema<CSINodeSpec> {
  static constexpr auto kFields = std::tuple{F("drivers", &CSINodeSpec::drivers)};
  static void Check(Decoder& d, const Doc& n, const CSINodeSpec& v);
};

template <>
struct Schema<CSINode> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(CSINode, true)};
};

template <>
struct Schema<CSIDriverSpec> {
  static constexpr auto kFields =
      std::tuple{F("storageCapacity", &CSIDriverSpec::storage_capacity),
                 F("fsGroupPolicy", &CSIDriverSpec::fs_group_policy),
                 F("volumeLifecycleModes", &CSIDriverSpec::volume_lifecycle_modes),
                 F("nodeAllocatableUpdatePeriodSeconds",
                   &CSIDriverSpec::node_allocatable_update_period_seconds)};
  static constexpr std::array<std::string_view, 6> kPassthrough = {
      "attachRequired",    "podInfoOnMount", "tokenRequests",
      "requiresRepublish", "seLinuxMount",   "serviceAccountTokenInSecrets"};
  static void Check(Decoder& d, const Doc& n, const CSIDriverSpec& v);
};

template <>
struct Schema<CSIDriver> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(CSIDriver, false)};
};

// A CSIStorageCapacity has no spec: its fields are at the top level.
template <>
struct Schema<CSIStorageCapacity> {
  static constexpr auto kFields =
      std::tuple{F("apiVersion", &CSIStorageCapacity::api_version),
                 F("kind", &CSIStorageCapacity::kind),
                 F("metadata", &CSIStorageCapacity::metadata),
                 F("storageClassName", &CSIStorageCapacity::storage_class_name, kRequiredSubdomain),
                 F("nodeTopology", &CSIStorageCapacity::node_topology),
                 F("capacity", &CSIStorageCapacity::capacity),
                 F("maximumVolumeSize", &CSIStorageCapacity::maximum_volume_size)};
  static void Check(Decoder& d, const Doc& n, const CSIStorageCapacity& v);
};

template <>
struct Schema<VolumeAttachmentSource> {
  static constexpr auto kFields =
      std::tuple{F("persistentVolumeName", &VolumeAttachmentSource::persistent_volume_name)};
  static constexpr std::array<std::string_view, 1> kPassthrough = {"inlineVolumeSpec"};
  static void Check(Decoder& d, const Doc& n, const VolumeAttachmentSource& v);
};

template <>
struct Schema<VolumeAttachmentSpec> {
  static constexpr auto kFields =
      std::tuple{F("attacher", &VolumeAttachmentSpec::attacher, kRequired),
                 F("nodeName", &VolumeAttachmentSpec::node_name, kRequiredSubdomain),
                 F("source", &VolumeAttachmentSpec::source, kRequired)};
  static void Check(Decoder& d, const Doc& n, const VolumeAttachmentSpec& v);
};

template <>
struct Schema<VolumeAttachmentStatus> {
  static constexpr auto kFields = std::tuple{F("attached", &VolumeAttachmentStatus::attached)};
  static constexpr std::array<std::string_view, 3> kPassthrough = {"attachmentMetadata",
                                                                   "attachError", "detachError"};
};

template <>
struct Schema<VolumeAttachment> {
  static constexpr auto kFields = std::tuple{GPUPLANE_OBJECT_FIELDS(VolumeAttachment, true),
                                             F("status", &VolumeAttachment::status)};
};

// ---- gpuplane.io/v1alpha1 ----

template <>
struct Schema<QueueResource> {
  static constexpr auto kFields =
      std::tuple{F("guarantee", &QueueResource::guarantee), F("limit", &QueueResource::limit),
                 F("weight", &QueueResource::weight)};
  static void Check(Decoder& d, const Doc& n, const QueueResource& v);
};

template <>
struct Schema<QueueSpec> {
  static constexpr auto kFields =
      std::tuple{F("parent", &QueueSpec::parent, {.value = Fmt::kDnsSubdomain}),
                 F("priority", &QueueSpec::priority),
                 F("resources", &QueueSpec::resources),
                 F("namespaces", &QueueSpec::namespaces, {.value = Fmt::kDnsLabel}),
                 F("minRuntime", &QueueSpec::min_runtime),
                 F("guaranteeWindow", &QueueSpec::guarantee_window)};
  static void Check(Decoder& d, const Doc& n, const QueueSpec& v);
};

template <>
struct Schema<Queue> {
  static constexpr auto kFields =
      std::tuple{GPUPLANE_OBJECT_FIELDS(Queue, true), F("status", &Queue::status)};
};
#undef GPUPLANE_OBJECT_FIELDS

}  // namespace gpuplane::api::internal

#endif  // GPUPLANE_API_INTERNAL_SCHEMAS_H_
