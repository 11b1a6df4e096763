// The NVML sampler: loads libnvidia-ml.so.1 at run time (dlopen), declaring only the C ABI it
// uses, so the binary builds and runs on machines without NVIDIA software; there Open()
// reports "NVML not available" and the caller keeps going without it. Each Sample() reads,
// per GPU: name, UUID, memory, utilization and MIG mode; running compute processes and their
// memory (with MIG instance ids); and the per-process utilization samples since the last call.
// NVML errors are counted by kind (not supported, no permission, GPU lost, other), never fatal.
// Not thread-safe.
// An NvmlSampler owns the dlopen'ed library handle and shuts NVML down on destruction.
#ifndef GPUPLANE_ACCT_NVML_H_
#define GPUPLANE_ACCT_NVML_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "acct/recording.h"

namespace gpuplane::acct {

class NvmlSampler {
 public:
  // `library`: a path or soname for dlopen.
  static absl::StatusOr<std::unique_ptr<NvmlSampler>> Open(
      const std::string& library = "libnvidia-ml.so.1");
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  // Appends one pass of records stamped `t` (seconds) to `into`; counts errors in `errors`.
  void Sample(double t, Recording& into, std::map<std::string, int64_t>& errors);

  struct Api;  // the resolved entry points (nvml.cc)

 private:
  NvmlSampler() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::map<std::string, uint64_t> last_seen_us_;  // per GPU UUID, for process utilization
};

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_NVML_H_
