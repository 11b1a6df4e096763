// One scheduling pass over a Snapshot: pods and gangs in queue order, each decided with a typed
// Status. A pod goes to the first node, in the policy's node order, that passes the node
// filters and on which the allocator allocates all its claims that are not allocated yet
// (claims it shares with a pod already placed pin it to their node); the node index skips
// nodes whose free devices cannot fit it. A gang (PodGroup, Workload pod group, or a pod asking
// for topology) is placed in one Statement, all members or at least its minimum, else nothing:
// a depth-first search over members and nodes that re-allocates a node's members jointly when
// one more does not fit beside them, so when any placement of the gang exists on the snapshot
// the search finds one (within a bound on allocator calls, reported as an Error). With a
// required topology level the gang is tried in each domain, fullest first; a preferred level
// falls back to the whole cluster. Engines that decide pods as they arrive (the simulator)
// call Decide and Evict instead of Run; a Placer plugin (SessionOptions::placer) then names
// each single pod's node and devices, and hears of every placement and eviction.
//
// Ownership: borrows the snapshot and the pod set, which must outlive it; decisions are
// committed to the snapshot as they are made. Not thread-safe.
#ifndef GPUPLANE_SCHED_SESSION_H_
#define GPUPLANE_SCHED_SESSION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloc/allocator.h"
#include "sched/plugins.h"
#include "sched/pod_set.h"
#include "sched/queue_ledger.h"
#include "sched/queues.h"
#include "sched/snapshot.h"
#include "sched/statement.h"
#include "sched/status.h"
#include "sched/topology.h"
#include "sched/victims.h"
#include "util/clock.h"

namespace gpuplane::sched {

struct Decision {
  Status status = Status::Of(Code::kUnschedulable, Stage::kNone, "not decided");
  model::NodeId node = model::kNoId;
  // Every claim the pod uses ("ns/name") with its allocation, when scheduled.
  std::vector<std::pair<std::string, api::AllocationResult>> claims;
  // Its unbound WaitForFirstConsumer claims' volumes on the node, when scheduled.
  std::vector<VolumeChoice> volumes;
  double seconds = 0;  // time this decision took (its gang's, for members), on options.clock
  // Preemption: the pod does not fit now, but will on `nominated` once the running `victims`
  // (indices into PodSet::pods; whole jobs) are gone; every member of a preempting gang names
  // its own node and all the gang's victims. Lost work in GPU-seconds (checkpoints.h).
  // `nominated` without victims: it preempted before and waits for its victims to leave.
  model::NodeId nominated = model::kNoId;
  std::vector<size_t> victims;
  double lost_gpu_seconds = 0;
};

// Preemption in Run: a pod or gang that fits nowhere may evict running pods of lower priority
// (spec.priority), always whole jobs (a gang's bound members all go, never a part), choosing
// the set that loses the least work: for a pod, on each node the victims it would need there
// (every lower-priority job on the node evicted in a what-if Statement, then each job given
// back while the pod still fits, the costliest first), and the node with the least lost work;
// for a gang, every lower-priority job evicted in a what-if, the gang placed, jobs on nodes it
// does not use given back, then each of the others while it still fits. Nothing is evicted in
// the snapshot (the victims still hold their devices until they are gone): the preemptor's
// nodes are held for it instead, for the rest of the pass and, through the pods'
// status.nominatedNodeName, in later passes (Rule::kReserved). A pod with
// preemptionPolicy Never does not preempt; one whose nominated node still has lower-priority
// pods terminating or devices held by claims no placed pod uses (its victims leaving) waits
// (nominated, no victims) rather than preempting more. A job with a member within its
// gpuplane.io/min-runtime (checkpoints.h; else its queue's spec.minRuntime) is never a victim,
// and one within its queue's guarantee window only when no other victims make room.
// With queues (SessionOptions::queues),
// who may evict whom follows victims.h: within a queue, lower priority only; across queues
// (reclaim), whatever the priorities, only while the preemptor's queue stays within its fair
// share of the cluster's devices and every victim's queue at or above its own (shares from
// the queues' `gpu` guarantee, limit and weight against their demand, once per pass); a pod
// whose queue is at its share says so in its status.
struct PreemptionOptions {
  bool enabled = false;
  double now = 0;  // seconds since 1970: lost work is counted up to this time
  // Whether evicting these pods (one job) at once would break a PodDisruptionBudget; such a
  // job is not a victim. Null: no budgets.
  std::function<bool(const std::vector<const PodInfo*>&)> is_protected;
  int64_t budget = 50'000;  // allocator calls preemption may spend in one Run
};

// How devices are chosen on a node: the allocator's scoring (NVLink, fragmentation, worth),
// or the first fit it finds, as Kubernetes' allocator does.
enum class DeviceChoice { kScored, kFirstFit };

struct SessionOptions {
  std::string policy = "gpuplane";  // a NodeOrderNames() entry
  LoadModel load;                   // for the load orders ("pack", "spread", "worth-pack")
  DeviceChoice devices = DeviceChoice::kScored;
  // Diagnose failures (which rule, on how many nodes; what would unblock). A simulator that
  // only needs placed-or-not turns it off: an unplaced pod is then Unschedulable without
  // counts.
  bool explain = true;
  // Borrowed; when set, single pods go where it picks (node order and device scoring unused:
  // the allocator takes the picked devices where it can, else its first fit). Gangs keep the
  // Session's own search.
  Placer* placer = nullptr;
  int64_t gang_budget = 200'000;  // allocator calls one gang may spend
  // Check every allocation with the independent verifier (alloc/verifier.h) before placing
  // it; a rejection is an Error status (tests turn this on).
  bool verify = false;
  // A single pod starts where the search of the pod before it that may go where it may ended
  // (Session::Cursor); off, every pod searches every node (the reference tests compare with).
  bool twin_cursor = true;
  // Borrowed; when set, each Decision records how long it took on this clock (the CLI passes
  // the monotonic clock). Left null, decisions carry no timing: the Session never reads the
  // time on its own.
  const util::Clock* clock = nullptr;
  PreemptionOptions preemption;
  // Borrowed; when set and not empty, every pod must be in a leaf queue (else Unresolvable,
  // stage queue) and Run and Decide place work only while its queue and the queue's parents
  // stay within their limits (sched/queue_ledger.h; else Unschedulable, stage queue: it waits
  // and does not preempt). The limit is checked on the placement found, not searched for: a
  // firstAvailable claim is not steered to a smaller alternative to stay within a `gpu` limit.
  const QueueTree* queues = nullptr;
  // Fair shares lean against past use (fair_share.h, KAI's time-based fair share) when
  // usage_k > 0: time-decayed device-seconds by queue name (leaves' values count; a queue
  // not named has 0).
  std::map<std::string, double, std::less<>> queue_usage;
  double usage_k = 0;
  // Opportunistic headroom (with queues and preemption on): work of an opportunistic queue
  // (`gpu` weight 0, no guarantee) starts only when the devices its queues' runs within their
  // guarantee windows hold, plus what it needs, plus what the other queues' work holds and
  // waits for, plus this expected rise of theirs within the window (the caller's forecast;
  // 0: none), fit the cluster's devices; else it waits (Unschedulable, stage queue), so it
  // is not started only to be evicted within its window.
  double opportunistic_rise = 0;
};

class Session {
 public:
  // Errors: an unknown policy.
  static absl::StatusOr<std::unique_ptr<Session>> Make(Snapshot& snapshot, const PodSet& pods,
                                                       SessionOptions options = {});
  ~Session();

