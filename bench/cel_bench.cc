// CEL selector benchmarks (issue 3): compile time of a typical selector, and per-device
// evaluation time of three selectors against an H100 device built as the allocator builds it.
#include <string>

#include "benchmark/benchmark.h"
#include "cel/device_env.h"
#include "cel/program.h"

namespace gpuplane {
namespace {

constexpr char kSelectorA[] =
    "device.driver == \"gpu.nvidia.com\" && device.attributes[\"gpu.nvidia.com\"].type == \"gpu\"";
constexpr char kSelectorB[] =
    "device.attributes[\"gpu.nvidia.com\"].productName.lowerAscii().contains(\"h100\") && "
    "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
// A constant pattern (compiled with the program) and one only known at evaluation.
constexpr char kSelectorD[] =
    "device.attributes[\"gpu.nvidia.com\"].productName.matches(\"^NVIDIA H(100|200)\")";
constexpr char kSelectorE[] =
    "device.attributes[\"gpu.nvidia.com\"].productName.matches("
    "device.attributes[\"gpu.nvidia.com\"].brand.upperAscii())";
constexpr char kSelectorC[] =
    "device.attributes[\"gpu.nvidia.com\"].driverVersion.isGreaterThan(semver(\"550.0.0\"))";

api::Device H100() {
  api::Device d;
  d.name = "gpu-0";
  auto str = [](const char* s) {
    api::DeviceAttribute a;
    a.string_value = s;
    return a;
  };
  auto ver = [](const char* s) {
    api::DeviceAttribute a;
    a.version_value = s;
    return a;
  };
  d.attributes["type"] = str("gpu");
  d.attributes["uuid"] = str("GPU-a02c12e4-1897-e85f-adf7-bf32a8a8ca98");
  d.attributes["productName"] = str("NVIDIA H100 80GB HBM3");
  d.attributes["brand"] = str("Nvidia");
  d.attributes["architecture"] = str("Hopper");
  d.attributes["cudaComputeCapability"] = ver("9.0.0");
  d.attributes["driverVersion"] = ver("580.82.7");
  d.attributes["cudaDriverVersion"] = ver("13.0.0");
  d.attributes["resource.kubernetes.io/pciBusID"] = str("0000:18:00.0");
  d.attributes["resource.kubernetes.io/pcieRoot"] = str("pci0000:10");
  d.capacity["memory"] = {*api::Quantity::Parse("80Gi"), std::nullopt};
  return d;
}

void BM_CompileSelector(benchmark::State& state) {
  cel::CompileOptions options = cel::DeviceSelectorOptions();
  for (auto _ : state) {
    absl::StatusOr<cel::Program> p = cel::Program::Compile(kSelectorB, options);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_CompileSelector);

void Evaluate(benchmark::State& state, const char* selector) {
  absl::StatusOr<cel::Program> p = cel::Program::Compile(selector, cel::DeviceSelectorOptions());
  if (!p.ok()) {
    state.SkipWithError("compile failed");
    return;
  }
  cel::DeviceActivation act(cel::DeviceValue("gpu.nvidia.com", H100()));
  for (auto _ : state) {
    cel::Value v = p->Evaluate(act);
    if (v.kind() != cel::Kind::kBool || !v.bool_value()) state.SkipWithError("selector not true");
    benchmark::DoNotOptimize(v);
  }
}

void BM_EvalSelectorA_DriverAndType(benchmark::State& state) { Evaluate(state, kSelectorA); }
void BM_EvalSelectorB_ProductAndMemory(benchmark::State& state) { Evaluate(state, kSelectorB); }
void BM_EvalSelectorC_DriverVersion(benchmark::State& state) { Evaluate(state, kSelectorC); }
BENCHMARK(BM_EvalSelectorA_DriverAndType);
BENCHMARK(BM_EvalSelectorB_ProductAndMemory);
BENCHMARK(BM_EvalSelectorC_DriverVersion);
void BM_EvalSelectorD_ConstantRegex(benchmark::State& state) { Evaluate(state, kSelectorD); }
void BM_EvalSelectorE_RegexFromAttribute(benchmark::State& state) { Evaluate(state, kSelectorE); }
BENCHMARK(BM_EvalSelectorD_ConstantRegex);
BENCHMARK(BM_EvalSelectorE_RegexFromAttribute);

// Baseline in the same run: building the device value (done once per device, not per
// evaluation).
void BM_BuildDeviceValue(benchmark::State& state) {
  api::Device d = H100();
  for (auto _ : state) benchmark::DoNotOptimize(cel::DeviceValue("gpu.nvidia.com", d));
}
BENCHMARK(BM_BuildDeviceValue);

}  // namespace
}  // namespace gpuplane

BENCHMARK_MAIN();
