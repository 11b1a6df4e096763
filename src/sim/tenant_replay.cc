#include "sim/tenant_replay.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>

#include "sched/checkpoints.h"
#include "sched/demand_peaks.h"
#include "sched/fair_share.h"
#include "sched/victims.h"
#include "sim/daynight.h"
#include "sim/tenant_metrics.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

// GPUs as people read them: "134", "150.5".
std::string Gpus(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

constexpr double kNever = -std::numeric_limits<double>::infinity();

enum class EventKind { kFinish = 0, kArrival = 1, kTimer = 2 };  // finishes free GPUs first

struct Event {
  double time;
  EventKind kind;
  int job;
  int64_t epoch;
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return job > o.job;
  }
};

struct JobState {
  std::vector<int> pods;                       // largest first
  std::vector<std::pair<int, int>> placement;  // placed pods, in pods' order
  double remaining = 0;                        // run still needed when the current run began
  double run_start = -1;
  double first_start = -1;
  double pending_since = 0;
  double hold_since = -1;
  double last_preempt_try = kNever;
  int64_t epoch = 0;
  bool running = false;
};

// Pending order: non-preemptible first, then by submission.
struct Key {
  int cls;
  double submit;
  int job;
  bool operator<(const Key& o) const {
    if (cls != o.cls) return cls < o.cls;
    if (submit != o.submit) return submit < o.submit;
    return job < o.job;
  }
};

class Engine {
 public:
  Engine(const TenantWorkload& w, const TenantPolicy& p, const TenantRunOptions& o)
      : w_(w),
        p_(p),
        o_(o),
        cluster_gpus_(o.nodes * o.gpus_per_node),
        free_(o.nodes, o.gpus_per_node),
        jobs_(w.jobs.size()),
        tenant_pending_(w.tenants.size()),
        running_at_(w.jobs.size(), 0),
        alloc_(w.tenants.size(), 0),
        high_alloc_(w.tenants.size(), 0),
        low_running_(w.tenants.size(), 0),
        pending_gpus_(w.tenants.size(), 0),
        fair_(w.tenants.size(), 0),
        metrics_(static_cast<int>(w.tenants.size()), cluster_gpus_,
                 w.jobs.empty() ? 0 : w.jobs.back().submit),
        checkpointing_{o.checkpoint_interval, -1, o.restore_seconds},
        signal_checkpointing_{o.checkpoint_interval, -1, o.restore_seconds, 0,
                              o.signal_save_seconds},
        evicted_in_window_(w.jobs.size(), false) {
    if (o.usage_half_life > 0) {
      usage_.emplace(static_cast<int>(w.tenants.size()), o.usage_half_life);
    }
  }

  TenantSummary Run();

 private:
  const TenantJob& Spec(int id) const { return w_.jobs[id]; }
  bool Opportunistic(int id) const { return w_.Opportunistic(Spec(id).tenant); }
  // Non-preemptible first, opportunistic last.
  Key KeyOf(int id) const {
    return {Spec(id).high ? 0 : (Opportunistic(id) ? 2 : 1), Spec(id).submit, id};
  }
  void AddPending(int id, double t);
  void RemovePending(int id);
  void Cycle(double t);
  std::vector<int> Order() const;
  bool Admissible(int id, double t) const;
  // GPUs the non-opportunistic work wants now: allocated and pending.
  double Demand() const;
  void RecordDemand(double t);
  // The most GPUs the non-opportunistic work is expected to want from t to the end of the
  // guarantee window: what it wants now, plus the largest rise of its hourly peak from this
  // hour to the hours ahead on any of the last 7 days (the daily pattern's growth, not its
  // level, so the forecast follows today's load).
  double Forecast(double t) const;
  // GPUs of opportunistic runs still within their guarantee window.
  double OpportunisticGpus(double t) const;
  bool InWindow(int id, double t) const {
    return Opportunistic(id) && t - jobs_[id].run_start < o_.guarantee_window;
  }
  bool TryPlace(int id, double t);
  // The fullest node with room for `size` GPUs; with `young` (GPUs per node of opportunistic
  // runs within their windows), the node with the most of them first.
  int BestFit(int size, const std::vector<int>& young) const;
  // Opportunistic work under window protection goes beside other young opportunistic runs,
  // so the nodes of runs past their windows can be cleared without touching young ones;
  // empty for everything else.
  std::vector<int> YoungOpportunistic(int id, double t) const;
  void Commit(int id, int node, int gpus);
  void Start(int id, double t);
  void Release(int id);
  void Finish(int id, double t);
  void Evict(int id, double t);
  void ExpireHolds(double t);
  bool MayTryPreempt(int id, double t) const;
  // How long `id` waits before it may preempt: the policy's delay, and for preemptible work
  // its reclaim delay.
  double PreemptionDelay(int id) const {
    return Spec(id).high ? p_.preemption_delay : std::max(p_.preemption_delay, p_.reclaim_delay);
  }
  bool TryPreempt(int id, double t);
  double LostNow(int id, double t) const;
  std::optional<sched::Victims> InOrder(const std::vector<sched::Running>& units,
                                        const std::vector<int>& owner, const sched::Preemptor& pre,
                                        const std::vector<sched::QueueUse>& queues) const;
  void NoteReclaim(int preemptor_tenant, int victim_tenant, double t);
  // The victim's tenant reclaimed from the preemptor's within the policy's cooldown.
  bool CoolingDown(int preemptor_tenant, int victim_tenant, double t) const;
  double Floor(int tenant) const;
  // TenantPolicy::fair_share_holds: a preemptible job that would take its tenant beyond its
  // fair share starts only off the nodes reserved in this cycle (TryPlaceUnreserved) for jobs
  // within their tenants' shares that could not start (Reserve: the nodes with the most free
  // GPUs, one per pod left to place).
  bool HeldForFairShare(int id) const;
  bool WithinShare(int id) const;  // its tenant's GPUs with it fit the tenant's fair share
  // TenantPolicy::min_runtime: the job's own, its tenant's or the run's; whether a running
  // job is still within it (never a victim).
  double MinRuntime(int id) const;
  bool WithinMinRuntime(int id, double t) const;
  void Reserve(int id);
  bool TryPlaceUnreserved(int id, double t);
  int MaxUnreservedFree() const;
  void ComputeFair();
  TenantSnapshot Snapshot() const;
  PendingReason Explain(int id, double t) const;
  PendingReason NotAdmitted(int id, double t, PendingReason out) const;
  void Sample(double t);
  bool Evictable(int id, int victim, double t, const sched::Preemptor& pre,
                 const std::vector<sched::QueueUse>& queues) const;
  // The running jobs `id` may consider as victims now: all of them, or for a reclaim under
  // reclaim_after_checkpoint only those that checkpointed recently (listed once per instant).
  const std::vector<int>& Candidates(int id, double t);
  bool Fresh(int victim, double t) const {
    return t - sched::LastCheckpoint(t, jobs_[victim].run_start, checkpointing_) <=
           std::min(p_.reclaim_after_checkpoint, o_.checkpoint_interval / 10);
  }
  const sched::Checkpointing& CheckpointingOf(int id) const {
    return Spec(id).saves_on_signal ? signal_checkpointing_ : checkpointing_;
  }
  bool SavesOnSignal(int id) const {
    return sched::SavesOnSignal(CheckpointingOf(id), o_.preemption_grace);
  }
  // How long a victim holds its GPUs after its termination signal: until it has saved when it
  // saves on the signal (it exits then), else its whole grace period.
  double StopDelay(int id) const {
    return SavesOnSignal(id) ? o_.signal_save_seconds : o_.preemption_grace;
  }
  std::vector<int> fresh_;  // Candidates' list for reclaims at fresh_at_
  double fresh_at_ = kNever;
  double next_sample_ = 0, sample_every_ = 0;
  mutable sched::Running probe_;  // Evictable's scratch
  // While TryPreempt places its job: when the job may start (its victims' grace ends).
  double start_after_ = kNever;