  // Decides every pod not already bound; decisions are parallel to PodSet::pods (bound pods
  // are Scheduled on their node).
  std::vector<Decision> Run();

  // Devices each queue's work holds now (leaves; victims chosen in this pass still count
  // until they are gone), indexed like SessionOptions::queues; empty without queues.
  std::vector<double> QueueDevices() const;
  // With an opportunistic queue among SessionOptions::queues: the devices the work of the
  // other queues holds and waits for now (least devices per waiting pod), what the
  // opportunistic headroom and its forecast are about; else -1.
  double OtherDemand() const;

  // For engines that decide pods one at a time as they arrive (the simulator): decides
  // `pod` now and commits it when placed. A gang member decides its whole gang; the
  // member's own decision is returned. REQUIRES: the pod is not placed.
  Decision Decide(size_t pod);
  // Removes a placed pod (it ended); claims it was the last user of are released.
  absl::Status Evict(size_t pod);

 private:
  struct Group;  // pods being placed on one node together
  Session(Snapshot& snapshot, const PodSet& pods, SessionOptions options,
          std::unique_ptr<NodeOrder> order);
  // options_.clock's time, or 0 without one.
  double Now() const { return options_.clock != nullptr ? options_.clock->Now() : 0; }

  // ---- session.cc: pods and groups of pods on one node
  void PlaceBound(std::vector<Decision>& out);
  Decision DecideSingle(size_t pod);
  Decision DecidePicked(size_t pod);
  // The allocator's choices for the claims `pod` uses (node-local ones, as placed).
  std::vector<alloc::Choice> ChoicesOf(size_t pod) const;
  const alloc::CompiledClaim* Compiled(const ClaimUse& use, Status& problem);
  // The claims a group of pods allocates now (claims not allocated yet, each once).
  struct GroupClaimSet {
    std::vector<const alloc::CompiledClaim*> claims;
    std::vector<std::string> keys;
    std::vector<size_t> owner;  // the pod that allocates each
  };
  std::optional<Rule> FilterGroup(const std::vector<size_t>& pods, model::NodeId node);
  std::vector<const PodInfo*> Members(const std::vector<size_t>& pods) const;
  Status GroupClaims(const std::vector<size_t>& pods, model::NodeId node, Rule& rule,
                     GroupClaimSet& out);
  Status Commit(const std::vector<size_t>& pods, model::NodeId node, const GroupClaimSet& set,
                const alloc::Outcome& outcome, Statement& stmt);
  // Places `pods` on `node` together inside `stmt`; the failure's rule in `rule`. With
  // `alternatives`, an allocation that needs a later firstAvailable subrequest than that
  // counts as not fitting (the pod looks for a node where an earlier one fits first).
  Status PlaceGroup(const std::vector<size_t>& pods, model::NodeId node, Statement& stmt,
                    const alloc::DeviceFilter* filter, Rule& rule, size_t alternatives = SIZE_MAX);
  // The first node (index order, or within `nodes`) where the pod fits, preferring nodes
  // where earlier firstAvailable subrequests fit (as kube-scheduler scores them); kNoId when
  // none. A pod with preferences (preferences.h) tries the nodes that pass the filters and
  // may fit by their score, highest first, at each firstAvailable tier.
  model::NodeId PlacePod(size_t pod, Statement& stmt, const alloc::DeviceFilter* filter,
                         const std::vector<model::NodeId>* nodes, Status& error);
  std::vector<const alloc::CompiledClaim*> FreshClaims(size_t pod, model::NodeId& pinned,
                                                       Status& problem);
  // Where the last single pod's search in index order ended: every node before `position`
  // rejected that pod by a rule pods placed since cannot undo (all but pod affinity, spread
  // and nodes held for preemptors), so while no pod has left the snapshot and the order is
  // the same, a pod that may go where it may (Interchangeable, same namespace and priority)
  // starts there. Template pods of one workload on nodes their CPU, memory or volume limits
  // fill before their devices would otherwise walk every such node again.
  struct Cursor {
    size_t pod = 0;
    size_t position = 0;
    uint64_t removals = 0;
    uint64_t order = 0;
  };
  std::optional<Cursor> cursor_;
  size_t CursorStart(size_t pod) const;  // where `pod`'s search starts: 0, or the cursor's
  // Records where `pod`'s search ended (the position it was placed at, or the end), when every
  // node it passed over rejected it by a kept rule; else there is no cursor.
  void EndSearch(size_t pod, size_t position, bool kept);
  void Fill(size_t pod, model::NodeId node, Decision& d) const;

