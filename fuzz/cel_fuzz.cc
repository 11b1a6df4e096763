// libFuzzer target over the CEL engine: parse, reference check and evaluate arbitrary
// expressions (as selectors against a device, and with no variables) under a cost limit.
// Invariants: no crash, no sanitizer report, evaluation stays within the cost limit.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cel/device_env.h"
#include "cel/program.h"

namespace {

const gpuplane::cel::Value& Device() {
  static const gpuplane::cel::Value* const kDevice = [] {
    gpuplane::api::Device d;
    d.name = "gpu-0";
    gpuplane::api::DeviceAttribute type;
    type.string_value = "gpu";
    d.attributes["type"] = type;
    gpuplane::api::DeviceAttribute version;
    version.version_value = "550.54.15";
    d.attributes["driverVersion"] = version;
    d.capacity["memory"] = {*gpuplane::api::Quantity::Parse("80Gi"), std::nullopt};
    return new gpuplane::cel::Value(gpuplane::cel::DeviceValue("gpu.nvidia.com", d));
  }();
  return *kDevice;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string expr(reinterpret_cast<const char*>(data), size);
  for (bool check : {true, false}) {
    gpuplane::cel::CompileOptions options = gpuplane::cel::DeviceSelectorOptions();
    options.check_references = check;
    absl::StatusOr<gpuplane::cel::Program> p = gpuplane::cel::Program::Compile(expr, options);
    if (!p.ok()) continue;
    gpuplane::cel::DeviceActivation act(Device());
    int64_t cost = 0;
    constexpr int64_t kLimit = 100'000;  // smaller than production so runs stay fast
    (void)p->Evaluate(act, kLimit, &cost);
    // Functions are charged after they run, so one call may overshoot by its own work, but
    // never unboundedly.
    if (cost > 50 * kLimit) std::abort();
  }
  return 0;
}
