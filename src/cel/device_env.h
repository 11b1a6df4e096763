// The DRA selector environment: the single variable `device` with `driver`, `attributes`
// (domain -> name -> value), `capacity` (domain -> name -> quantity) and
// `allowMultipleAllocations`. Unqualified names belong to the driver's domain; an unknown
// domain reads as an empty map; an unknown name in a domain is the error "no such key".
// Pure functions; the returned values are immutable and shareable across threads.
#ifndef GPUPLANE_CEL_DEVICE_ENV_H_
#define GPUPLANE_CEL_DEVICE_ENV_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/resource_types.h"
#include "cel/program.h"
#include "cel/value.h"

namespace gpuplane::cel {

// Shares equal names and values between the devices of one build (thousands of devices repeat
// "productName", "NVIDIA H100 80GB HBM3", 80Gi): values are immutable, so sharing is
// invisible. Owned by the caller of DeviceValue; not thread-safe.
class DeviceValueCache {
 public:
  Value String(std::string_view s);
  Value Version(const std::string& v);  // a semver, or the string when it is not one
  Value Quantity(const api::Quantity& q);

 private:
  struct Hash {
    using is_transparent = void;  // NOLINT(readability-identifier-naming): the standard's name
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Value, Hash, std::equal_to<>> strings_, versions_, quantities_;
};

// Build once per device and reuse for every selector evaluated against it. `cache` (may be
// null) shares equal strings, versions and quantities with earlier devices.
Value DeviceValue(std::string_view driver, const api::Device& device,
                  DeviceValueCache* cache = nullptr);

// Compile options for DRA selectors: `device` is the only variable.
CompileOptions DeviceSelectorOptions();

// One part of `device` a selector reads: its driver, allowMultipleAllocations, or one
// attribute or capacity by domain and name.
struct DeviceRead {
  enum class Field : uint8_t { kDriver, kAllowMultiple, kAttribute, kCapacity };
  Field field = Field::kDriver;
  std::string domain, name;  // kAttribute and kCapacity
  // The published keys that land on (domain, name), "" for none: "domain/name" (when domain
  // has no '/'), and "name" (when it has none itself) for a device of driver `domain`.
  // Derived from domain and name, so equality ignores them.
  std::string qualified_key, driver_key;
  bool operator==(const DeviceRead& o) const {
    return field == o.field && domain == o.domain && name == o.name;
  }
};

// Every part of `device` a compiled DRA selector can observe, when the program reads `device`
// only through constant paths (`device.driver`, `device.attributes["d"].name`,
// `has(device.capacity["d"].name)`...); nullopt when it uses `device` any other way (a
// computed key, the whole map, a comprehension over a domain, a shadowing variable). Then two
// devices with equal DeviceReadKey give the same result, cost and kind of error.
std::optional<std::vector<DeviceRead>> DeviceReads(const Program& program);

// Appends to `key` what `reads` see of the device (the driver always), so that equal keys mean
// the reads see equal values. Cheap: no CEL values are built.
void AppendDeviceReadKey(std::string_view driver, const api::Device& device,
                         const std::vector<DeviceRead>& reads, std::string* key);

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
