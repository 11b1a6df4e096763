// Scoring nodes by a pod's preferences, as kube-scheduler's score plugins do with their default
// weights (Kubernetes 1.35, pkg/scheduler/apis/config/v1 default plugins), each plugin's score
// normalized to 0-100 over the nodes scored:
// - NodeAffinity (x2): the weights of the preferred node affinity terms the node matches, the
//   highest 100;
// - TaintToleration (x3): the node's PreferNoSchedule taints the pod does not tolerate (by its
//   tolerations with effect PreferNoSchedule or none), the fewest 100;
// - InterPodAffinity (x2): per preferred pod affinity term its weight, per preferred
//   anti-affinity term minus its weight, for each placed pod the term matches in the node's
//   domain of its topologyKey (namespaces as for required terms, sched/pod_topology.h); and
//   the same for placed pods' terms that match this pod, in the domain of the placed pod's
//   node (their preferred terms, and required affinity terms with weight 1: PodLabels::scoring);
//   the lowest 0, the highest 100;
// - PodTopologySpread (x2), ScheduleAnyway constraints: per constraint, the pods matching its
//   selector in the pod's namespace in the node's domain (over the nodes with every
//   ScheduleAnyway key, its nodeAffinityPolicy and nodeTaintsPolicy as for DoNotSchedule)
//   times log(domains + 2), plus maxSkew - 1; the fewest 100, a node without a key 0.
// The Session tries a pod's nodes by this score, highest first, its policy's order among
// equals; a pod with no preference, no placed pod's term matching it and no PreferNoSchedule
// taint in the cluster is not scored and keeps the policy's order. Differences from
// kube-scheduler: its resource scorers (NodeResourcesFit, BalancedAllocation) are the
// policy's order; a gang's members are scored in a first pass that falls back to the gang's
// search without scores (sched/gang.cc); a Placer's picks are not scored.
// Ownership and threads: the functions read the Snapshot and PodInfo they are given (borrowed
// for the call, not kept) and write only the SpreadDomainCache passed in; calls on distinct
// caches may run on different threads, calls sharing one cache may not.
#ifndef GPUPLANE_SCHED_PREFERENCES_H_
#define GPUPLANE_SCHED_PREFERENCES_H_

#include <cstdint>
#include <vector>

#include "api/core_types.h"
#include "model/inventory.h"

namespace gpuplane::sched {

struct PodInfo;
class Snapshot;
class SpreadDomainCache;

// Whether the pod states a preference read below: a preferred node or pod (anti-)affinity
// term, or a ScheduleAnyway spread constraint.
bool HasPreferences(const api::PodSpec& spec);

// Whether a pod placed in `s` holds a term that scores `pod` (PodLabels::scoring: its preferred
// or required pod affinity terms, or preferred anti-affinity terms, that match the pod).
bool ScoredByPlacedPods(const Snapshot& s, const PodInfo& pod);

// Whether some node of `s` has a PreferNoSchedule taint (then every pod is scored).
bool AnyPreferNoSchedule(const Snapshot& s);

// The scores of `nodes` for `pod` (0-900, by position in `nodes`), normalized over `nodes`.
// `cache` (optional) shares spread domains between pods.
std::vector<int64_t> ScoreNodes(const Snapshot& s, const PodInfo& pod,
                                const std::vector<model::NodeId>& nodes, SpreadDomainCache* cache);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_PREFERENCES_H_
