#include "kube/gang_intent.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

bool IsString(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string();
}

bool ValidClaim(const json& c) {
  if (!IsString(c, "name") || !c.contains("allocation")) return false;
  const json& a = c["allocation"];
  if (!a.is_object() || !a.contains("devices") || !a["devices"].is_object()) return false;
  const json& devices = a["devices"];
  if (!devices.contains("results")) return true;
  if (!devices["results"].is_array()) return false;
  for (const json& r : devices["results"]) {
    for (const char* key : {"request", "driver", "pool", "device"}) {
      if (!IsString(r, key)) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<json> ReadIntent(std::string_view text) {
  json intent = json::parse(text, nullptr, false);
  if (!intent.is_object() || !intent.contains("members") || !intent["members"].is_array()) {
    return std::nullopt;
  }
  for (const json& m : intent["members"]) {
    if (!IsString(m, "pod") || !IsString(m, "uid") || !IsString(m, "node")) return std::nullopt;
    if (!m.contains("claims") || !m["claims"].is_array()) return std::nullopt;
    for (const json& c : m["claims"]) {
      if (!ValidClaim(c)) return std::nullopt;
    }
    if (m.contains("volumes")) {  // volume claims to bind on the node (optional)
      if (!m["volumes"].is_array()) return std::nullopt;
      for (const json& v : m["volumes"]) {
        if (!IsString(v, "claim") || !IsString(v, "uid")) return std::nullopt;
        if (v.contains("volume") && !IsString(v, "volume")) return std::nullopt;
      }
    }
    if (m.contains("extended")) {  // the claim made for its extended resources (optional)
      const json& e = m["extended"];
      if (!IsString(e, "claim") || !e.contains("mappings") || !e["mappings"].is_array()) {
        return std::nullopt;
      }
      for (const json& r : e["mappings"]) {
        for (const char* key : {"containerName", "resourceName", "requestName"}) {
          if (!IsString(r, key)) return std::nullopt;
        }
      }
    }
  }
  return intent;
}

}  // namespace gpuplane::kube