  const TenantWorkload& w_;
  const TenantPolicy& p_;
  const TenantRunOptions& o_;
  const double cluster_gpus_;
  std::vector<int> free_;
  std::vector<size_t> reserved_;  // nodes, this cycle (TenantPolicy::fair_share_holds)
  std::vector<JobState> jobs_;
  std::set<Key> pending_;
  std::vector<std::set<Key>> tenant_pending_;
  std::set<int> holding_;
  std::vector<int> running_;           // in no particular order
  std::vector<size_t> running_at_;     // each job's place in running_
  std::vector<sched::Running> units_;  // TryPreempt's, kept for their storage
  std::vector<int> owner_;
  std::vector<double> alloc_, high_alloc_, low_running_, pending_gpus_, fair_;
  double alloc_total_ = 0, held_incomplete_ = 0;
  double retry_at_ = kNever;           // the pending preemption retry timer
  double delay_timer_at_ = kNever;     // the earliest pending end of a preemption delay
  double headroom_timer_at_ = kNever;  // the next hour, while the forecast holds work back
  int64_t live_ = 0;                   // arrival and finish events not yet processed
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::map<std::pair<int, int>, double> last_reclaim_;
  TenantMetrics metrics_;
  // TenantRunOptions::usage_half_life: each tenant's GPU use, decayed.
  std::optional<sched::DecayedUsage> usage_;
  const sched::Checkpointing checkpointing_;         // every job checkpoints at the run's interval
  const sched::Checkpointing signal_checkpointing_;  // and those that save on the signal
  TenantSummary out_;
  std::vector<double> jct_, delay_high_, delay_low_;
  // Opportunistic work: the non-opportunistic demand's hourly peaks, runs started (windows
  // granted), evictions within a window, jobs ever evicted within one.
  sched::DemandPeaks demand_peaks_;
  int64_t windows_ = 0, window_evictions_ = 0;
  std::vector<bool> evicted_in_window_;
};

void Engine::AddPending(int id, double t) {
  jobs_[id].pending_since = t;
  pending_.insert(KeyOf(id));
  tenant_pending_[Spec(id).tenant].insert(KeyOf(id));
  pending_gpus_[Spec(id).tenant] += Spec(id).gpus;
}

void Engine::RemovePending(int id) {
  pending_.erase(KeyOf(id));
  tenant_pending_[Spec(id).tenant].erase(KeyOf(id));
  pending_gpus_[Spec(id).tenant] -= Spec(id).gpus;
}

int Engine::BestFit(int size, const std::vector<int>& young) const {
  int best = -1;
  for (size_t n = 0; n < free_.size(); ++n) {
    if (free_[n] < size) continue;
    if (best < 0 || (young.empty() ? 0 : young[n] - young[best]) > 0 ||
        ((young.empty() || young[n] == young[best]) && free_[n] < free_[best])) {
      best = static_cast<int>(n);
    }
  }
  return best;
}

std::vector<int> Engine::YoungOpportunistic(int id, double t) const {
  std::vector<int> young;
  if (!p_.window_protection || !Opportunistic(id)) return young;
  young.assign(free_.size(), 0);
  for (int r : running_) {
    if (!InWindow(r, t)) continue;
    for (const auto& [n, g] : jobs_[r].placement) young[n] += g;
  }
  return young;
}

