// Fuzz target for the trace readers (openb nodes and pods, spot nodes): any input either
// parses, with bad rows reported and skipped, or is refused with a message; nothing crashes,
// and every kept row is within the documented ranges.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto pods = gpuplane::sim::ParseOpenbPods(text, "fuzz.csv"); pods.ok()) {
    for (const auto& p : pods->pods) {
      if (p.gpu_milli < 0 || p.gpu_milli > 1000 || p.num_gpu < 0 || p.num_gpu > 64)
        __builtin_trap();
    }
  }
  if (auto nodes = gpuplane::sim::ParseOpenbNodes(text, "fuzz.csv"); nodes.ok()) {
    for (const auto& n : nodes->nodes) {
      if (n.gpus < 0 || n.gpus > 64 || (n.gpus > 0 && n.model.empty())) __builtin_trap();
    }
  }
  (void)gpuplane::sim::ParseSpotNodes(text, "fuzz.csv");
  return 0;
}
