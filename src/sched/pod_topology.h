// Placing pods by other pods' labels, as kube-scheduler's InterPodAffinity and PodTopologySpread
// filters decide (Kubernetes 1.35):
// - required podAffinity: each term needs a placed pod it matches in the node's domain of its
//   topologyKey (a pod whose terms no placed pod matches may go anywhere with the keys if it
//   matches all its terms itself: the first of a set of pods asking to be together);
// - required podAntiAffinity: no placed pod a term matches in the node's domain, and no placed
//   pod whose own anti-affinity term matches this pod in the domain (symmetry);
// - topologySpreadConstraints with DoNotSchedule: the pods matching the selector in the pod's
//   namespace (not being deleted) per domain of the key over the eligible nodes (those with
//   every constraint's key, matching the pod's nodeSelector and node affinity unless the
//   constraint's nodeAffinityPolicy is Ignore, with taints it tolerates when its
//   nodeTaintsPolicy is Honor); the node's domain with this pod
//   may exceed the emptiest domain (0 when there are fewer domains than minDomains) by at most
//   maxSkew. A node without the key fails.
// Pods counted are those placed in the Snapshot: bound, and placed earlier in the pass.
// A term reaches the pods of the namespaces it lists and of those whose labels its
// namespaceSelector matches (an empty selector: every namespace); with neither, its own pod's
// namespace. Namespace labels are the Namespace objects' (sched/pod_set.h), with
// kubernetes.io/metadata.name=<name>, which the API server sets on every namespace.
// Difference from kube-scheduler: each affinity term counts its own matches (kube pools terms
// that share a topology key).
//
// PodLabels are plain values, shared read-only between a PodInfo and its placements.
// PodTopology borrows the pod and snapshot it was made for and is valid until the snapshot
// changes (Snapshot::version). Placed pods are found through the snapshot's label index
// (Snapshot::Candidates), so a pod's counts cost the pods its selectors may match, not every
// placed pod. Not synchronized.
#ifndef GPUPLANE_SCHED_POD_TOPOLOGY_H_
#define GPUPLANE_SCHED_POD_TOPOLOGY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/core_types.h"
#include "model/inventory.h"
#include "sched/status.h"

namespace gpuplane::sched {

struct PodInfo;
class Snapshot;
struct PodPlacement;

// A term of a placed pod that scores the pods placed after it, as kube-scheduler's
// InterPodAffinity scores existing pods' terms (sched/preferences.h): its preferred pod
// affinity terms (their weight), preferred anti-affinity terms (minus their weight) and
// required affinity terms (1, kube's default hardPodAffinityWeight).
struct ScoringTerm {
  api::PodAffinityTerm term;
  int32_t weight = 0;
};

// A namespace's labels, shared by the PodLabels of its pods.
using NamespaceLabels = std::shared_ptr<const std::map<std::string, std::string>>;

// What other pods' terms read of a pod: its namespace and the namespace's labels, its labels,
// required anti-affinity terms (which bind the pods placed after it), the terms that score the
// pods placed after it, and whether it is being deleted.
struct PodLabels {
  std::string ns;
  NamespaceLabels ns_labels;  // null reads as no labels
  std::map<std::string, std::string> labels;
  std::vector<api::PodAffinityTerm> anti_affinity;
  std::vector<ScoringTerm> scoring;
  bool terminating = false;
};

// Whether `labels` satisfy every matchLabels pair and requirement of `s`.
bool MatchesLabels(const api::LabelSelector& s, const std::map<std::string, std::string>& labels);

// Whether `term`, written in a pod of namespace `owner_ns`, matches the pod `other` (a missing
// labelSelector matches nothing).
bool TermMatches(const api::PodAffinityTerm& term, const std::string& owner_ns,
                 const PodLabels& other);

// Whether the pod asks for anything the filters below check: a required pod affinity or
// anti-affinity term, or a DoNotSchedule spread constraint.
bool AsksPodTopology(const api::PodSpec& spec);

// The domains of a spread constraint's topology key over a snapshot's nodes, and which nodes
// it counts for a pod (its eligibility rules above; the keys a node must have are those of
// the pod's constraints with the same whenUnsatisfiable). It depends on the nodes and the pod's
// node constraints only, so pods alike share one (SpreadDomainCache).
struct SpreadDomains {
  std::vector<int> of_node;           // by node: its domain's index, -1 without the key
  std::vector<char> eligible;         // by node: its pods are counted
  std::vector<char> domain_eligible;  // by domain: holds an eligible node
  int eligible_domains = 0;
};

// SpreadDomains by what they depend on, for one snapshot's nodes (entries are dropped when
// another snapshot is asked about). Not synchronized.
class SpreadDomainCache {
 public:
  std::shared_ptr<const SpreadDomains> Get(const Snapshot& s, const PodInfo& pod,
                                           const api::TopologySpreadConstraint& c);
  // By node: the index of its value of label `key` among the snapshot's nodes' values (-1
  // without the label).
  std::shared_ptr<const std::vector<int>> OfNode(const Snapshot& s, const std::string& key);

