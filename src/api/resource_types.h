// resource.k8s.io v1 objects (DeviceClass, ResourceSlice, ResourceClaim,
// ResourceClaimTemplate). v1beta1 and v1beta2 input is converted to these on read.
// Plain value types; copyable; not synchronized.
#ifndef GPUPLANE_API_RESOURCE_TYPES_H_
#define GPUPLANE_API_RESOURCE_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/doc.h"
#include "api/meta.h"
#include "api/quantity.h"

namespace gpuplane::api {

inline constexpr char kResourceApiVersion[] = "resource.k8s.io/v1";

struct CelDeviceSelector {
  std::string expression;
  bool operator==(const CelDeviceSelector&) const = default;
};

struct DeviceSelector {
  std::optional<CelDeviceSelector> cel;
  bool operator==(const DeviceSelector&) const = default;
};

struct OpaqueDeviceConfiguration {
  std::string driver;
  Doc parameters;  // arbitrary JSON object, kept as written
  bool operator==(const OpaqueDeviceConfiguration&) const = default;
};

struct DeviceClassConfiguration {
  std::optional<OpaqueDeviceConfiguration> opaque;
  bool operator==(const DeviceClassConfiguration&) const = default;
};

struct DeviceClassSpec {
  std::vector<DeviceSelector> selectors;
  std::vector<DeviceClassConfiguration> config;
  std::string extended_resource_name;
  bool operator==(const DeviceClassSpec&) const = default;
};

struct DeviceClass {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  DeviceClassSpec spec;
  bool operator==(const DeviceClass&) const = default;
};

// Exactly one of the four values is set.
struct DeviceAttribute {
  std::optional<int64_t> int_value;
  std::optional<bool> bool_value;
  std::optional<std::string> string_value;
  std::optional<std::string> version_value;
  bool operator==(const DeviceAttribute&) const = default;
};

struct CapacityRequestPolicyRange {
  Quantity min;
  std::optional<Quantity> max;
  std::optional<Quantity> step;
  bool operator==(const CapacityRequestPolicyRange&) const = default;
};

struct CapacityRequestPolicy {
  std::optional<Quantity> default_value;
  std::vector<Quantity> valid_values;
  std::optional<CapacityRequestPolicyRange> valid_range;
  bool operator==(const CapacityRequestPolicy&) const = default;
};

struct DeviceCapacity {
  Quantity value;
  std::optional<CapacityRequestPolicy> request_policy;
  bool operator==(const DeviceCapacity&) const = default;
};

struct Counter {
  Quantity value;
  bool operator==(const Counter&) const = default;
};

struct CounterSet {
  std::string name;
  std::map<std::string, Counter> counters;
  bool operator==(const CounterSet&) const = default;
};

struct DeviceCounterConsumption {
  std::string counter_set;
  std::map<std::string, Counter> counters;
  bool operator==(const DeviceCounterConsumption&) const = default;
};

struct Device {
  std::string name;
  // Keys as written (domain optional); std::less<> finds by string_view.
  std::map<std::string, DeviceAttribute, std::less<>> attributes;
  std::map<std::string, DeviceCapacity, std::less<>> capacity;
  std::vector<DeviceCounterConsumption> consumes_counters;
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::vector<Taint> taints;
  std::optional<bool> binds_to_node;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::optional<bool> allow_multiple_allocations;
  bool operator==(const Device&) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
  bool operator==(const ResourcePool&) const = default;
};

struct ResourceSliceSpec {
  std::string driver;
  ResourcePool pool;
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::optional<bool> per_device_node_selection;
  std::vector<CounterSet> shared_counters;
  std::vector<Device> devices;
  bool operator==(const ResourceSliceSpec&) const = default;
};

struct ResourceSlice {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  ResourceSliceSpec spec;
  bool operator==(const ResourceSlice&) const = default;
};

struct CapacityRequirements {
  std::map<std::string, Quantity> requests;
  bool operator==(const CapacityRequirements&) const = default;
};

// The fields of a request that selects devices of one class (v1 `exactly`, and each
// firstAvailable subrequest, which cannot set adminAccess).
struct ExactDeviceRequest {
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  std::string allocation_mode;  // ExactCount (default) or All
  std::optional<int64_t> count;
  std::optional<bool> admin_access;
  std::vector<Toleration> tolerations;
  std::optional<CapacityRequirements> capacity;
  bool operator==(const ExactDeviceRequest&) const = default;
};

// A firstAvailable entry: a name plus the exact-request fields, flat as in the API.
struct DeviceSubRequest : ExactDeviceRequest {
  std::string name;
  bool operator==(const DeviceSubRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactDeviceRequest> exactly;
  std::vector<DeviceSubRequest> first_available;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;
  std::optional<std::string> match_attribute;
  std::optional<std::string> distinct_attribute;
  bool operator==(const DeviceConstraint&) const = default;
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;
  std::optional<OpaqueDeviceConfiguration> opaque;
  bool operator==(const DeviceClaimConfiguration&) const = default;
};

struct DeviceClaim {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
  bool operator==(const DeviceClaim&) const = default;
};

struct ResourceClaimSpec {
  DeviceClaim devices;
  bool operator==(const ResourceClaimSpec&) const = default;
};

struct DeviceRequestAllocationResult {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<bool> admin_access;
  std::vector<Toleration> tolerations;
  std::optional<std::string> share_id;
  std::map<std::string, Quantity> consumed_capacity;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  bool operator==(const DeviceRequestAllocationResult&) const = default;
};

struct DeviceAllocationConfiguration {
  std::string source;  // FromClass or FromClaim
  std::vector<std::string> requests;
  std::optional<OpaqueDeviceConfiguration> opaque;
  bool operator==(const DeviceAllocationConfiguration&) const = default;
};

struct DeviceAllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<DeviceAllocationConfiguration> config;
  bool operator==(const DeviceAllocationResult&) const = default;
};

struct AllocationResult {
  DeviceAllocationResult devices;
  std::optional<NodeSelector> node_selector;
  std::string allocation_timestamp;
  bool operator==(const AllocationResult&) const = default;
};

struct ResourceClaimConsumerReference {
  std::string api_group;
  std::string resource;
  std::string name;
  std::string uid;
  bool operator==(const ResourceClaimConsumerReference&) const = default;
};

struct ResourceClaimStatus {
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reserved_for;
  Passthrough extra;  // devices[] written by drivers
  bool operator==(const ResourceClaimStatus&) const = default;
};

struct ResourceClaim {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  ResourceClaimStatus status;
  bool operator==(const ResourceClaim&) const = default;
};

struct ResourceClaimTemplateSpec {
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  bool operator==(const ResourceClaimTemplateSpec&) const = default;
};

struct ResourceClaimTemplate {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  ResourceClaimTemplateSpec spec;
  bool operator==(const ResourceClaimTemplate&) const = default;
};

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_RESOURCE_TYPES_H_
