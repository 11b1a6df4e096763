#include "kube/json_field.h"

namespace gpuplane::kube {

const nlohmann::json& Field(const nlohmann::json& obj, std::string_view key) {
  static const nlohmann::json* const kEmpty = new nlohmann::json(nlohmann::json::object());
  if (!obj.is_object()) return *kEmpty;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return *kEmpty;
  return *it;
}

std::string_view Str(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

}  // namespace gpuplane::kube
