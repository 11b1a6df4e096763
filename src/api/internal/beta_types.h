// The resource.k8s.io/v1beta1 shapes that differ from v1 (device fields wrapped in `basic`,
// request fields directly on the request). Read, then converted to v1. Internal to api/.
// Plain value types; thread-safe like any value.
#ifndef GPUPLANE_API_INTERNAL_BETA_TYPES_H_
#define GPUPLANE_API_INTERNAL_BETA_TYPES_H_

#include <optional>
#include <string>
#include <vector>

#include "api/resource_types.h"

namespace gpuplane::api::internal {

struct BetaBasicDevice : Device {
  bool operator==(const BetaBasicDevice&) const = default;
};

struct BetaDevice {
  std::string name;
  std::optional<BetaBasicDevice> basic;
  bool operator==(const BetaDevice&) const = default;
};

struct BetaResourceSliceSpec {
  std::string driver;
  ResourcePool pool;
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::optional<bool> per_device_node_selection;
  std::vector<CounterSet> shared_counters;
  std::vector<BetaDevice> devices;
  bool operator==(const BetaResourceSliceSpec&) const = default;
};

struct BetaResourceSlice {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  BetaResourceSliceSpec spec;
  bool operator==(const BetaResourceSlice&) const = default;
};

struct BetaDeviceRequest : ExactDeviceRequest {
  std::string name;
  std::vector<DeviceSubRequest> first_available;
  bool operator==(const BetaDeviceRequest&) const = default;
};

struct BetaDeviceClaim {
  std::vector<BetaDeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
  bool operator==(const BetaDeviceClaim&) const = default;
};

struct BetaResourceClaimSpec {
  BetaDeviceClaim devices;
  bool operator==(const BetaResourceClaimSpec&) const = default;
};

struct BetaResourceClaim {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  BetaResourceClaimSpec spec;
  ResourceClaimStatus status;
  bool operator==(const BetaResourceClaim&) const = default;
};

struct BetaResourceClaimTemplateSpec {
  ObjectMeta metadata;
  BetaResourceClaimSpec spec;
  bool operator==(const BetaResourceClaimTemplateSpec&) const = default;
};

struct BetaResourceClaimTemplate {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  BetaResourceClaimTemplateSpec spec;
  bool operator==(const BetaResourceClaimTemplate&) const = default;
};

ResourceSlice ToV1(BetaResourceSlice in);
ResourceClaimSpec ToV1(BetaResourceClaimSpec in);
ResourceClaim ToV1(BetaResourceClaim in);
ResourceClaimTemplate ToV1(BetaResourceClaimTemplate in);

}  // namespace gpuplane::api::internal

#endif  // GPUPLANE_API_INTERNAL_BETA_TYPES_H_
