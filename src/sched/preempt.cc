// Preemption: running work of lower priority evicted whole, least lost work first (session.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "sched/checkpoints.h"
#include "sched/session.h"
#include "util/strings.h"

namespace gpuplane::sched {

void Session::HoldNominated() {
  holders_.clear();
  for (size_t i = 0; i < pods_.pods.size(); ++i) {
    const PodInfo& p = pods_.pods[i];
    if (!p.bound_node.empty() || p.nominated_node.empty()) continue;
    if (std::optional<model::NodeId> n = snap_.inventory().FindNode(p.nominated_node)) {
      holders_[*n].push_back(i);
    }
  }
}

int32_t Session::Held(model::NodeId node) const {
  if (holders_.empty()) return INT32_MIN;
  auto it = holders_.find(node);
  if (it == holders_.end()) return INT32_MIN;
  int32_t held = INT32_MIN;
  for (size_t pod : it->second) {
    // A holder placed elsewhere in this pass (or here) holds nothing any more.
    if (snap_.placement(pods_.pods[pod].key) == nullptr) {
      held = std::max(held, pods_.pods[pod].priority);
    }
  }
  return held;
}

namespace {

// The gang a running pod belongs to (bound pods are not members of the PodSet's gangs, which
// are the work still to place): its PodGroup, or its Workload's pod group and replica; "" for
// none.
std::string GangKey(const api::Pod& pod) {
  const std::string& ns = pod.metadata.namespace_name;
  auto label = pod.metadata.labels.find(kPodGroupLabel);
  if (label != pod.metadata.labels.end()) return util::Cat("PodGroup/", ns, "/", label->second);
  if (const std::optional<api::WorkloadReference>& w = pod.spec.workload_ref) {
    return util::Cat("Workload/", ns, "/", w->name, "/", w->pod_group, "/",
                     w->pod_group_replica_key);
  }
  return "";
}

// Seconds between a victim's termination signal and its kill: its terminationGracePeriodSeconds,
// which the API server defaults to 30 and treats as 1 when negative.
double GraceSeconds(const api::PodSpec& spec) {
  constexpr int64_t kDefaultGrace = 30;
  const int64_t grace = spec.termination_grace_period_seconds.value_or(kDefaultGrace);
  return static_cast<double>(grace < 0 ? 1 : grace);
}

}  // namespace

const std::vector<Session::Job>& Session::RunningJobs() {
  if (jobs_built_) return jobs_;
  jobs_built_ = true;
  const double now = options_.preemption.now;
  std::map<std::string, size_t> by_gang;
  std::vector<std::set<std::string>> claims;  // per job: devices of a shared claim count once
  for (size_t i = 0; i < pods_.pods.size(); ++i) {
    const PodInfo& p = pods_.pods[i];
    if (p.bound_node.empty() || snap_.placement(p.key) == nullptr) continue;
    size_t j = jobs_.size();
    if (std::string gang = GangKey(*p.pod); !gang.empty()) {
      j = by_gang.emplace(gang, jobs_.size()).first->second;
    }
    if (j == jobs_.size()) {
      jobs_.emplace_back();
      jobs_.back().priority = p.priority;
      jobs_.back().queue = ledger_ ? queue_of_[i].queue : -1;
      claims.emplace_back();
    }
    Job& job = jobs_[j];
    job.pods.push_back(i);
    job.nodes.push_back(snap_.placement(p.key)->node);
    job.priority = std::max(job.priority, p.priority);
    job.evictable = job.evictable && !p.terminating;
    int devices = 0;
    for (const ClaimUse& u : p.claims) {
      const ClaimAllocation* a = snap_.claim(u.key);
      if (a != nullptr && claims[j].insert(u.key).second) {
        devices += static_cast<int>(a->result.devices.results.size());
      }
    }
    // A job that does not say how it checkpoints loses everything since it started; one
    // that saves on the termination signal within its grace period, only the restore. The
    // victim runs on through its grace period, so its loss is counted when that ends: a
    // checkpoint due within the grace lands, and the work after the last one is lost too (as
    // the replay counts it, sim/tenant_preemption.cc).
    absl::StatusOr<Checkpointing> said = CheckpointingOf(p.pod->metadata);
    Checkpointing c = said.value_or(Checkpointing{});
    const double started = p.started >= 0 ? p.started : now;
    const double grace = GraceSeconds(p.pod->spec);
    job.lost += LostGpuSecondsSignalled(devices, now + grace, started, c, grace);
    const QueueNode* queue = ledger_ && queue_of_[i].queue >= 0
                                 ? &options_.queues->queues()[queue_of_[i].queue]
                                 : nullptr;
    // The pod's own min-runtime wins over its queue's.
    const bool own =
        said.ok() && p.pod->metadata.annotations.contains(std::string(kMinRuntimeAnnotation));
    const double min_runtime =
        own ? c.min_runtime_seconds : (queue != nullptr ? queue->min_runtime_seconds : 0);
    if (now - started < min_runtime) {
      job.min_runtime = true;
      job.min_runtime_until = std::max(job.min_runtime_until, started + min_runtime);
    }
    job.in_window =
        job.in_window || (queue != nullptr && now - started < queue->guarantee_window_seconds);
    job.devices += devices;
  }
  if (options_.preemption.is_protected) {
    for (Job& job : jobs_) {
      std::vector<const PodInfo*> pods;
      for (size_t i : job.pods) pods.push_back(&pods_.pods[i]);
      if (options_.preemption.is_protected(pods)) job.evictable = false, job.budget = true;
    }
  }
  doomed_.assign(jobs_.size(), false);
  lowest_priority_ = INT32_MAX;
  for (const Job& job : jobs_) lowest_priority_ = std::min(lowest_priority_, job.priority);
  return jobs_;
}

std::optional<model::NodeId> Session::Leaving(const PodInfo& p) {
  if (p.nominated_node.empty()) return std::nullopt;
  std::optional<model::NodeId> n = snap_.inventory().FindNode(p.nominated_node);
  if (!n) return std::nullopt;
  for (const PodInfo& q : pods_.pods) {
    if (q.terminating && q.priority < p.priority && q.bound_node == p.nominated_node) return n;
  }
  // Devices on the node held by claims no placed pod uses: victims' claims not yet released.
  for (const auto& [key, a] : snap_.claims()) {
    if (a.node != *n) continue;
    bool used = false;
    for (const std::string& u : a.users) used = used || snap_.placement(u) != nullptr;
    if (!used) return n;
  }
  return std::nullopt;
}

std::vector<size_t> Session::EligibleJobs(const Preemptor& pre, bool with_window) {
  std::vector<size_t> out;
  const std::vector<Job>& jobs = RunningJobs();
  // Without queues a job is a victim only at a lower priority: a pod at or below the lowest
  // running priority (every pod, when none sets one) has none, known without the walk.
  if (pre.queue < 0 && pre.priority <= lowest_priority_) return {};
  const std::vector<QueueUse> queues = QueueUses();
  Running r;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!jobs[j].evictable || doomed_[j] || (jobs[j].in_window && !with_window)) continue;
    r.placement = {{0, jobs[j].devices}};
    r.queue = jobs[j].queue;
    r.priority = jobs[j].priority;
    r.min_runtime = jobs[j].min_runtime;
    if (MayEvict(pre, r, queues)) out.push_back(j);
  }
  return out;
}

