#include "model/node_selector.h"

#include <algorithm>
#include <charconv>

namespace gpuplane::model {
namespace {

bool ParseInt(const std::string& s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool Matches(const api::NodeSelectorRequirement& r, const std::string* value) {
  const std::vector<std::string>& vs = r.values;
  if (r.op == "In") return value && std::find(vs.begin(), vs.end(), *value) != vs.end();
  if (r.op == "NotIn") return !value || std::find(vs.begin(), vs.end(), *value) == vs.end();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt" || r.op == "Lt") {
    int64_t have, want;
    if (!value || vs.size() != 1 || !ParseInt(*value, &have) || !ParseInt(vs[0], &want)) {
      return false;
    }
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;  // unknown operators never match (validation reports them)
}

}  // namespace

bool MatchesNodeSelectorTerm(const api::NodeSelectorTerm& term, const std::string& node_name,
                             const std::map<std::string, std::string>& labels) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const api::NodeSelectorRequirement& r : term.match_expressions) {
    auto it = labels.find(r.key);
    if (!Matches(r, it == labels.end() ? nullptr : &it->second)) return false;
  }
  for (const api::NodeSelectorRequirement& r : term.match_fields) {
    if (r.key != "metadata.name" || !Matches(r, &node_name)) return false;
  }
  return true;
}

bool MatchesNodeSelector(const api::NodeSelector& selector, const std::string& node_name,
                         const std::map<std::string, std::string>& labels) {
  for (const api::NodeSelectorTerm& term : selector.node_selector_terms) {
    if (MatchesNodeSelectorTerm(term, node_name, labels)) return true;
  }
  return false;
}

}  // namespace gpuplane::model
