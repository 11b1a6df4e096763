// Conversion of resource.k8s.io/v1beta1 shapes to v1 (v1beta2 already has the v1 shape).
#include "api/internal/beta_types.h"

namespace gpuplane::api::internal {

ResourceSlice ToV1(BetaResourceSlice in) {
  ResourceSlice out;
  out.api_version = kResourceApiVersion;
  out.kind = "ResourceSlice";
  out.metadata = std::move(in.metadata);
  ResourceSliceSpec& s = out.spec;
  s.driver = std::move(in.spec.driver);
  s.pool = std::move(in.spec.pool);
  s.node_name = std::move(in.spec.node_name);
  s.node_selector = std::move(in.spec.node_selector);
  s.all_nodes = in.spec.all_nodes;
  s.per_device_node_selection = in.spec.per_device_node_selection;
  s.shared_counters = std::move(in.spec.shared_counters);
  for (BetaDevice& b : in.spec.devices) {
    Device dev = b.basic ? static_cast<Device&&>(std::move(*b.basic)) : Device{};
    dev.name = std::move(b.name);
    s.devices.push_back(std::move(dev));
  }
  return out;
}

ResourceClaimSpec ToV1(BetaResourceClaimSpec in) {
  ResourceClaimSpec out;
  DeviceClaim& c = out.devices;
  for (BetaDeviceRequest& r : in.devices.requests) {
    DeviceRequest req;
    req.name = std::move(r.name);
    if (r.first_available.empty()) {
      req.exactly = static_cast<ExactDeviceRequest&&>(std::move(r));
    } else {
      req.first_available = std::move(r.first_available);
    }
    c.requests.push_back(std::move(req));
  }
  c.constraints = std::move(in.devices.constraints);
  c.config = std::move(in.devices.config);
  return out;
}

ResourceClaim ToV1(BetaResourceClaim in) {
  ResourceClaim out;
  out.api_version = kResourceApiVersion;
  out.kind = "ResourceClaim";
  out.metadata = std::move(in.metadata);
  out.spec = ToV1(std::move(in.spec));
  out.status = std::move(in.status);
  return out;
}

ResourceClaimTemplate ToV1(BetaResourceClaimTemplate in) {
  ResourceClaimTemplate out;
  out.api_version = kResourceApiVersion;
  out.kind = "ResourceClaimTemplate";
  out.metadata = std::move(in.metadata);
  out.spec.metadata = std::move(in.spec.metadata);
  out.spec.spec = ToV1(std::move(in.spec.spec));
  return out;
}

}  // namespace gpuplane::api::internal