void Engine::Commit(int id, int node, int gpus) {
  const TenantJob& s = Spec(id);
  free_[node] -= gpus;
  jobs_[id].placement.emplace_back(node, gpus);
  alloc_[s.tenant] += gpus;
  alloc_total_ += gpus;
  if (s.high) high_alloc_[s.tenant] += gpus;
  held_incomplete_ += gpus;  // until the job starts
}

bool Engine::TryPlace(int id, double t) {
  JobState& j = jobs_[id];
  const size_t first = j.placement.size();
  const std::vector<int> young = YoungOpportunistic(id, t);
  if (p_.atomic_gangs) {
    std::vector<int> saved = free_;
    std::vector<std::pair<int, int>> chosen;
    for (size_t i = first; i < j.pods.size(); ++i) {
      const int n = BestFit(j.pods[i], young);
      if (n < 0) {
        free_ = saved;
        return false;
      }
      free_[n] -= j.pods[i];
      chosen.emplace_back(n, j.pods[i]);
    }
    free_ = saved;
    for (const auto& [n, g] : chosen) Commit(id, n, g);
  } else {
    for (size_t i = first; i < j.pods.size(); ++i) {
      const int n = BestFit(j.pods[i], young);
      if (n < 0) break;
      Commit(id, n, j.pods[i]);
    }
  }
  if (j.placement.size() == j.pods.size()) {
    Start(id, t);
    return true;
  }
  if (!j.placement.empty() && j.hold_since < 0) {
    j.hold_since = t;
    holding_.insert(id);
    events_.push({t + p_.gang_hold_seconds, EventKind::kTimer, id, j.epoch});
  }
  return false;
}

void Engine::Start(int id, double t) {
  JobState& j = jobs_[id];
  const TenantJob& s = Spec(id);
  held_incomplete_ -= s.gpus;
  j.running = true;
  const double begin = std::max(t, start_after_);
  j.run_start = begin;
  j.hold_since = -1;
  holding_.erase(id);
  if (j.first_start < 0) {
    j.first_start = begin;
    (s.high ? delay_high_ : delay_low_).push_back(begin - s.submit);
  }
  RemovePending(id);
  running_at_[id] = running_.size();
  running_.push_back(id);
  if (fresh_at_ == t) fresh_.push_back(id);  // it starts from a checkpoint, or from scratch
  if (!s.high) low_running_[s.tenant] += 1;
  if (Opportunistic(id)) ++windows_;
  events_.push({begin + j.remaining, EventKind::kFinish, id, j.epoch});
  ++live_;
}

void Engine::Release(int id) {
  JobState& j = jobs_[id];
  const TenantJob& s = Spec(id);
  for (const auto& [n, g] : j.placement) {
    free_[n] += g;
    alloc_[s.tenant] -= g;
    alloc_total_ -= g;
    if (s.high) high_alloc_[s.tenant] -= g;
    if (!j.running) held_incomplete_ -= g;
  }
  j.placement.clear();
  if (j.running) {
    fresh_.erase(std::remove(fresh_.begin(), fresh_.end(), id), fresh_.end());
    const int last = running_.back();
    running_[running_at_[id]] = last;
    running_at_[last] = running_at_[id];
    running_.pop_back();
    if (!s.high) low_running_[s.tenant] -= 1;
  }
  j.running = false;
}

void Engine::Finish(int id, double t) {
  Release(id);
  jct_.push_back(t - Spec(id).submit);
  out_.end_s = std::max(out_.end_s, t);
}

void Engine::Evict(int id, double t) {
  JobState& j = jobs_[id];
  const double stop = t + StopDelay(id);  // it runs on through its grace period, or saves
  if (j.run_start + j.remaining <= stop) {
    ++j.epoch;  // it finishes within the grace: nothing is lost
    Finish(id, j.run_start + j.remaining);
    return;
  }
  if (InWindow(id, t)) {
    ++window_evictions_;
    evicted_in_window_[id] = true;
  }
  // What it keeps: all it did until the signal when it saves then, else what it had done at
  // its last checkpoint.
  const double saved = std::max(
      0.0, (SavesOnSignal(id) ? t : sched::LastCheckpoint(stop, j.run_start, checkpointing_)) -
               j.run_start);
  const double lost = LostNow(id, stop);
  out_.lost_gpu_hours += lost / 3600;
  out_.lost_gpu_seconds.push_back(lost);
  out_.preemptions += 1;
  out_.evictions.push_back(id);
  j.remaining = j.remaining - saved + o_.restore_seconds;
  j.epoch += 1;
  Release(id);
  AddPending(id, t);
}

void Engine::ExpireHolds(double t) {
  for (auto it = holding_.begin(); it != holding_.end();) {
    JobState& j = jobs_[*it];
    if (t - j.hold_since < p_.gang_hold_seconds) {
      ++it;
      continue;
    }
    const int id = *it;
    it = holding_.erase(it);
    Release(id);
    j.hold_since = -1;
  }
}

double Engine::MinRuntime(int id) const {
  const TenantJob& s = Spec(id);
  if (s.min_runtime >= 0) return s.min_runtime;
  const auto t = static_cast<size_t>(s.tenant);
  if (t < w_.min_runtime.size() && w_.min_runtime[t] >= 0) return w_.min_runtime[t];
  return o_.min_runtime;
}

bool Engine::WithinMinRuntime(int id, double t) const {
  return p_.min_runtime && jobs_[id].running && t - jobs_[id].run_start < MinRuntime(id);
}

bool Engine::WithinShare(int id) const {
  const int tenant = Spec(id).tenant;
  return alloc_[tenant] + Spec(id).gpus <= fair_[tenant] + 1e-9;
}

bool Engine::HeldForFairShare(int id) const {
  return p_.fair_share_holds && !Spec(id).high && !WithinShare(id);
}

