// Fuzz target for the gang intent reader (kube/gang_intent.h): an annotation anyone can edit.
// Any bytes give an intent or nothing, never a crash or an exception; an intent it accepts can
// be walked the way the scheduler's recovery walks it (members, claims, results) without a
// type error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kube/gang_intent.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<nlohmann::json> intent = gpuplane::kube::ReadIntent(text);
  if (!intent) return 0;
  size_t n = 0;
  for (const nlohmann::json& m : (*intent)["members"]) {
    n += m.value("pod", "").size() + m.value("uid", "").size() + m.value("node", "").size();
    for (const nlohmann::json& c : m.value("claims", nlohmann::json::array())) {
      n += c.value("name", "").size();
      for (const nlohmann::json& r :
           c["allocation"]["devices"].value("results", nlohmann::json::array())) {
        n += r.value("driver", "").size() + r.value("pool", "").size() +
             r.value("device", "").size();
      }
    }
  }
  return n == SIZE_MAX ? 1 : 0;
}
