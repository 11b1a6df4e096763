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
                 const PodLabels& other) {
  if (!term.label_selector) return false;
  bool in = false;
  if (term.namespaces.empty() && !term.namespace_selector) {
    in = other.ns == owner_ns;
  } else {
    static const std::map<std::string, std::string> kNone;
    in = std::find(term.namespaces.begin(), term.namespaces.end(), other.ns) !=
             term.namespaces.end() ||
         (term.namespace_selector &&
          MatchesLabels(*term.namespace_selector, other.ns_labels ? *other.ns_labels : kNone));
  }
  return in && MatchesLabels(*term.label_selector, other.labels);
}

bool AsksPodTopology(const api::PodSpec& spec) {
  if (spec.affinity &&
      (Required(spec.affinity->pod_affinity) || Required(spec.affinity->pod_anti_affinity))) {
    return true;
  }
  return std::any_of(spec.topology_spread_constraints.begin(),
                     spec.topology_spread_constraints.end(), DoNotSchedule);
}

std::shared_ptr<const SpreadDomains> SpreadDomainCache::Get(
    const Snapshot& s, const PodInfo& pod, const api::TopologySpreadConstraint& c) {
  const api::PodSpec& spec = pod.pod->spec;
  Key key{spec.node_selector,
          std::nullopt,
          spec.tolerations,
          {},
          c.topology_key,
          c.node_affinity_policy != "Ignore",
          c.node_taints_policy == "Honor"};
  if (spec.affinity && spec.affinity->node_affinity) {
    key.node_affinity = spec.affinity->node_affinity->required;
  }
  for (const api::TopologySpreadConstraint& other : spec.topology_spread_constraints) {
    if (other.when_unsatisfiable == c.when_unsatisfiable) key.keys.push_back(other.topology_key);
  }
  if (snapshot_ != &s) keys_.clear();
  if (snapshot_ != &s || entries_.size() > 64) entries_.clear();
  snapshot_ = &s;
  for (const auto& [k, domains] : entries_) {
    if (k == key) return domains;
  }
  auto d = std::make_shared<SpreadDomains>();
  const model::Inventory& inv = s.inventory();
  d->of_node.assign(inv.nodes().size(), -1);
  d->eligible.assign(inv.nodes().size(), 0);
  std::map<std::string, int> index;
  for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
    const model::NodeInfo& info = inv.nodes()[n];
    const std::string* value = Label(info.labels, key.key);
    if (value == nullptr) continue;
    auto [it, fresh] = index.emplace(*value, static_cast<int>(index.size()));
    d->of_node[n] = it->second;
    if (fresh) d->domain_eligible.push_back(0);
    bool ok = std::all_of(key.keys.begin(), key.keys.end(),
                          [&](const std::string& k) { return info.labels.contains(k); });
    if (ok && key.honor_affinity) {
      ok = std::all_of(key.node_selector.begin(), key.node_selector.end(), [&](const auto& kv) {
        const std::string* v = Label(info.labels, kv.first);
        return v != nullptr && *v == kv.second;
      });
      ok = ok && !(key.node_affinity &&
                   !model::MatchesNodeSelector(*key.node_affinity, info.name, info.labels));
    }
    for (const api::Taint& t : s.node(n).taints) {
      ok = ok && !(key.honor_taints && (t.effect == "NoSchedule" || t.effect == "NoExecute") &&
                   !alloc::Tolerates(key.tolerations, t));
    }
    if (!ok) continue;
    d->eligible[n] = 1;
    if (!d->domain_eligible[it->second]) ++d->eligible_domains;
    d->domain_eligible[it->second] = 1;
  }
  entries_.emplace_back(std::move(key), d);
  return d;
}

std::shared_ptr<const std::vector<int>> SpreadDomainCache::OfNode(const Snapshot& s,
                                                                  const std::string& key) {
  if (snapshot_ != &s) entries_.clear(), keys_.clear();
  snapshot_ = &s;
  auto it = keys_.find(key);
  if (it != keys_.end()) return it->second;
  const model::Inventory& inv = s.inventory();
  auto of_node = std::make_shared<std::vector<int>>(inv.nodes().size(), -1);
  std::map<std::string, int> index;
  for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
    const std::string* value = Label(inv.nodes()[n].labels, key);
    if (value != nullptr) {
      (*of_node)[n] = index.emplace(*value, static_cast<int>(index.size())).first->second;
    }
  }
  return keys_.emplace(key, std::move(of_node)).first->second;
}

PodTopology::PodTopology(const Snapshot& s, const PodInfo& pod, SpreadDomainCache* cache)
    : self_(pod.labels), ns_(pod.pod->metadata.namespace_name) {
  if (!self_) {
    auto made = std::make_shared<PodLabels>();
    made->ns = ns_;
    made->labels = pod.pod->metadata.labels;
    self_ = std::move(made);
  }
  const api::PodSpec& spec = pod.pod->spec;
  if (spec.affinity) {
    affinity_ = Required(spec.affinity->pod_affinity);
    anti_ = Required(spec.affinity->pod_anti_affinity);
  }
  if (affinity_ != nullptr) {
    affinity_counts_.resize(affinity_->size());
    self_matches_all_ = std::all_of(affinity_->begin(), affinity_->end(),
                                    [&](const auto& t) { return TermMatches(t, ns_, *self_); });
  }
  if (anti_ != nullptr) anti_domains_.resize(anti_->size());
  CountTerms(s);
  SpreadDomainCache local;
  for (const api::TopologySpreadConstraint& c : spec.topology_spread_constraints) {
    if (!DoNotSchedule(c)) continue;
    Spread sp{&c,
              (cache != nullptr ? *cache : local).Get(s, pod, c),
              {},
              0,
              c.label_selector && MatchesLabels(*c.label_selector, self_->labels)};
    CountSpread(s, sp);
    spread_.push_back(std::move(sp));
  }
}

