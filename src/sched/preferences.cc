#include "sched/preferences.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "alloc/request.h"
#include "model/node_selector.h"
#include "sched/pod_set.h"
#include "sched/pod_topology.h"
#include "sched/snapshot.h"

namespace gpuplane::sched {
namespace {

constexpr int64_t kMax = 100;  // kube-scheduler's MaxNodeScore
// Default score weights (see the header).
constexpr int64_t kNodeAffinityWeight = 2, kTaintWeight = 3, kPodAffinityWeight = 2,
                  kSpreadWeight = 2;

bool ScheduleAnyway(const api::TopologySpreadConstraint& c) {
  return c.when_unsatisfiable == "ScheduleAnyway";
}

bool Scored(const api::WeightedPodAffinityTerm& t) { return t.weight != 0; }

// Calls `fn(placement, term)` for each placed pod's scoring term (PodLabels::scoring) that
// matches `pod`, while `fn` returns true.
template <typename Fn>
void ForPlacedTermsMatching(const Snapshot& s, const PodLabels& pod, Fn&& fn) {
  if (s.scoring_pods() == 0) return;
  for (const PodPlacement* pl : s.ScoringCandidates(pod.labels)) {
    if (pl->node == model::kNoId || !pl->labels) continue;
    for (const ScoringTerm& t : pl->labels->scoring) {
      if (TermMatches(t.term, pl->labels->ns, pod) && !fn(*pl, t)) return;
    }
  }
}

// Each score scaled so the highest is kMax (all 0 when none is above 0).
void ScaleToHighest(std::vector<int64_t>& raw) {
  const int64_t high = raw.empty() ? 0 : *std::max_element(raw.begin(), raw.end());
  for (int64_t& r : raw) r = high > 0 ? r * kMax / high : 0;
}

std::vector<int64_t> NodeAffinityScores(const Snapshot& s, const api::PodSpec& spec,
                                        const std::vector<model::NodeId>& nodes) {
  std::vector<int64_t> raw(nodes.size(), 0);
  if (!spec.affinity || !spec.affinity->node_affinity) return raw;
  const std::vector<api::PreferredSchedulingTerm>& terms = spec.affinity->node_affinity->preferred;
  if (terms.empty()) return raw;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const model::NodeInfo& info = s.inventory().nodes()[nodes[i]];
    for (const api::PreferredSchedulingTerm& t : terms) {
      if (model::MatchesNodeSelectorTerm(t.preference, info.name, info.labels)) raw[i] += t.weight;
    }
  }
  ScaleToHighest(raw);
  return raw;
}

std::vector<int64_t> TaintScores(const Snapshot& s, const api::PodSpec& spec,
                                 const std::vector<model::NodeId>& nodes) {
  std::vector<api::Toleration> tolerations;
  for (const api::Toleration& t : spec.tolerations) {
    if (t.effect.empty() || t.effect == "PreferNoSchedule") tolerations.push_back(t);
  }
  std::vector<int64_t> raw(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const api::Taint& t : s.node(nodes[i]).taints) {
      if (t.effect == "PreferNoSchedule" && !alloc::Tolerates(tolerations, t)) ++raw[i];
    }
  }
  const int64_t high = raw.empty() ? 0 : *std::max_element(raw.begin(), raw.end());
  for (int64_t& r : raw) r = high > 0 ? kMax - r * kMax / high : kMax;
  return raw;
}

std::vector<int64_t> PodAffinityScores(const Snapshot& s, const PodInfo& pod,
                                       const std::vector<model::NodeId>& nodes,
                                       SpreadDomainCache& cache) {
  std::vector<int64_t> raw(nodes.size(), 0);
  const api::PodSpec& spec = pod.pod->spec;
  const std::string& ns = pod.pod->metadata.namespace_name;
  // Per topology key, per domain: the terms' weights times the placed pods they match there.
  struct KeyScores {
    std::shared_ptr<const std::vector<int>> of_node;
    std::vector<int64_t> by_domain;
  };
  std::map<std::string, KeyScores> by_key;
  auto add = [&](const std::string& key, model::NodeId node, int64_t weight) {
    KeyScores& k = by_key[key];
    if (!k.of_node) k.of_node = cache.OfNode(s, key);
    const int domain = (*k.of_node)[node];
    if (domain < 0) return;
    if (k.by_domain.size() <= static_cast<size_t>(domain)) k.by_domain.resize(domain + 1, 0);
    k.by_domain[domain] += weight;
  };
  const std::optional<api::PodAffinity> none;
  const api::Affinity* a = spec.affinity ? &*spec.affinity : nullptr;
  for (const auto& [sign, terms] : {std::pair{1, a ? &a->pod_affinity : &none},
                                    std::pair{-1, a ? &a->pod_anti_affinity : &none}}) {
    if (!*terms) continue;
    for (const api::WeightedPodAffinityTerm& w : (*terms)->preferred) {
      if (!Scored(w) || !w.term.label_selector) continue;
      for (const PodPlacement* pl : s.Candidates(*w.term.label_selector)) {
        if (pl->node == model::kNoId || !pl->labels || !TermMatches(w.term, ns, *pl->labels)) {
          continue;
        }
        add(w.term.topology_key, pl->node, static_cast<int64_t>(sign) * w.weight);
      }
    }
  }
  // Symmetry: placed pods' terms that match this pod.
  if (pod.labels) {
    ForPlacedTermsMatching(s, *pod.labels, [&](const PodPlacement& pl, const ScoringTerm& t) {
      add(t.term.topology_key, pl.node, t.weight);
      return true;
    });
  }
  if (by_key.empty()) return raw;
  for (const auto& [key, k] : by_key) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int domain = (*k.of_node)[nodes[i]];
      if (domain >= 0 && static_cast<size_t>(domain) < k.by_domain.size()) {
        raw[i] += k.by_domain[domain];
      }
    }
  }
  const auto [low, high] = std::minmax_element(raw.begin(), raw.end());
  const int64_t lo = *low, span = *high - *low;
  for (int64_t& r : raw) r = span > 0 ? (r - lo) * kMax / span : 0;
  return raw;
}

