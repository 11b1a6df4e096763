// Fuzz target for the /proc/<pid>/cgroup parser: any bytes give a pod identity or none, never
// a crash, and an identity always has a well-formed UID.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "acct/cgroup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto id = gpuplane::acct::ParseProcCgroup(text); id.has_value()) {
    if (id->pod_uid.size() != 36 || id->pod_uid[8] != '-') __builtin_trap();
  }
  return 0;
}