absl::Status Session::EvictJobs(Statement& stmt, const std::vector<size_t>& jobs) const {
  for (size_t j : jobs) {
    for (size_t pod : jobs_[j].pods) {
      if (absl::Status s = stmt.Evict(pods_.pods[pod].key); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

std::vector<size_t> Session::VictimPods(const std::vector<size_t>& jobs, double& lost) const {
  std::vector<size_t> out;
  lost = 0;
  for (size_t j : jobs) {
    out.insert(out.end(), jobs_[j].pods.begin(), jobs_[j].pods.end());
    lost += jobs_[j].lost;
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Up to this many allowed jobs on a node, a pod's victims there are chosen exactly (every
// subset, cheapest first); above, greedily.
constexpr size_t kExactJobs = 10;

// The order in which victims are given back: the costliest to evict first.
void CostliestFirst(std::vector<size_t>& jobs, const std::vector<Session::Job>& all) {
  std::stable_sort(jobs.begin(), jobs.end(), [&](size_t a, size_t b) {
    if (all[a].lost != all[b].lost) return all[a].lost > all[b].lost;
    if (all[a].devices != all[b].devices) return all[a].devices > all[b].devices;
    return all[a].priority > all[b].priority;
  });
}

std::vector<size_t> Without(const std::vector<size_t>& jobs, size_t j) {
  std::vector<size_t> out;
  for (size_t k : jobs) {
    if (k != j) out.push_back(k);
  }
  return out;
}

}  // namespace

bool Session::VictimSet::Better(const VictimSet& o) const {
  if (lost != o.lost) return lost < o.lost;
  if (devices != o.devices) return devices < o.devices;
  return pods < o.pods;
}

Session::VictimSet Session::MakeVictimSet(model::NodeId n, std::vector<size_t> jobs) const {
  VictimSet c{n, std::move(jobs), 0, 0, 0};
  for (size_t j : c.jobs) {
    c.lost += jobs_[j].lost;
    c.devices += jobs_[j].devices;
    c.pods += jobs_[j].pods.size();
  }
  return c;
}

std::optional<Session::VictimSet> Session::VictimsOnNode(size_t pod, const Preemptor& pre,
                                                         model::NodeId n, std::vector<size_t> jobs,
                                                         const std::optional<VictimSet>& bound) {
  // No set here beats `bound` when its cheapest single job does not (a set costs at least as
  // much as each of its jobs).
  if (bound) {
    bool any = false;
    for (size_t j : jobs) any = any || MakeVictimSet(n, {j}).Better(*bound);
    if (!any) return std::nullopt;
  }
  Statement stmt(snap_);
  auto fits = [&](const std::vector<size_t>& victims) {
    ++preempt_calls_;
    bool ok = EvictJobs(stmt, victims).ok();
    Rule rule = Rule::kCount;
    ok = ok && PlaceGroup({pod}, n, stmt, nullptr, rule).ok();
    (void)stmt.Rollback(0);
    return ok;
  };
  if (!fits(jobs)) return std::nullopt;
  if (jobs.size() > kExactJobs) {
    // Many jobs: each given back while the pod still fits, the costliest first.
    CostliestFirst(jobs, jobs_);
    std::vector<size_t> kept = jobs;
    for (size_t j : jobs) {
      if (preempt_calls_ > options_.preemption.budget) break;
      std::vector<size_t> without = Without(kept, j);
      if (fits(without)) kept = std::move(without);
    }
    if (!KeepsQueueFloors(pre, kept)) return std::nullopt;
    return MakeVictimSet(n, std::move(kept));
  }
  // Every subset, cheapest first: the first that fits is this node's best; none that is not
  // cheaper than `bound` is needed.
  std::vector<VictimSet> subsets;
  for (uint32_t mask = 1; mask < (1u << jobs.size()); ++mask) {
    std::vector<size_t> victims;
    for (size_t b = 0; b < jobs.size(); ++b) {
      if ((mask >> b) & 1u) victims.push_back(jobs[b]);
    }
    subsets.push_back(MakeVictimSet(n, std::move(victims)));
  }
  std::stable_sort(subsets.begin(), subsets.end(),
                   [](const VictimSet& a, const VictimSet& b) { return a.Better(b); });
  for (VictimSet& c : subsets) {
    if ((bound && !c.Better(*bound)) || preempt_calls_ > options_.preemption.budget) break;
    if (!KeepsQueueFloors(pre, c.jobs)) continue;
    if (c.jobs.size() == jobs.size() || fits(c.jobs)) return std::move(c);
  }
  return std::nullopt;
}

void Session::Preempt(size_t pod, Decision& d) {
  const PodInfo& p = pods_.pods[pod];
  if (d.status.code != Code::kUnschedulable || d.status.stage == Stage::kQueue ||
      p.never_preempts) {
    return;  // a queue over its limit waits for its own work to end
  }
  if (std::optional<model::NodeId> n = Leaving(p)) {
    d.nominated = *n;  // its victims are leaving: it waits for them (the node is held)
    return;
  }
  const Preemptor pre = PreemptorOf({pod}, p.priority);
  // Jobs within their guarantee window only when no other victims make room.
  const std::vector<size_t> outside = EligibleJobs(pre, false);
  std::optional<VictimSet> best = CheapestVictims(pod, pre, outside);
  if (!best) {
    const std::vector<size_t> all = EligibleJobs(pre, true);
    if (all.size() > outside.size()) best = CheapestVictims(pod, pre, all);
  }
  if (!best) {
    NoteProtected(pre, d.status);
    return NoteFairShare(pre, d.status);
  }
  d.nominated = best->node;
  d.victims = VictimPods(best->jobs, d.lost_gpu_seconds);
  for (size_t j : best->jobs) doomed_[j] = true;
  NoteReclaim(pre, best->jobs);
  holders_[best->node].push_back(pod);
}

void Session::NoteProtected(const Preemptor& pre, Status& status) {
  constexpr size_t kNamed = 3;
  std::vector<std::string> named;
  size_t more = 0;
  for (const Job& job : RunningJobs()) {
    const bool by_priority = pre.queue < 0 || job.queue < 0 || job.queue == pre.queue;
    if (!by_priority || job.priority >= pre.priority || !(job.min_runtime || job.budget)) continue;
    if (named.size() == kNamed) {
      ++more;
      continue;
    }
    const api::ObjectMeta& m = pods_.pods[job.pods.front()].pod->metadata;
    const std::string why =
        job.budget ? "a PodDisruptionBudget protects it"
                   : util::Cat("min-runtime until ",
                               absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                                absl::FromUnixSeconds(static_cast<int64_t>(
                                                    std::ceil(job.min_runtime_until))),
                                                absl::UTCTimeZone()));
    named.push_back(util::Cat(named.empty() ? "" : ", ", m.namespace_name, "/", m.name,
                              job.pods.size() > 1 ? " and its gang" : "", " (", why, ")"));
  }
  if (named.empty()) return;
  util::Append(status.message, status.message.empty() ? "" : " ",
               "Running work of lower priority it may not preempt: ", absl::StrJoin(named, ""),
               more > 0 ? util::Cat(" and ", more, " more") : "", ".");
}

std::optional<Session::VictimSet> Session::CheapestVictims(size_t pod, const Preemptor& pre,
                                                           const std::vector<size_t>& eligible) {
  std::map<model::NodeId, std::vector<size_t>> on;  // node -> eligible jobs with a pod there
  for (size_t j : eligible) {
    for (model::NodeId n : jobs_[j].nodes) {
      if (n == model::kNoId) continue;  // bound to a node the cluster no longer has
      std::vector<size_t>& js = on[n];
      if (js.empty() || js.back() != j) js.push_back(j);
    }
  }
  std::vector<model::NodeId> nodes;
  nodes.reserve(on.size());
  for (const auto& [n, js] : on) nodes.push_back(n);
  std::sort(nodes.begin(), nodes.end(), [&](model::NodeId a, model::NodeId b) {
    return snap_.index().PositionOf(a) < snap_.index().PositionOf(b);
  });
  std::optional<VictimSet> best;
  for (model::NodeId n : nodes) {
    if (preempt_calls_ > options_.preemption.budget) break;
    std::optional<VictimSet> here = VictimsOnNode(pod, pre, n, on[n], best);
    if (here && (!best || here->Better(*best))) best = std::move(here);
  }
  return best;
}

bool Session::PlaceGangIn(const Gang& g, Statement& stmt, Status& why) {
  const std::string& level_name =
      g.topology_required.empty() ? g.topology_preferred : g.topology_required;
  bool placed = false;
  if (!level_name.empty()) {
    const absl::StatusOr<Topology>& topology = TopologyOf(level_name);
    if (!topology.ok() && !g.topology_required.empty()) {
      why = Status::Of(Code::kUnresolvable, Stage::kTopology,
                       util::Cat(g.file, ":", g.line, ": ", g.kind, " ", g.key, ": ",
                                 std::string(topology.status().message())));
      return false;
    }
    if (topology.ok()) placed = TryInDomains(g, *topology, stmt, why);
  }
  if (!placed && g.topology_required.empty() && !gang_exhausted_) {
    placed = SearchGang(g, stmt, nullptr, nullptr);
  }
  return placed;
}

std::vector<size_t> Session::GangPreemptors(const Gang& g, std::vector<Decision>& out,
                                            int32_t& priority) {
  std::vector<size_t> members;
  priority = INT32_MAX;
  bool leaving = false;
  for (size_t m : g.members) {
    const PodInfo& p = pods_.pods[m];
    if (!p.bound_node.empty()) continue;
    if (out[m].status.code != Code::kUnschedulable || out[m].status.stage == Stage::kQueue ||
        p.never_preempts) {
      return {};  // a queue over its limit waits for its own work to end
    }
    if (std::optional<model::NodeId> n = Leaving(p)) {
      out[m].nominated = *n;
      leaving = true;
    }
    members.push_back(m);
  }
  if (leaving) return {};  // waiting for victims it preempted before
  for (size_t m : members) priority = std::min(priority, pods_.pods[m].priority);
  return members;
}

void Session::PreemptGang(size_t gang, std::vector<Decision>& out) {
  const Gang& g = pods_.gangs[gang];
  if (g.problem) return;
  int32_t priority = INT32_MAX;
  const std::vector<size_t> members = GangPreemptors(g, out, priority);
  if (members.empty()) return;
  const Preemptor pre = PreemptorOf(members, priority);
  Statement stmt(snap_);
  // Places the gang with `victims` gone; the nodes of its members in `where`.
  auto fits = [&](const std::vector<size_t>& victims, std::map<size_t, model::NodeId>& where) {
    gang_calls_ = 0;
    gang_exhausted_ = false;
    Status why;
    bool ok = EvictJobs(stmt, victims).ok() && PlaceGangIn(g, stmt, why);
    preempt_calls_ += gang_calls_ + 1;
    if (ok) {
      where.clear();
      for (size_t m : members) {
        if (const PodPlacement* pl = snap_.placement(pods_.pods[m].key)) where[m] = pl->node;
      }
    }
    (void)stmt.Rollback(0);
    return ok;
  };
  auto none = [&] {  // no victims: what stopped it, in each waiting member's reason
    for (size_t m : members) NoteProtected(pre, out[m].status);
  };
  // Jobs within their guarantee window only when no other victims make room.
  std::vector<size_t> eligible = EligibleJobs(pre, false);
  std::map<size_t, model::NodeId> where;
  if (eligible.empty() || !fits(eligible, where)) {
    const size_t outside = eligible.size();
    eligible = EligibleJobs(pre, true);
    if (eligible.size() == outside || !fits(eligible, where)) return none();
  }
  // Each job given back while the gang still fits, those within their window first, then the
  // costliest; a job with no pod on a node the current placement uses is given back without
  // a search (the placement stands).
  std::vector<size_t> kept = eligible, order = eligible;
  CostliestFirst(order, jobs_);
  std::stable_partition(order.begin(), order.end(), [&](size_t j) { return jobs_[j].in_window; });
  std::map<size_t, model::NodeId> w;
  for (size_t j : order) {
    std::set<model::NodeId> used;
    for (const auto& [m, n] : where) used.insert(n);
    bool touches = false;
    for (model::NodeId n : jobs_[j].nodes) touches = touches || used.contains(n);
    std::vector<size_t> without = Without(kept, j);
    if (!touches) {
      kept = std::move(without);
    } else if (preempt_calls_ <= options_.preemption.budget && fits(without, w)) {
      kept = std::move(without);
      where = w;
    }
  }
  if (!KeepsQueueFloors(pre, kept)) return none();
  double lost = 0;
  std::vector<size_t> victims = VictimPods(kept, lost);
  for (size_t j : kept) doomed_[j] = true;
  NoteReclaim(pre, kept);
  for (const auto& [m, n] : where) {
    out[m].nominated = n;
    out[m].victims = victims;
    out[m].lost_gpu_seconds = lost;
    holders_[n].push_back(m);
  }
}

}  // namespace gpuplane::sched