void Engine::Reserve(int id) {
  const JobState& j = jobs_[id];
  for (size_t i = j.placement.size(); i < j.pods.size(); ++i) {
    int best = -1;
    for (size_t n = 0; n < free_.size(); ++n) {
      const bool taken = std::find(reserved_.begin(), reserved_.end(), n) != reserved_.end();
      if (!taken && (best < 0 || free_[n] > free_[best])) best = static_cast<int>(n);
    }
    if (best < 0) return;
    reserved_.push_back(best);
  }
}

int Engine::MaxUnreservedFree() const {
  int most = 0;
  for (size_t n = 0; n < free_.size(); ++n) {
    if (std::find(reserved_.begin(), reserved_.end(), n) == reserved_.end()) {
      most = std::max(most, free_[n]);
    }
  }
  return most;
}

bool Engine::TryPlaceUnreserved(int id, double t) {
  std::vector<int> hidden(reserved_.size());
  for (size_t i = 0; i < reserved_.size(); ++i) std::swap(hidden[i], free_[reserved_[i]]);
  const bool started = TryPlace(id, t);
  for (size_t i = 0; i < reserved_.size(); ++i) free_[reserved_[i]] += hidden[i];
  return started;
}

double Engine::Floor(int tenant) const {
  return p_.quotas == Quotas::kFairShare ? fair_[tenant] : w_.guarantee_gpus[tenant];
}

void Engine::ComputeFair() {
  std::vector<sched::ShareQueue> q(w_.tenants.size());
  for (size_t t = 0; t < q.size(); ++t) {
    q[t].guarantee = w_.guarantee_gpus[t];
    q[t].demand = alloc_[t] + pending_gpus_[t];
    if (w_.Opportunistic(static_cast<int>(t))) q[t].weight = 0;
    if (usage_) q[t].usage = usage_->usage()[t];
  }
  fair_ = sched::FairShare(q, cluster_gpus_, {.usage_k = usage_ ? o_.usage_k : 0});
}

// kube and kueue: one FIFO, non-preemptible first; the others: tenants furthest below their
// share first (fair share, or guarantee for yunikorn), each tenant's jobs in that order.
std::vector<int> Engine::Order() const {
  std::vector<int> out;
  out.reserve(pending_.size());
  if (p_.quotas == Quotas::kNone || p_.quotas == Quotas::kNominal) {
    for (const Key& k : pending_) out.push_back(k.job);
    return out;
  }
  if (p_.high_first) {
    for (const Key& k : pending_) {
      if (k.cls != 0) break;
      out.push_back(k.job);
    }
  }
  std::vector<int> tenants;
  std::vector<double> ratio(w_.tenants.size());
  for (size_t t = 0; t < w_.tenants.size(); ++t) {
    if (tenant_pending_[t].empty()) continue;
    tenants.push_back(static_cast<int>(t));
    const double floor = Floor(static_cast<int>(t));
    ratio[t] = floor > 0 ? alloc_[t] / floor : std::numeric_limits<double>::infinity();
  }
  std::stable_sort(tenants.begin(), tenants.end(),
                   [&](int a, int b) { return ratio[a] < ratio[b]; });
  for (int t : tenants) {
    for (const Key& k : tenant_pending_[t]) {
      if (!p_.high_first || k.cls != 0) out.push_back(k.job);
    }
  }
  return out;
}

bool Engine::Admissible(int id, double t) const {
  const TenantJob& s = Spec(id);
  if (p_.high_within_guarantee && s.high) {
    return high_alloc_[s.tenant] + s.gpus <= w_.guarantee_gpus[s.tenant];
  }
  if (p_.opportunistic_headroom && Opportunistic(id) && jobs_[id].placement.empty()) {
    return OpportunisticGpus(t) + s.gpus + Forecast(t) <= cluster_gpus_;
  }
  return true;
}

double Engine::OpportunisticGpus(double t) const {
  double sum = 0;
  for (int r : running_) {
    if (InWindow(r, t)) sum += Spec(r).gpus;
  }
  return sum;
}

double Engine::Demand() const {
  double sum = 0;
  for (size_t q = 0; q < alloc_.size(); ++q) {
    if (!w_.Opportunistic(static_cast<int>(q))) sum += alloc_[q] + pending_gpus_[q];
  }
  return sum;
}

void Engine::RecordDemand(double t) {
  if (w_.opportunistic.empty()) return;
  demand_peaks_.Note(t, std::min(Demand(), cluster_gpus_));
}

double Engine::Forecast(double t) const {
  // What it wants now, plus the largest rise from this hour to a later hour within the
  // window on any of the last 7 days.
  return std::min(Demand() + demand_peaks_.Rise(t, o_.guarantee_window), cluster_gpus_);
}

bool Engine::MayTryPreempt(int id, double t) const {
  const JobState& j = jobs_[id];
  const TenantJob& s = Spec(id);
  if (t - j.pending_since < PreemptionDelay(id) ||
      t - j.last_preempt_try < o_.preemption_retry_seconds) {
    return false;
  }
  if (p_.quotas == Quotas::kNone) {
    if (!s.high) return false;
    for (double n : low_running_) {
      if (n > 0) return true;
    }
    return false;
  }
  if (s.high && p_.high_first) return true;
  return (s.high && low_running_[s.tenant] > 0) || alloc_[s.tenant] + s.gpus <= Floor(s.tenant);
}