std::vector<int64_t> SpreadScores(const Snapshot& s, const PodInfo& pod,
                                  const std::vector<model::NodeId>& nodes,
                                  SpreadDomainCache& cache) {
  std::vector<int64_t> raw(nodes.size(), 0);
  const api::PodSpec& spec = pod.pod->spec;
  const std::string& ns = pod.pod->metadata.namespace_name;
  std::vector<char> ignored(nodes.size(), 0);
  std::vector<double> score(nodes.size(), 0);
  bool any = false;
  for (const api::TopologySpreadConstraint& c : spec.topology_spread_constraints) {
    if (!ScheduleAnyway(c)) continue;
    any = true;
    std::shared_ptr<const SpreadDomains> d = cache.Get(s, pod, c);
    std::vector<int64_t> counts(d->domain_eligible.size(), 0);
    if (c.label_selector) {
      for (const PodPlacement* pl : s.Candidates(*c.label_selector)) {
        if (pl->node == model::kNoId || !pl->labels || !d->eligible[pl->node]) continue;
        const PodLabels& other = *pl->labels;
        if (!other.terminating && other.ns == ns &&
            MatchesLabels(*c.label_selector, other.labels)) {
          ++counts[d->of_node[pl->node]];
        }
      }
    }
    // kube-scheduler's topologyNormalizingWeight: log(domains + 2).
    const double weight = std::log(static_cast<double>(d->eligible_domains) + 2);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int domain = d->of_node[nodes[i]];
      if (domain < 0 || !d->eligible[nodes[i]]) {
        ignored[i] = 1;
        continue;
      }
      score[i] += static_cast<double>(counts[domain]) * weight + (c.max_skew - 1);
    }
  }
  if (!any) return raw;
  int64_t low = INT64_MAX, high = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    raw[i] = std::llround(score[i]);
    if (ignored[i]) continue;
    low = std::min(low, raw[i]);
    high = std::max(high, raw[i]);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (ignored[i]) {
      raw[i] = 0;
    } else {
      raw[i] = high == 0 ? kMax : kMax * (high + low - raw[i]) / high;
    }
  }
  return raw;
}

}  // namespace

bool HasPreferences(const api::PodSpec& spec) {
  if (std::any_of(spec.topology_spread_constraints.begin(), spec.topology_spread_constraints.end(),
                  ScheduleAnyway)) {
    return true;
  }
  if (!spec.affinity) return false;
  const api::Affinity& a = *spec.affinity;
  return (a.node_affinity && !a.node_affinity->preferred.empty()) ||
         (a.pod_affinity && !a.pod_affinity->preferred.empty()) ||
         (a.pod_anti_affinity && !a.pod_anti_affinity->preferred.empty());
}

bool ScoredByPlacedPods(const Snapshot& s, const PodInfo& pod) {
  bool any = false;
  if (pod.labels) {
    ForPlacedTermsMatching(s, *pod.labels, [&any](const PodPlacement&, const ScoringTerm&) {
      any = true;
      return false;
    });
  }
  return any;
}

bool AnyPreferNoSchedule(const Snapshot& s) {
  for (model::NodeId n = 0; n < s.inventory().nodes().size(); ++n) {
    for (const api::Taint& t : s.node(n).taints) {
      if (t.effect == "PreferNoSchedule") return true;
    }
  }
  return false;
}

std::vector<int64_t> ScoreNodes(const Snapshot& s, const PodInfo& pod,
                                const std::vector<model::NodeId>& nodes, SpreadDomainCache* cache) {
  SpreadDomainCache local;
  const api::PodSpec& spec = pod.pod->spec;
  std::vector<int64_t> total(nodes.size(), 0);
  if (nodes.empty()) return total;
  auto add = [&](const std::vector<int64_t>& scores, int64_t weight) {
    for (size_t i = 0; i < nodes.size(); ++i) total[i] += weight * scores[i];
  };
  add(NodeAffinityScores(s, spec, nodes), kNodeAffinityWeight);
  add(TaintScores(s, spec, nodes), kTaintWeight);
  SpreadDomainCache& domains = cache != nullptr ? *cache : local;
  add(PodAffinityScores(s, pod, nodes, domains), kPodAffinityWeight);
  add(SpreadScores(s, pod, nodes, domains), kSpreadWeight);
  return total;
}

}  // namespace gpuplane::sched
