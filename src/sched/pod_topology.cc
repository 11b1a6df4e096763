#include "sched/pod_topology.h"

#include <algorithm>
#include <climits>

#include "alloc/request.h"
#include "model/node_selector.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

const std::string* Label(const std::map<std::string, std::string>& labels, const std::string& key) {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

bool Requirement(const api::LabelSelectorRequirement& r,
                 const std::map<std::string, std::string>& labels) {
  const std::string* v = Label(labels, r.key);
  bool listed = v != nullptr && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
  if (r.op == "In") return listed;
  if (r.op == "NotIn") return !listed;
  if (r.op == "Exists") return v != nullptr;
  if (r.op == "DoesNotExist") return v == nullptr;
  return false;  // api's validation refuses other operators
}

bool EmptySelector(const std::optional<api::LabelSelector>& s) {
  return s && s->match_labels.empty() && s->match_expressions.empty();
}

const std::vector<api::PodAffinityTerm>* Required(const std::optional<api::PodAffinity>& a) {
  return a && !a->required.empty() ? &a->required : nullptr;
}

bool DoNotSchedule(const api::TopologySpreadConstraint& c) {
  return c.when_unsatisfiable == "DoNotSchedule";
}

}  // namespace

bool MatchesLabels(const api::LabelSelector& s, const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : s.match_labels) {
    const std::string* v = Label(labels, key);
    if (v == nullptr || *v != value) return false;
  }
  return std::all_of(
      s.match_expressions.begin(), s.match_expressions.end(),
      [&](const api::LabelSelectorRequirement& r) { return Requirement(r, labels); });
}

bool TermMatches(const api::PodAffinityTerm& term, const std::string& owner_ns,
                 const std::string& ns, const std::map<std::string, std::string>& labels) {
  if (!term.label_selector) return false;
  // A namespaceSelector, empty or not, is read as every namespace (see the header).
  bool any_namespace = term.namespace_selector.has_value();
  if (!any_namespace) {
    bool listed = term.namespaces.empty()
                      ? ns == owner_ns
                      : std::find(term.namespaces.begin(), term.namespaces.end(), ns) !=
                            term.namespaces.end();
    if (!listed) return false;
  }
  return MatchesLabels(*term.label_selector, labels);
}

bool AsksPodTopology(const api::PodSpec& spec) {
  if (spec.affinity &&
      (Required(spec.affinity->pod_affinity) || Required(spec.affinity->pod_anti_affinity))) {
    return true;
  }
  return std::any_of(spec.topology_spread_constraints.begin(),
                     spec.topology_spread_constraints.end(), DoNotSchedule);
}

std::string UnsupportedTerm(const api::PodSpec& spec) {
  if (!spec.affinity) return "";
  for (const auto& [name, a] : {std::pair{"podAffinity", &spec.affinity->pod_affinity},
                                std::pair{"podAntiAffinity", &spec.affinity->pod_anti_affinity}}) {
    if (!*a) continue;
    for (size_t i = 0; i < (*a)->required.size(); ++i) {
      const api::PodAffinityTerm& t = (*a)->required[i];
      if (t.namespace_selector && !EmptySelector(t.namespace_selector)) {
        return util::Cat("spec.affinity.", name, ".requiredDuringSchedulingIgnoredDuringExecution[",
                         i, "].namespaceSelector");
      }
    }
  }
  return "";
}