 private:
  struct Key {
    std::map<std::string, std::string> node_selector;
    std::optional<api::NodeSelector> node_affinity;
    std::vector<api::Toleration> tolerations;
    std::vector<std::string> keys;  // the key of every constraint as strict as this one
    std::string key;
    bool honor_affinity = true, honor_taints = false;
    bool operator==(const Key&) const = default;
  };
  const Snapshot* snapshot_ = nullptr;
  std::vector<std::pair<Key, std::shared_ptr<const SpreadDomains>>> entries_;
  std::map<std::string, std::shared_ptr<const std::vector<int>>> keys_;
};

// The counts kube-scheduler's PreFilter takes, for one pod against one snapshot. `cache`
// (optional) shares the spread constraints' domains between pods. A pod without PodInfo::labels
// is read with no namespace labels.
class PodTopology {
 public:
  PodTopology(const Snapshot& s, const PodInfo& pod, SpreadDomainCache* cache = nullptr);

  // The rule that rejects `node`: kPodAffinity, kPodAntiAffinity or kTopologySpread; `also`
  // are pods going to `node` with this one (a gang's members placed together), counted as
  // placed there.
  std::optional<Rule> Check(const Snapshot& s, model::NodeId node,
                            const std::vector<const PodInfo*>& also) const;

 private:
  struct Spread {
    const api::TopologySpreadConstraint* c;
    std::shared_ptr<const SpreadDomains> domains;
    std::vector<int> counts;  // by domain: matching pods on eligible nodes
    int min = 0;              // over eligible domains (0 when fewer than minDomains)
    bool self = false;        // the pod matches its own selector
  };
  std::optional<Rule> CheckAffinity(const std::map<std::string, std::string>& node,
                                    const std::vector<const PodInfo*>& also) const;
  std::optional<Rule> CheckAnti(const std::map<std::string, std::string>& node,
                                const std::vector<const PodInfo*>& also) const;
  bool SpreadFits(const Spread& sp, model::NodeId node,
                  const std::vector<const PodInfo*>& also) const;
  void CountTerms(const Snapshot& s);
  void CountSpread(const Snapshot& s, Spread& sp) const;

  std::shared_ptr<const PodLabels> self_;  // the pod's (PodInfo::labels, or made from the pod)
  std::string ns_;                         // self_->ns
  const std::vector<api::PodAffinityTerm>* affinity_ = nullptr;
  const std::vector<api::PodAffinityTerm>* anti_ = nullptr;
  std::vector<std::map<std::string, int>> affinity_counts_;  // per term: domain -> pods
  bool any_affinity_match_ = false;
  bool self_matches_all_ = false;
  std::vector<std::set<std::string>> anti_domains_;             // per term: domains holding a match
  std::map<std::string, std::set<std::string>> existing_anti_;  // key -> domains refusing it
  std::vector<Spread> spread_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_POD_TOPOLOGY_H_