  // ---- gang.cc
  void DecideGang(size_t gang, std::vector<Decision>& out);
  // Places g's unbound members in stmt (on `nodes` when given): preferences first when some
  // member is scored, else (or when that leaves one out) the exact search. False: rolled back.
  bool SearchGang(const Gang& g, Statement& stmt, const alloc::DeviceFilter* filter,
                  const std::vector<model::NodeId>* nodes);
  bool TryInDomains(const Gang& g, const Topology& topology, Statement& stmt, Status& why);
  const absl::StatusOr<Topology>& TopologyOf(const std::string& level);
  // Fewest devices the gang's minimum of members needs at once (0 when shareable devices
  // could serve several requests).
  int64_t DevicesNeeded(const Gang& g);
  Status GangFailure(const Gang& g);
  std::optional<Status> TooLarge(const Gang& g, const std::vector<size_t>& members);

  // ---- preempt.cc
 public:
  struct Job {  // running work that is evicted whole
    std::vector<size_t> pods;
    std::vector<model::NodeId> nodes;  // parallel to pods; kNoId: a node no longer there
    int32_t priority = 0;              // its highest
    double lost = 0;                   // GPU-seconds lost by evicting it now
    int devices = 0;
    bool evictable = true;  // not leaving already, not protected
    int queue = -1;         // its first pod's leaf queue (-1: no queues)
    // A member is within its min-runtime (gpuplane.io/min-runtime, else its queue's
    // spec.minRuntime): not a victim until the latest member's ends.
    bool min_runtime = false;
    double min_runtime_until = 0;  // seconds since 1970
    bool budget = false;           // a PodDisruptionBudget protects it
    bool in_window = false;        // a member is within its queue's guarantee window
  };

