// The slice of NVML's C ABI gpuplane uses (../shared/reference/gpu-accounting.md), declared
// once at global scope so the sampler and the test stand-in library agree on every type.
// Declarations only (plain C structs and function types): no state, no ownership, safe from
// any thread as far as gpuplane is concerned (NVML's own rules apply to the calls).
#ifndef GPUPLANE_ACCT_NVML_ABI_H_
#define GPUPLANE_ACCT_NVML_ABI_H_

extern "C" {
// NOLINTBEGIN(google-runtime-int, readability-identifier-naming): the C ABI's types and names
using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned gpu, memory;
};
struct nvmlProcessInfo_t {  // the _v3 layout
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};
struct nvmlProcessUtilizationSample_t {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};
// NOLINTEND(google-runtime-int, readability-identifier-naming)
}

#endif  // GPUPLANE_ACCT_NVML_ABI_H_