void Engine::Cycle(double t) {
  ExpireHolds(t);
  ComputeFair();
  RecordDemand(t);
  bool preempted = false, attempted = false;
  reserved_.clear();
  bool reserving = false;  // the first job within its share that cannot start has nodes
  int max_unreserved = 0;  // the most free GPUs on a node not reserved
  int max_free = *std::max_element(free_.begin(), free_.end());
  for (int id : Order()) {
    const JobState& j = jobs_[id];
    if (j.running) continue;  // started by an earlier preemption in this cycle
    if (max_free == 0 && preempted) break;
    if (!Admissible(id, t)) {
      // Held back by the forecast: look again when the hour, and so the forecast, changes.
      if (Opportunistic(id) && headroom_timer_at_ <= t) {
        headroom_timer_at_ = (std::floor(t / 3600) + 1) * 3600;
        events_.push({headroom_timer_at_, EventKind::kTimer, -1, 0});
      }
      continue;
    }
    // The pod that must fit first: the largest left for a whole gang, the smallest otherwise.
    const int first = p_.atomic_gangs ? j.pods[j.placement.size()] : j.pods.back();
    const bool held = reserving && HeldForFairShare(id);
    if (first <= (held ? max_unreserved : max_free)) {
      const bool started = held ? TryPlaceUnreserved(id, t) : TryPlace(id, t);
      max_free = *std::max_element(free_.begin(), free_.end());
      if (reserving) max_unreserved = MaxUnreservedFree();
      if (started) continue;
    }
    if (p_.fair_share_holds && !reserving && !Opportunistic(id) && WithinShare(id)) {
      Reserve(id);
      reserving = true;
      max_unreserved = MaxUnreservedFree();
    }
    // A job held back by the policy's preemption delay looks again when the delay is over.
    const double delay_over = j.pending_since + PreemptionDelay(id);
    if (delay_over > t && (delay_timer_at_ <= t || delay_over < delay_timer_at_)) {
      delay_timer_at_ = delay_over;
      events_.push({delay_over, EventKind::kTimer, -1, 0});
    }
    if (!preempted && MayTryPreempt(id, t)) {
      jobs_[id].last_preempt_try = t;
      preempted = TryPreempt(id, t);
      max_free = *std::max_element(free_.begin(), free_.end());
      if (reserving) max_unreserved = MaxUnreservedFree();
      attempted = true;
    }
  }
  // Jobs that tried to preempt try again after the retry interval even when nothing else
  // happens by then (a victim may have checkpointed, shares may have moved).
  if (attempted && retry_at_ <= t) {
    retry_at_ = t + o_.preemption_retry_seconds;
    events_.push({retry_at_, EventKind::kTimer, -1, 0});
  }
}

double Engine::LostNow(int id, double t) const {
  // A run whose start waits for its victims' grace period has done nothing yet.
  const double start = jobs_[id].run_start;
  return sched::LostGpuSecondsSignalled(Spec(id).gpus, std::max(t, start), start,
                                        CheckpointingOf(id), o_.preemption_grace);
}

