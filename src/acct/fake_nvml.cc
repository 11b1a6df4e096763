// A stand-in for libnvidia-ml.so.1 with the same C ABI, for testing the NVML sampler on
// machines without a GPU: one GPU, two processes, utilization samples that advance 1 s per
// call; fake_nvml_set_mode() or the FAKE_NVML_MODE environment variable injects NVML errors.
#include <cstdlib>
#include <cstring>

#include "acct/nvml_abi.h"

namespace {
int mode = 0;  // 0 normal, 1 utilization not supported, 2 GPU lost, 3 no permission
unsigned long long clock_us = 1'700'000'000'000'000ULL;  // NOLINT(google-runtime-int)
char device_storage;  // a handle only has to be a distinct pointer
}  // namespace

// The C ABI names NVML defines.
// NOLINTBEGIN(readability-identifier-naming)
extern "C" {
void fake_nvml_set_mode(int m) { mode = m; }
int nvmlInit_v2() {
  if (const char* m = std::getenv("FAKE_NVML_MODE")) mode = std::atoi(m);
  return 0;
}
int nvmlShutdown() { return 0; }
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 1;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned, nvmlDevice_t* d) {
  if (mode == 2) return 15;
  *d = reinterpret_cast<nvmlDevice_t>(&device_storage);
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_t, char* buf, unsigned len) {
  std::strncpy(buf, "GPU-fake-0", len);
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_t, char* buf, unsigned len) {
  std::strncpy(buf, "NVIDIA H200", len);
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t* m) {
  if (mode == 3) return 4;
  m->total = 141ULL << 30;
  m->used = 30ULL << 30;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t, nvmlUtilization_t* u) {
  if (mode == 1) return 3;
  u->gpu = 70;
  u->memory = 20;
  return 0;
}
int nvmlDeviceGetMigMode(nvmlDevice_t, unsigned* current, unsigned* pending) {
  *current = *pending = 0;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t, unsigned* count, nvmlProcessInfo_t* out) {
  if (out == nullptr || *count < 2) {
    *count = 2;
    return 7;  // insufficient size
  }
  out[0] = {101, 10ULL << 30, 0xFFFFFFFF, 0xFFFFFFFF};
  out[1] = {102, 20ULL << 30, 0xFFFFFFFF, 0xFFFFFFFF};
  *count = 2;
  return 0;
}
int nvmlDeviceGetProcessUtilization(nvmlDevice_t, nvmlProcessUtilizationSample_t* out,
                                    unsigned* count,
                                    unsigned long long last_seen) {  // NOLINT(google-runtime-int)
  if (mode == 1) return 3;
  if (last_seen >= clock_us + 1'000'000) return 6;  // nothing newer
  if (out == nullptr || *count < 2) {
    *count = 2;
    return 7;
  }
  clock_us += 1'000'000;
  out[0] = {101, clock_us, 50, 10, 0, 0};
  out[1] = {102, clock_us, 20, 5, 0, 0};
  *count = 2;
  return 0;
}
}  // extern "C"
// NOLINTEND(readability-identifier-naming)
