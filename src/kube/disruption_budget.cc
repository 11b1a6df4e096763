#include "kube/disruption_budget.h"

#include <string_view>
#include <utility>

#include "api/core_types.h"
#include "kube/json_field.h"
#include "sched/pod_set.h"

namespace gpuplane::kube {

using nlohmann::json;

std::vector<DisruptionBudget> Budgets(const std::vector<json>& pdbs) {
  std::vector<DisruptionBudget> out;
  for (const json& b : pdbs) {
    DisruptionBudget budget;
    budget.ns = Str(Field(b, "metadata"), "namespace");
    const json& spec = Field(b, "spec");
    if (spec.contains("selector")) budget.selector = spec["selector"];  // null: selects nothing
    const json& status = Field(b, "status");
    if (status.contains("disruptionsAllowed") && status["disruptionsAllowed"].is_number_integer()) {
      budget.allowed = status["disruptionsAllowed"].get<int64_t>();
    }
    out.push_back(std::move(budget));
  }
  return out;
}

bool Selects(const json& selector, const std::map<std::string, std::string>& labels) {
  if (!selector.is_object()) return false;
  const json& match = Field(selector, "matchLabels");
  for (const auto& [key, value] : match.items()) {
    auto it = labels.find(key);
    if (it == labels.end() || !value.is_string() || it->second != value.get<std::string>()) {
      return false;
    }
  }
  for (const json& e : Field(selector, "matchExpressions")) {
    if (!e.is_object()) return false;
    std::string_view op = Str(e, "operator");
    auto it = labels.find(std::string(Str(e, "key")));
    bool has = it != labels.end();
    bool in = false;
    for (const json& v : Field(e, "values")) {
      in = in || (has && v.is_string() && v.get<std::string>() == it->second);
    }
    if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && !has) ||
        (op == "DoesNotExist" && has)) {
      return false;
    }
    if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist") return false;
  }
  return true;
}

bool Covers(const DisruptionBudget& b, const std::string& ns,
            const std::map<std::string, std::string>& labels) {
  return b.ns == ns && Selects(b.selector, labels);
}

bool Covers(const DisruptionBudget& b, const sched::PodInfo& p) {
  return Covers(b, p.pod->metadata.namespace_name, p.pod->metadata.labels);
}
}  // namespace gpuplane::kube