 private:
  // Nodes held for nominated pods (from their status and this pass's preemptions).
  void HoldNominated();
  // The priority below which pods may not be placed on `node` (INT32_MIN: none).
  int32_t Held(model::NodeId node) const;
  const std::vector<Job>& RunningJobs();
  // The pod's nominated node while victims are still leaving it (lower-priority pods
  // terminating there, or devices held by claims no placed pod uses); it then waits.
  std::optional<model::NodeId> Leaving(const PodInfo& p);
  // Jobs `pre` may evict (victims.h's MayEvict: lower priority in its queue, or without
  // queues; across queues only while its queue stays within its fair share and theirs at or
  // above theirs); jobs within their guarantee window only `with_window`.
  std::vector<size_t> EligibleJobs(const Preemptor& pre, bool with_window);
  absl::Status EvictJobs(Statement& stmt, const std::vector<size_t>& jobs) const;
  struct VictimSet {  // a pod's victims on one node
    model::NodeId node = model::kNoId;
    std::vector<size_t> jobs;
    double lost = 0;
    int devices = 0;
    size_t pods = 0;
    bool Better(const VictimSet& o) const;  // less lost work, then fewer devices, pods
  };
  VictimSet MakeVictimSet(model::NodeId n, std::vector<size_t> jobs) const;
  // The cheapest subset of `jobs` (allowed jobs with a pod on `n`) whose eviction lets `pod`
  // fit on `n`, when cheaper than `bound`.
  std::optional<VictimSet> VictimsOnNode(size_t pod, const Preemptor& pre, model::NodeId n,
                                         std::vector<size_t> jobs,
                                         const std::optional<VictimSet>& bound);
  // The cheapest victims among `eligible` that make room for `pod` on one node.
  std::optional<VictimSet> CheapestVictims(size_t pod, const Preemptor& pre,
                                           const std::vector<size_t>& eligible);
  // When no victims were found: names the lower-priority running work `pre` could have
  // evicted by priority but may not (min-runtime, a PodDisruptionBudget) in `status`.
  void NoteProtected(const Preemptor& pre, Status& status);
  void Preempt(size_t pod, Decision& d);
  // The gang's waiting members when every one may preempt (Unschedulable, not held back by a
  // queue limit, preemptionPolicy not Never) and none waits for victims to leave (those are
  // nominated their node), with their lowest priority; else none.
  std::vector<size_t> GangPreemptors(const Gang& g, std::vector<Decision>& out, int32_t& priority);
  void PreemptGang(size_t gang, std::vector<Decision>& out);
  bool PlaceGangIn(const Gang& g, Statement& stmt, Status& why);
  std::vector<size_t> VictimPods(const std::vector<size_t>& jobs, double& lost) const;

  // ---- window_order.cc: work with a guarantee window goes beside runs within theirs
  // Whether `pod`'s queue has a guarantee window (with preemption on: it protects runs).
  bool WindowWork(size_t pod) const;
  // The devices a placed pod of such a queue holds while it is young (placed in this pass,
  // or bound and within its window); else 0.
  double YoungDevices(size_t pod) const;
  // Adds (sign 1) or removes (-1) a placed pod's young devices once they are counted.
  void CountYoung(size_t pod, double sign);
  void BuildYoung();  // young_ from the snapshot, once
  // For window work: nodes holding young runs' devices first (most first), then the
  // policy's order: for a gang (`reorder`) the index's order is changed; a single pod's
  // PlacePod tries BestYoungNode first (cheaper than reordering the index for each pod).
  // RestoreOrder puts the policy's order back.
  void PreferYoung(size_t pod, bool reorder);
  // The node with the most young devices (the earliest in index order among equals) that
  // may fit `claims` at `tier` and is not `tried`; kNoId when none.
  model::NodeId BestYoungNode(const std::vector<const alloc::CompiledClaim*>& claims, size_t tier,
                              const std::vector<bool>& tried);
  void RestoreOrder();

  // ---- diagnose.cc
  Status Diagnose(size_t pod, const std::vector<model::NodeId>* nodes);