// kai and kueue: victims taken in order (kueue: borrowing tenants first), lowest priority,
// most recently started first, until the job fits; kueue then drops victims not needed.
// kai keeps every victim's tenant at its fair share; kueue takes from a tenant while it
// still borrows (above its nominal quota) when the candidate comes up.
std::optional<sched::Victims> Engine::InOrder(const std::vector<sched::Running>& units,
                                              const std::vector<int>& owner,
                                              const sched::Preemptor& pre,
                                              const std::vector<sched::QueueUse>& queues) const {
  const bool kueue = p_.victims == VictimRule::kJobsBorrowingFirst;
  std::vector<size_t> allowed;
  for (size_t u = 0; u < units.size(); ++u) {
    if (sched::MayEvict(pre, units[u], queues)) allowed.push_back(u);
  }
  auto borrowing = [&](size_t u) {
    const int t = Spec(owner[u]).tenant;
    return alloc_[t] > w_.guarantee_gpus[t];
  };
  std::stable_sort(allowed.begin(), allowed.end(), [&](size_t a, size_t b) {
    if (kueue && borrowing(a) != borrowing(b)) return borrowing(a);
    if (units[a].priority != units[b].priority) return units[a].priority < units[b].priority;
    return jobs_[owner[a]].run_start > jobs_[owner[b]].run_start;
  });
  std::vector<size_t> chosen;
  std::vector<int> free = free_;
  std::vector<double> left = alloc_;  // each tenant's GPUs once the victims are gone
  for (size_t u : allowed) {
    if (sched::Fits(pre.pods, free)) break;
    const int q = Spec(owner[u]).tenant;
    const double gpus = units[u].Gpus();
    if (kueue) {
      // Kueue takes a candidate from another queue only while that queue still borrows
      // when the candidate comes up.
      if (units[u].queue != pre.queue && left[q] <= w_.guarantee_gpus[q]) continue;
    } else if (sched::Floored(pre, units[u]) && left[q] - gpus < queues[q].fair - 1e-9) {
      continue;  // kai: every victim's queue keeps its fair share (sched::KeepsFloors)
    }
    if (kueue || sched::Floored(pre, units[u])) left[q] -= gpus;
    chosen.push_back(u);
    for (const auto& [n, g] : units[u].placement) free[n] += g;
  }
  if (!sched::Fits(pre.pods, free)) return std::nullopt;
  for (size_t i = chosen.size(); kueue && i-- > 0;) {
    std::vector<int> less = free;
    for (const auto& [n, g] : units[chosen[i]].placement) less[n] -= g;
    if (sched::Fits(pre.pods, less)) {
      free = std::move(less);
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  sched::Victims v;
  v.jobs = chosen;
  return v;
}

void Engine::NoteReclaim(int preemptor_tenant, int victim_tenant, double t) {
  if (p_.quotas == Quotas::kNone || preemptor_tenant == victim_tenant) return;
  auto back = last_reclaim_.find({victim_tenant, preemptor_tenant});
  if (back != last_reclaim_.end() && t - back->second <= o_.cycle_cooldown_seconds) {
    out_.fair_share_cycles += 1;
  }
  last_reclaim_[{preemptor_tenant, victim_tenant}] = t;
}

bool Engine::CoolingDown(int preemptor_tenant, int victim_tenant, double t) const {
  if (p_.reclaim_cooldown <= 0 || preemptor_tenant == victim_tenant) return false;
  auto back = last_reclaim_.find({victim_tenant, preemptor_tenant});
  return back != last_reclaim_.end() && t - back->second <= p_.reclaim_cooldown;
}

bool Engine::TryPreempt(int id, double t) {
  const TenantJob& s = Spec(id);
  const JobState& j = jobs_[id];
  sched::Preemptor pre;
  pre.pods.assign(j.pods.begin() + static_cast<std::ptrdiff_t>(j.placement.size()), j.pods.end());
  pre.queue = p_.quotas == Quotas::kNone ? -1 : s.tenant;
  pre.priority = s.high ? 1 : 0;
  pre.priority_across_queues = p_.high_first;
  std::vector<sched::QueueUse> queues(w_.tenants.size());
  for (size_t q = 0; q < queues.size(); ++q) {
    queues[q] = {alloc_[q], Floor(static_cast<int>(q))};
  }
  // Victim units, only those it may evict: whole jobs, or pods for the gang-unaware policies
  // (fewest pods). The member vectors are reused so placements keep their storage.
  const bool by_pod = p_.victims == VictimRule::kPodsLowestPriority;
  size_t count = 0;
  std::vector<int> could = free_;  // free once every job it may evict is gone
  for (int r : Candidates(id, t)) {
    if (!Evictable(id, r, t, pre, queues)) continue;
    for (const auto& [n, g] : jobs_[r].placement) could[n] += g;
    const size_t pieces = by_pod ? jobs_[r].placement.size() : 1;
    for (size_t i = 0; i < pieces; ++i) {
      if (units_.size() == count) {
        units_.emplace_back();
        owner_.push_back(0);
      }
      sched::Running& u = units_[count];
      owner_[count++] = r;
      u.queue = pre.queue < 0 ? -1 : Spec(r).tenant;
      u.priority = Spec(r).high ? 1 : 0;
      u.min_runtime = WithinMinRuntime(r, t);
      u.in_window = p_.window_protection && InWindow(r, t);
      if (by_pod) {
        u.placement.assign(1, jobs_[r].placement[i]);
        u.lost_gpu_seconds = 1 + 1e-9 * (t - jobs_[r].run_start);  // fewest pods, newest first
      } else {
        u.placement = jobs_[r].placement;
        u.lost_gpu_seconds = LostNow(r, t + o_.preemption_grace);
      }
    }
  }
  // Nothing to search when even every job it may evict would not make room.
  if (!sched::Fits(pre.pods, could)) return false;
  units_.resize(count);
  owner_.resize(count);
  const std::vector<sched::Running>& units = units_;
  const std::vector<int>& owner = owner_;
  std::optional<sched::Victims> v = p_.victims == VictimRule::kJobsLostWork || by_pod
                                        ? sched::ChooseVictims(free_, units, pre, queues)
                                        : InOrder(units, owner, pre, queues);
  if (!v || v->jobs.empty()) return false;
  std::map<int, size_t> pods_hit;
  for (size_t u : v->jobs) pods_hit[owner[u]] += 1;
  double gone = t;  // when the last victim has stopped
  for (const auto& [r, hit] : pods_hit) {
    // A pod of a gang taken alone: the rest of the gang dies with it.
    if (by_pod && hit < jobs_[r].pods.size()) out_.partial_gang_evictions += 1;
    NoteReclaim(s.tenant, Spec(r).tenant, t);
    gone = std::max(gone, t + StopDelay(r));
    Evict(r, t);
  }
  start_after_ = gone;  // its victims' grace periods, or their saves
  const bool placed = TryPlace(id, t);
  start_after_ = kNever;
  return placed;
}

// Whether the policy lets `id` (as `pre`) evict `victim` now: the shared rules of
// sched/victims.h, gpuplane's reclaim cooldown and its wait for a fresh checkpoint.
bool Engine::Evictable(int id, int victim, double t, const sched::Preemptor& pre,
                       const std::vector<sched::QueueUse>& queues) const {
  const TenantJob& v = Spec(victim);
  if (v.high) return false;  // non-preemptible
  // The cheap rules first: most running jobs fail the checkpoint rule.
  const bool high = Spec(id).high;
  if (!high && p_.reclaim_after_checkpoint > 0 && !Fresh(victim, t)) return false;
  // Waiting for fresh checkpoints would single out runs that just started, which are the
  // ones within their windows: a reclaim takes them only after waiting one checkpoint
  // interval, by when every other run has checkpointed once.
  if (!high && p_.window_protection && InWindow(victim, t) &&
      t - jobs_[id].pending_since < o_.checkpoint_interval) {
    return false;
  }
  if (CoolingDown(Spec(id).tenant, v.tenant, t)) return false;
  if (WithinMinRuntime(victim, t)) return false;
  sched::Running& probe = probe_;  // reused: its placement keeps its storage
  probe.queue = pre.queue < 0 ? -1 : v.tenant;
  probe.priority = 0;
  probe.min_runtime = false;
  probe.placement.assign(1, {0, v.gpus});  // MayEvict counts the GPUs, not where they are
  return sched::MayEvict(pre, probe, queues);
}

const std::vector<int>& Engine::Candidates(int id, double t) {
  if (Spec(id).high || p_.reclaim_after_checkpoint <= 0) return running_;
  if (fresh_at_ != t) {
    fresh_at_ = t;
    fresh_.clear();
    for (int r : running_) {
      if (Fresh(r, t)) fresh_.push_back(r);
    }
  }
  return fresh_;
}

// A job its policy does not admit now: held back by the forecast (opportunistic work) or by
// its tenant's guarantee (non-preemptible work under kai); `out` has the room's blockers.
PendingReason Engine::NotAdmitted(int id, double t, PendingReason out) const {
  const TenantJob& s = Spec(id);
  if (!s.high) {
    out.kind = PendingReason::Kind::kHeadroom;
    out.text = util::Cat("opportunistic: the rest of the workload is expected to want ",
                         Gpus(Forecast(t)), " of the ", Gpus(cluster_gpus_),
                         " GPUs within the guarantee window (what it wants now plus the largest "
                         "rise in these hours on the last 7 days); opportunistic runs within "
                         "their windows hold ",
                         Gpus(OpportunisticGpus(t)), " and this job needs ", s.gpus);
    if (!out.blockers.empty()) {
      util::Append(out.text, "; ", out.blockers.size(), " running jobs hold the room it needs");
    }
    return out;
  }
  // The rule's blockers (its tenant's non-preemptible jobs) besides the room's.
  out.kind = PendingReason::Kind::kGuarantee;
  for (int r : running_) {
    if (Spec(r).high && Spec(r).tenant == s.tenant &&
        std::find(out.blockers.begin(), out.blockers.end(), r) == out.blockers.end()) {
      out.blockers.push_back(r);
    }
  }
  const std::string& tenant = w_.tenants[s.tenant];
  out.text = s.gpus > w_.guarantee_gpus[s.tenant]
                 ? util::Cat("non-preemptible work of tenant ", tenant,
                             " stays within its guarantee of ", w_.guarantee_gpus[s.tenant],
                             " GPUs, and this job needs ", s.gpus, ": it cannot run here")
                 : util::Cat("non-preemptible work of tenant ", tenant,
                             " stays within its guarantee of ", w_.guarantee_gpus[s.tenant],
                             " GPUs; its non-preemptible jobs hold ", Gpus(high_alloc_[s.tenant]));
  return out;
}

// The blockers are the running jobs, any of them, whose eviction would make room at the least
// lost work; the kind says whether this job may evict them under its policy.
PendingReason Engine::Explain(int id, double t) const {
  const JobState& j = jobs_[id];
  const TenantJob& s = Spec(id);
  PendingReason out;
  sched::Preemptor any;  // outranks every running job
  any.pods.assign(j.pods.begin() + static_cast<std::ptrdiff_t>(j.placement.size()), j.pods.end());
  any.priority = 2;
  std::vector<sched::Running> units;
  std::vector<int> owner;
  for (int r : running_) {
    sched::Running u;
    u.placement = jobs_[r].placement;
    u.lost_gpu_seconds = LostNow(r, t);
    units.push_back(std::move(u));
    owner.push_back(r);
  }
  std::optional<sched::Victims> v = sched::ChooseVictims(free_, units, any, {});
  if (v) {
    for (size_t u : v->jobs) out.blockers.push_back(owner[u]);
  }
  if (!Admissible(id, t)) return NotAdmitted(id, t, std::move(out));
  if (!j.placement.empty()) {
    out.kind = PendingReason::Kind::kGangIncomplete;
    out.text = util::Cat("gang incomplete: ", j.placement.size(), " of ", j.pods.size(),
                         " pods placed and held; the rest need room held by ", out.blockers.size(),
                         " running jobs");
    return out;
  }
  sched::Preemptor pre;
  pre.pods = any.pods;
  pre.queue = p_.quotas == Quotas::kNone ? -1 : s.tenant;
  pre.priority = s.high ? 1 : 0;
  pre.priority_across_queues = p_.high_first;
  std::vector<sched::QueueUse> queues(w_.tenants.size());
  for (size_t q = 0; q < queues.size(); ++q) queues[q] = {alloc_[q], Floor(static_cast<int>(q))};
  bool all_evictable = true, any_outranks = false;
  int protected_runs = 0;
  for (int r : out.blockers) {
    protected_runs += WithinMinRuntime(r, t) ? 1 : 0;
    all_evictable = all_evictable && Evictable(id, r, t, pre, queues);
    any_outranks = any_outranks || Spec(r).high || (Spec(r).tenant == s.tenant && !s.high) ||
                   (pre.queue < 0 && !s.high);
  }
  if (all_evictable) {
    out.kind = PendingReason::Kind::kWaitingToPreempt;
    out.text = out.blockers.empty() ? std::string("room is free now; it starts in the next cycle")
                                    : util::Cat("may evict ", out.blockers.size(),
                                                " running jobs and will on its next try");
  } else if (any_outranks) {
    out.kind = PendingReason::Kind::kPriority;
    out.text = util::Cat("lower priority than running work it may not preempt (",
                         out.blockers.size(), " jobs hold the room it needs)");
  } else {
    out.kind = PendingReason::Kind::kFairShare;
    out.text = util::Cat("waiting for fair share: tenant ", w_.tenants[s.tenant], " holds ",
                         Gpus(alloc_[s.tenant]), " GPUs of a fair share of ", Gpus(fair_[s.tenant]),
                         "; the room it needs is held by tenants within their shares");
  }
  if (protected_runs > 0 && !all_evictable) {
    util::Append(out.text, "; ", protected_runs, " of them within their min-runtime");
  }
  return out;
}

void Engine::Sample(double t) {
  if (static_cast<int>(out_.samples.size()) >= o_.reason_samples || t < next_sample_) return;
  for (int id : Order()) {
    if (jobs_[id].running) continue;
    PendingSample sample{id, t, Explain(id, t), false};
    std::vector<int> room = free_;
    for (int r : sample.reason.blockers) {
      for (const auto& [n, g] : jobs_[r].placement) room[n] += g;
    }
    const JobState& j = jobs_[id];
    std::vector<int> left(j.pods.begin() + static_cast<std::ptrdiff_t>(j.placement.size()),
                          j.pods.end());
    sample.fits_without_blockers =
        sched::Fits(left, room) && (!p_.high_within_guarantee || !Spec(id).high ||
                                    Spec(id).gpus <= w_.guarantee_gpus[Spec(id).tenant]);
    out_.samples.push_back(std::move(sample));
    next_sample_ = t + sample_every_;
    return;
  }
}

TenantSnapshot Engine::Snapshot() const {
  TenantSnapshot s;
  s.allocated_gpus = alloc_total_;
  s.held_incomplete_gpus = held_incomplete_;
  s.waiting = !pending_.empty();
  s.tenant_allocated = alloc_;
  s.tenant_fair = fair_;
  s.tenant_waiting.resize(w_.tenants.size());
  for (size_t i = 0; i < w_.tenants.size(); ++i) s.tenant_waiting[i] = !tenant_pending_[i].empty();
  return s;
}

TenantSummary Engine::Run() {
  for (size_t i = 0; i < w_.jobs.size(); ++i) {
    jobs_[i].pods = w_.jobs[i].Pods();
    jobs_[i].remaining = w_.jobs[i].duration;
    events_.push({w_.jobs[i].submit, EventKind::kArrival, static_cast<int>(i), 0});
    ++live_;
  }
  if (o_.reason_samples > 0 && !w_.jobs.empty()) {
    sample_every_ = w_.jobs.back().submit / o_.reason_samples;
  }
  double now = 0;
  TenantSnapshot state = Snapshot();
  // Only timers left and nothing running: nothing can change any more, unless the forecast
  // holds work back (it falls to nothing 7 days after the last demand).
  while (!events_.empty() && (live_ > 0 || !running_.empty() || headroom_timer_at_ > now)) {
    const double t = events_.top().time;
    metrics_.Add(now, t, state);
    if (usage_) usage_->Advance(t - now, state.tenant_allocated);
    now = t;
    while (!events_.empty() && events_.top().time == t) {
      const Event e = events_.top();
      events_.pop();
      if (e.kind != EventKind::kTimer) --live_;
      if (e.kind == EventKind::kArrival) {
        // A job larger than the whole cluster never runs; it is not queued.
        if (sched::Fits(jobs_[e.job].pods, std::vector<int>(free_.size(), o_.gpus_per_node))) {
          AddPending(e.job, t);
        }
      } else if (e.kind == EventKind::kFinish && e.epoch == jobs_[e.job].epoch &&
                 jobs_[e.job].running) {
        Finish(e.job, t);
      }
    }
    Cycle(t);
    if (o_.reason_samples > 0) Sample(t);
    state = Snapshot();
  }
  out_.policy = p_.name;
  out_.jobs = static_cast<int64_t>(w_.jobs.size());
  out_.finished = static_cast<int64_t>(jct_.size());
  double sum = 0;
  for (double x : jct_) sum += x;
  out_.jct_mean_s = jct_.empty() ? 0 : sum / jct_.size();
  out_.jct_p99_s = Percentile(jct_, 99);
  out_.queue_delay_p95_high_s = Percentile(delay_high_, 95);
  out_.queue_delay_p95_low_s = Percentile(delay_low_, 95);
  out_.queue_delays_high_s = delay_high_;
  out_.queue_delays_low_s = delay_low_;
  out_.hourly = metrics_.Hourly();
  out_.jain_min_hourly = JainMinHourly(out_.hourly);
  out_.alloc_while_queued = metrics_.AllocWhileQueued();
  out_.incomplete_gang_gpu_seconds = metrics_.IncompleteGangGpuSeconds();
  out_.night_alloc = metrics_.NightAlloc();
  out_.day_alloc = metrics_.DayAlloc();
  int64_t opportunistic_jobs = 0, evicted = 0;
  for (size_t i = 0; i < w_.jobs.size(); ++i) {
    if (!Opportunistic(static_cast<int>(i))) continue;
    ++opportunistic_jobs;
    evicted += evicted_in_window_[i] ? 1 : 0;
  }
  if (opportunistic_jobs > 0) {
    out_.opportunistic_evictions_per_window =
        windows_ > 0 ? static_cast<double>(window_evictions_) / static_cast<double>(windows_) : 0;
    out_.opportunistic_jobs_evicted_in_window =
        static_cast<double>(evicted) / static_cast<double>(opportunistic_jobs);
  }
  return out_;
}

}  // namespace

std::string KindName(PendingReason::Kind kind) {
  switch (kind) {
    case PendingReason::Kind::kWaitingToPreempt:
      return "waiting-to-preempt";
    case PendingReason::Kind::kFairShare:
      return "fair-share";
    case PendingReason::Kind::kPriority:
      return "priority";
    case PendingReason::Kind::kGuarantee:
      return "guarantee";
    case PendingReason::Kind::kGangIncomplete:
      return "gang-incomplete";
    case PendingReason::Kind::kHeadroom:
      return "opportunistic-headroom";
  }
  return "unknown";
}

TenantSummary RunTenantReplay(const TenantWorkload& workload, const TenantPolicy& policy,
                              const TenantRunOptions& options, uint64_t seed) {
  Engine e(workload, policy, options);
  TenantSummary s = e.Run();
  s.seed = seed;
  return s;
}

}  // namespace gpuplane::sim