void PodTopology::EligibleDomains(const Snapshot& s, const PodInfo& pod) {
  const api::PodSpec& spec = pod.pod->spec;
  const model::Inventory& inv = s.inventory();
  for (Spread& sp : spread_) sp.eligible.assign(inv.nodes().size(), 0);
  for (model::NodeId n = 0; n < inv.nodes().size() && !spread_.empty(); ++n) {
    const model::NodeInfo& info = inv.nodes()[n];
    bool keys = std::all_of(spread_.begin(), spread_.end(), [&](const Spread& sp) {
      return info.labels.contains(sp.c->topology_key);
    });
    if (!keys) continue;
    bool affinity = std::all_of(spec.node_selector.begin(), spec.node_selector.end(),
                                [&](const auto& kv) {
                                  const std::string* v = Label(info.labels, kv.first);
                                  return v != nullptr && *v == kv.second;
                                });
    const std::optional<api::Affinity>& a = spec.affinity;
    affinity = affinity && !(a && a->node_affinity && a->node_affinity->required &&
                             !model::MatchesNodeSelector(*a->node_affinity->required, info.name,
                                                         info.labels));
    bool tolerated = true;
    for (const api::Taint& t : s.node(n).taints) {
      tolerated = tolerated && ((t.effect != "NoSchedule" && t.effect != "NoExecute") ||
                                alloc::Tolerates(spec.tolerations, t));
    }
    // Each constraint's own policies decide whether it counts the node (as kube-scheduler).
    for (Spread& sp : spread_) {
      if ((sp.c->node_affinity_policy != "Ignore" && !affinity) ||
          (sp.c->node_taints_policy == "Honor" && !tolerated)) {
        continue;
      }
      sp.eligible[n] = 1;
      sp.counts.emplace(info.labels.at(sp.c->topology_key), 0);
    }
  }
}

PodTopology::PodTopology(const Snapshot& s, const PodInfo& pod)
    : ns_(pod.pod->metadata.namespace_name), labels_(&pod.pod->metadata.labels) {
  const api::PodSpec& spec = pod.pod->spec;
  if (spec.affinity) {
    affinity_ = Required(spec.affinity->pod_affinity);
    anti_ = Required(spec.affinity->pod_anti_affinity);
  }
  if (affinity_ != nullptr) {
    affinity_counts_.resize(affinity_->size());
    self_matches_all_ = std::all_of(affinity_->begin(), affinity_->end(), [&](const auto& t) {
      return TermMatches(t, ns_, ns_, *labels_);
    });
  }
  if (anti_ != nullptr) anti_domains_.resize(anti_->size());
  for (const api::TopologySpreadConstraint& c : spec.topology_spread_constraints) {
    if (!DoNotSchedule(c)) continue;
    spread_.push_back({&c, {}, {}, c.label_selector && MatchesLabels(*c.label_selector, *labels_)});
  }
  EligibleDomains(s, pod);
  if (affinity_ == nullptr && anti_ == nullptr && spread_.empty()) {
    for (const std::string& key : s.anti_affinity_pods()) Count(s, *s.placement(key));
  } else {
    for (const auto& [key, pl] : s.placements()) Count(s, pl);
  }
}

void PodTopology::Count(const Snapshot& s, const PodPlacement& pl) {
  if (pl.node == model::kNoId || !pl.labels) return;
  const PodLabels& other = *pl.labels;
  const std::map<std::string, std::string>& node = s.inventory().nodes()[pl.node].labels;
  for (size_t i = 0; affinity_ != nullptr && i < affinity_->size(); ++i) {
    const api::PodAffinityTerm& t = (*affinity_)[i];
    const std::string* domain = Label(node, t.topology_key);
    if (domain != nullptr && TermMatches(t, ns_, other.ns, other.labels)) {
      ++affinity_counts_[i][*domain];
      any_affinity_match_ = true;
    }
  }
  for (size_t i = 0; anti_ != nullptr && i < anti_->size(); ++i) {
    const api::PodAffinityTerm& t = (*anti_)[i];
    const std::string* domain = Label(node, t.topology_key);
    if (domain != nullptr && TermMatches(t, ns_, other.ns, other.labels)) {
      anti_domains_[i].insert(*domain);
    }
  }
  for (const api::PodAffinityTerm& t : other.anti_affinity) {
    const std::string* domain = Label(node, t.topology_key);
    if (domain != nullptr && TermMatches(t, other.ns, ns_, *labels_)) {
      existing_anti_[t.topology_key].insert(*domain);
    }
  }
  if (other.terminating || other.ns != ns_) return;
  for (Spread& sp : spread_) {
    if (sp.eligible[pl.node] && sp.c->label_selector &&
        MatchesLabels(*sp.c->label_selector, other.labels)) {
      ++sp.counts[node.at(sp.c->topology_key)];
    }
  }
}

