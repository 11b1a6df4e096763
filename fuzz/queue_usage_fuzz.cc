// Fuzz target for the queues' past-use reader (kube/queue_usage.h): a ConfigMap anyone can
// edit. Any bytes give usage or a named error, never a crash or an exception; usage it accepts
// has finite amounts at or above zero and is written and read back the same.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kube/queue_usage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpuplane::kube::QueueUsage> u = gpuplane::kube::ReadQueueUsage(text, "fuzz");
  if (!u.ok()) return 0;
  for (const auto& [name, seconds] : u->gpu_seconds) {
    if (!std::isfinite(seconds) || seconds < 0) std::abort();
  }
  absl::StatusOr<gpuplane::kube::QueueUsage> back =
      gpuplane::kube::ReadQueueUsage(gpuplane::kube::WriteQueueUsage(*u), "again");
  if (!back.ok() || back->gpu_seconds.size() != u->gpu_seconds.size() ||
      back->demand_peaks != u->demand_peaks) {
    std::abort();
  }
  gpuplane::kube::QueueUsage later = gpuplane::kube::DecayedTo(*u, u->saved_at + 60, 3600);
  return later.gpu_seconds.size() == u->gpu_seconds.size() ? 0 : 1;
}