void PodTopology::CountTerms(const Snapshot& s) {
  const model::Inventory& inv = s.inventory();
  // The placed pods each term matches, in the node's domain of the term's key.
  auto count = [&](const api::PodAffinityTerm& t, auto&& add) {
    if (!t.label_selector) return;
    for (const PodPlacement* pl : s.Candidates(*t.label_selector)) {
      if (pl->node == model::kNoId || !pl->labels) continue;
      const std::string* domain = Label(inv.nodes()[pl->node].labels, t.topology_key);
      if (domain != nullptr && TermMatches(t, ns_, *pl->labels)) {
        add(*domain);
      }
    }
  };
  for (size_t i = 0; affinity_ != nullptr && i < affinity_->size(); ++i) {
    count((*affinity_)[i], [&](const std::string& domain) {
      ++affinity_counts_[i][domain];
      any_affinity_match_ = true;
    });
  }
  for (size_t i = 0; anti_ != nullptr && i < anti_->size(); ++i) {
    count((*anti_)[i], [&](const std::string& domain) { anti_domains_[i].insert(domain); });
  }
  for (const PodPlacement* pl : s.AntiAffinityCandidates(self_->labels)) {
    if (pl->node == model::kNoId) continue;
    for (const api::PodAffinityTerm& t : pl->labels->anti_affinity) {
      const std::string* domain = Label(inv.nodes()[pl->node].labels, t.topology_key);
      if (domain != nullptr && TermMatches(t, pl->labels->ns, *self_)) {
        existing_anti_[t.topology_key].insert(*domain);
      }
    }
  }
}

void PodTopology::CountSpread(const Snapshot& s, Spread& sp) const {
  const SpreadDomains& d = *sp.domains;
  sp.counts.assign(d.domain_eligible.size(), 0);
  if (sp.c->label_selector) {
    for (const PodPlacement* pl : s.Candidates(*sp.c->label_selector)) {
      if (pl->node == model::kNoId || !pl->labels || !d.eligible[pl->node]) continue;
      const PodLabels& other = *pl->labels;
      if (!other.terminating && other.ns == ns_ &&
          MatchesLabels(*sp.c->label_selector, other.labels)) {
        ++sp.counts[d.of_node[pl->node]];
      }
    }
  }
  sp.min = INT_MAX;
  for (size_t i = 0; i < sp.counts.size(); ++i) {
    if (d.domain_eligible[i]) sp.min = std::min(sp.min, sp.counts[i]);
  }
  if (d.eligible_domains == 0 || d.eligible_domains < sp.c->min_domains.value_or(1)) sp.min = 0;
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
      if (a->labels && TermMatches(t, ns_, *a->labels)) here = any_match = true;
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
      if (a->labels && TermMatches(t, ns_, *a->labels)) {
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
      if (node.contains(t.topology_key) && TermMatches(t, a->labels->ns, *self_)) {
        return Rule::kPodAntiAffinity;
      }
    }
  }
  return std::nullopt;
}

bool PodTopology::SpreadFits(const Spread& sp, model::NodeId node,
                             const std::vector<const PodInfo*>& also) const {
  const SpreadDomains& d = *sp.domains;
  const int domain = d.of_node[node];
  if (domain < 0) return false;
  int extra = 0;
  for (size_t i = 0; d.eligible[node] && i < also.size(); ++i) {
    const PodInfo* a = also[i];
    if (a->labels && !a->labels->terminating && a->labels->ns == ns_ && sp.c->label_selector &&
        MatchesLabels(*sp.c->label_selector, a->labels->labels)) {
      ++extra;
    }
  }
  int min = sp.min;
  if (extra > 0 && d.eligible_domains >= sp.c->min_domains.value_or(1)) {
    min = INT_MAX;  // the node's domain may have been the emptiest
    for (size_t i = 0; i < sp.counts.size(); ++i) {
      if (d.domain_eligible[i]) {
        min = std::min(min, sp.counts[i] + (static_cast<int>(i) == domain ? extra : 0));
      }
    }
  }
  return sp.counts[domain] + extra + (sp.self ? 1 : 0) - min <= sp.c->max_skew;
}

std::optional<Rule> PodTopology::Check(const Snapshot& s, model::NodeId node,
                                       const std::vector<const PodInfo*>& also) const {
  const std::map<std::string, std::string>& labels = s.inventory().nodes()[node].labels;
  for (const Spread& sp : spread_) {
    if (!SpreadFits(sp, node, also)) return Rule::kTopologySpread;
  }
  if (affinity_ != nullptr) {
    if (std::optional<Rule> r = CheckAffinity(labels, also)) return r;
  }
  return CheckAnti(labels, also);
}

}  // namespace gpuplane::sched
