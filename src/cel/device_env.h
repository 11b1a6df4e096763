// The DRA selector environment: the single variable `device` with `driver`, `attributes`
// (domain -> name -> value), `capacity` (domain -> name -> quantity) and
// `allowMultipleAllocations`. Unqualified names belong to the driver's domain; an unknown
// domain reads as an empty map; an unknown name in a domain is the error "no such key".
// Pure functions; the returned values are immutable and shareable across threads.
#ifndef GPUPLANE_CEL_DEVICE_ENV_H_
#define GPUPLANE_CEL_DEVICE_ENV_H_

#include <string_view>

#include "api/resource_types.h"
#include "cel/program.h"
#include "cel/value.h"

namespace gpuplane::cel {

// Build once per device and reuse for every selector evaluated against it.
Value DeviceValue(std::string_view driver, const api::Device& device);

// Compile options for DRA selectors: `device` is the only variable.
CompileOptions DeviceSelectorOptions();

class DeviceActivation : public Activation {
 public:
  explicit DeviceActivation(Value device) : device_(std::move(device)) {}
  const Value* Find(std::string_view name) const override {
    return name == "device" ? &device_ : nullptr;
  }

 private:
  Value device_;
};

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_DEVICE_ENV_H_
