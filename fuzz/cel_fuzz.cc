// libFuzzer target over the CEL engine: parse, reference check and evaluate arbitrary
// expressions (as selectors against a device, and with no variables) under a cost limit.
// Invariants: no crash, no sanitizer report, evaluation stays within the cost limit, and two
// devices with equal read keys (cel::DeviceReads) give the same results (SameValue) and costs.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cel/device_env.h"
#include "cel/program.h"
#include "cel/typed_json.h"

namespace {

gpuplane::api::Device BaseDevice() {
  gpuplane::api::Device d;
  d.name = "gpu-0";
  gpuplane::api::DeviceAttribute type;
  type.string_value = "gpu";
  d.attributes["type"] = type;
  gpuplane::api::DeviceAttribute version;
  version.version_value = "550.54.15";
  d.attributes["driverVersion"] = version;
  d.capacity["memory"] = {*gpuplane::api::Quantity::Parse("80Gi"), std::nullopt};
  return d;
}

// The base device and a peer that differs only in attributes of its own (index, UUID).
const gpuplane::api::Device& DeviceSpec(int which) {
  static const gpuplane::api::Device* const kDevices = [] {
    auto* d = new gpuplane::api::Device[2]{BaseDevice(), BaseDevice()};
    gpuplane::api::DeviceAttribute index;
    index.int_value = 3;
    d[1].attributes["index"] = index;
    gpuplane::api::DeviceAttribute uuid;
    uuid.string_value = "GPU-1";
    d[1].attributes["resource.kubernetes.io/uuid"] = uuid;
    return d;
  }();
  return kDevices[which];
}

const gpuplane::cel::Value& Device(int which) {
  static const gpuplane::cel::Value* const kValues = [] {
    return new gpuplane::cel::Value[2]{gpuplane::cel::DeviceValue("gpu.nvidia.com", DeviceSpec(0)),
                                       gpuplane::cel::DeviceValue("gpu.nvidia.com", DeviceSpec(1))};
  }();
  return kValues[which];
}

// Equal read keys must mean equal results and costs (what alloc::SelectorMemo relies on).
void CheckReadKeys(const gpuplane::cel::Program& p, int64_t limit) {
  std::optional<std::vector<gpuplane::cel::DeviceRead>> reads = gpuplane::cel::DeviceReads(p);
  if (!reads) return;
  std::string keys[2];
  for (int i = 0; i < 2; ++i) {
    gpuplane::cel::AppendDeviceReadKey("gpu.nvidia.com", DeviceSpec(i), *reads, &keys[i]);
  }
  if (keys[0] != keys[1]) return;
  int64_t costs[2] = {0, 0};
  gpuplane::cel::Value values[2];
  for (int i = 0; i < 2; ++i) {
    values[i] = p.Evaluate(gpuplane::cel::DeviceActivation(Device(i)), limit, &costs[i]);
  }
  if (costs[0] != costs[1] || values[0].is_error() != values[1].is_error()) std::abort();
  // SameValue, not CEL's ==: a NaN result must equal itself.
  if (!values[0].is_error() && !gpuplane::cel::SameValue(values[0], values[1])) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string expr(reinterpret_cast<const char*>(data), size);
  for (bool check : {true, false}) {
    gpuplane::cel::CompileOptions options = gpuplane::cel::DeviceSelectorOptions();
    options.check_references = check;
    absl::StatusOr<gpuplane::cel::Program> p = gpuplane::cel::Program::Compile(expr, options);
    if (!p.ok()) continue;
    gpuplane::cel::DeviceActivation act(Device(0));
    int64_t cost = 0;
    constexpr int64_t kLimit = 100'000;  // smaller than production so runs stay fast
    (void)p->Evaluate(act, kLimit, &cost);
    // Functions are charged after they run, so one call may overshoot by its own work, but
    // never unboundedly.
    if (cost > 50 * kLimit) std::abort();
    CheckReadKeys(*p, kLimit);
  }
  return 0;
}