std::optional<Rule> PodTopology::CheckAffinity(const std::map<std::string, std::string>& node,
                                               const std::vector<const PodInfo*>& also) const {
  bool all_present = true, any_match = any_affinity_match_;
  for (size_t i = 0; i < affinity_->size(); ++i) {
    const api::PodAffinityTerm& t = (*affinity_)[i];
    const std::string* domain = Label(node, t.topology_key);
    if (domain == nullptr) return Rule::kPodAffinity;
    auto it = affinity_counts_[i].find(*domain);
    bool here = it != affinity_counts_[i].end() && it->second > 0;
    for (const PodInfo* a : also) {
      if (a->labels && TermMatches(t, ns_, a->labels->ns, a->labels->labels))
        here = any_match = true;
    }
    all_present = all_present && here;
  }
  if (all_present || (!any_match && self_matches_all_)) return std::nullopt;
  return Rule::kPodAffinity;
}

std::optional<Rule> PodTopology::CheckAnti(const std::map<std::string, std::string>& node,
                                           const std::vector<const PodInfo*>& also) const {
  for (size_t i = 0; anti_ != nullptr && i < anti_->size(); ++i) {
    const api::PodAffinityTerm& t = (*anti_)[i];
    const std::string* domain = Label(node, t.topology_key);
    if (domain == nullptr) continue;
    if (anti_domains_[i].contains(*domain)) return Rule::kPodAntiAffinity;
    for (const PodInfo* a : also) {
      if (a->labels && TermMatches(t, ns_, a->labels->ns, a->labels->labels)) {
        return Rule::kPodAntiAffinity;
      }
    }
  }
  for (const auto& [key, domains] : existing_anti_) {
    const std::string* domain = Label(node, key);
    if (domain != nullptr && domains.contains(*domain)) return Rule::kPodAntiAffinity;
  }
  for (const PodInfo* a : also) {
    if (!a->labels) continue;
    for (const api::PodAffinityTerm& t : a->labels->anti_affinity) {
      if (node.contains(t.topology_key) && TermMatches(t, a->labels->ns, ns_, *labels_)) {
        return Rule::kPodAntiAffinity;
      }
    }
  }
  return std::nullopt;
}

bool PodTopology::SpreadFits(const Spread& sp, model::NodeId node, const std::string& domain,
                             const std::vector<const PodInfo*>& also) const {
  int extra = 0;
  for (const PodInfo* a : sp.eligible[node] ? also : std::vector<const PodInfo*>{}) {
    if (a->labels && !a->labels->terminating && a->labels->ns == ns_ && sp.c->label_selector &&
        MatchesLabels(*sp.c->label_selector, a->labels->labels)) {
      ++extra;
    }
  }
  auto here = sp.counts.find(domain);
  const int count = (here == sp.counts.end() ? 0 : here->second) + extra;
  int min = INT_MAX;
  for (const auto& [d, n] : sp.counts) min = std::min(min, d == domain ? n + extra : n);
  if (sp.counts.empty() || static_cast<int64_t>(sp.counts.size()) < sp.c->min_domains.value_or(1)) {
    min = 0;
  }
  return count + (sp.self ? 1 : 0) - min <= sp.c->max_skew;
}

std::optional<Rule> PodTopology::Check(const Snapshot& s, model::NodeId node,
                                       const std::vector<const PodInfo*>& also) const {
  const std::map<std::string, std::string>& labels = s.inventory().nodes()[node].labels;
  for (const Spread& sp : spread_) {
    const std::string* domain = Label(labels, sp.c->topology_key);
    if (domain == nullptr || !SpreadFits(sp, node, *domain, also)) return Rule::kTopologySpread;
  }
  if (affinity_ != nullptr) {
    if (std::optional<Rule> r = CheckAffinity(labels, also)) return r;
  }
  return CheckAnti(labels, also);
}

}  // namespace gpuplane::sched