  // ---- queue_gate.cc (no-ops without SessionOptions::queues)
  void SetUpQueues();
  // Why `pods` may not be placed now: a pod in no queue, or, before placement
  // (`placed` false), what they need at least takes a queue over its limit; after it, what
  // they hold in the snapshot does. nullopt when they may.
  std::optional<Status> QueueGate(const std::vector<size_t>& pods, bool placed);
  // Before placing work of an opportunistic queue: whether the headroom above lets it start.
  std::optional<Status> HeadroomGate(const std::vector<size_t>& pods);
  // What the cluster has: devices that draw on no counters, and one per counter set (a
  // partitionable GPU, whatever its partitions).
  double DeviceCapacity();
  // Counts what the placed `pods` hold against their queues (Evict gives it back).
  void ChargeQueues(const std::vector<size_t>& pods);
  void RefundQueue(size_t pod);
  // Reclaim across queues: the preemptor that `pods` (waiting, of one job) are, with the
  // devices each needs at least and its queue (-1 without queues).
  Preemptor PreemptorOf(const std::vector<size_t>& pods, int32_t priority) const;
  // Each queue's devices now (placed work, less the victims chosen in this pass, plus their
  // preemptors) and fair share of the cluster's devices (computed once per pass from the
  // queues' `gpu` guarantee, limit and weight and their demand, running and waiting).
  std::vector<QueueUse> QueueUses();
  // Whether evicting `jobs` for `pre` leaves every other queue at or above its fair share.
  bool KeepsQueueFloors(const Preemptor& pre, const std::vector<size_t>& jobs);
  // When `pre`'s queue is at its fair share, says so in `status` (the work waits for it).
  void NoteFairShare(const Preemptor& pre, Status& status);
  // Records a preemption decided in this pass against the queues' devices.
  void NoteReclaim(const Preemptor& pre, const std::vector<size_t>& jobs);

  Snapshot& snap_;
  const PodSet& pods_;
  SessionOptions options_;
  std::unique_ptr<NodeOrder> order_;
  PriorityOrder queue_order_;
  KubeNodeFilter node_filter_;
  alloc::SelectorCache selectors_;
  std::map<std::string, alloc::CompiledClaim> compiled_;
  std::map<std::string, Status> compile_errors_;
  alloc::PreferScorer prefer_;  // the placer's devices
  std::unique_ptr<alloc::Allocator> allocator_;
  std::unique_ptr<alloc::Allocator> explainer_;  // built on the first diagnosis that needs it
  std::map<std::string, absl::StatusOr<Topology>> topologies_;
  bool shareable_ = false;  // the inventory has devices that allow multiple allocations
  int64_t gang_calls_ = 0;
  bool gang_exhausted_ = false;
  // Preemption (preempt.cc).
  std::vector<Job> jobs_;
  bool jobs_built_ = false;
  int32_t lowest_priority_ = INT32_MAX;                   // of the running jobs
  std::vector<bool> doomed_;                              // jobs chosen as victims in this pass
  std::map<model::NodeId, std::vector<size_t>> holders_;  // node -> pods it is held for
  int64_t preempt_calls_ = 0;
  // Queue limits (queue_gate.cc).
  std::unique_ptr<QueueLedger> ledger_;
  std::vector<QueueChoice> queue_of_;      // per pod
  std::map<size_t, QueueCharge> charges_;  // pod -> what it holds against its queue
  std::vector<double> fair_devices_;       // per queue, once the first preemption asks
  std::vector<double> reclaimed_;          // per queue, devices moving by this pass's preemptions
  // Scoring by preferences (preferences.h): spread domains shared by pods alike, and
  // whether some node has a PreferNoSchedule taint (-1: not yet known).
  SpreadDomainCache prefer_domains_;
  int prefer_no_schedule_ = -1;
  // Whether the single pod being placed is scored (its preferences, placed pods' terms matching
  // it, or PreferNoSchedule taints).
  bool Scored(size_t pod);
  // The nodes that pass the filters and may fit `claims` at `tier`, as a heap by score
  // (highest first, young nodes first among equals when prefer_young_, then index order):
  // NextScored takes them out in that order (usually the first fits: no full sort).
  struct ScoredNode {
    int64_t score;
    double young;
    size_t position;
    model::NodeId node;
    bool operator<(const ScoredNode& o) const;  // after `o` in the order above
  };
  std::vector<ScoredNode> ScoredNodes(size_t pod,
                                      const std::vector<const alloc::CompiledClaim*>& claims,
                                      size_t tier);
  static model::NodeId NextScored(std::vector<ScoredNode>& heap);
  // Window work (window_order.cc): young runs' devices per node (empty until first needed),
  // and the policy's order while PreferYoung's is in place.
  std::vector<double> young_;
  double young_opportunistic_ = 0;  // of which opportunistic queues' runs hold
  std::vector<model::NodeId> base_order_;
  bool prefer_young_ = false;  // the single pod being placed tries young nodes first
  // Devices the work of queues that are not opportunistic holds and waits for; computed once
  // per Run (-1: not yet), again for each Decide.
  double other_demand_ = -1;
  double capacity_ = -1;  // DeviceCapacity, once
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_SESSION_H_
