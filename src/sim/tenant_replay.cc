#include "sim/tenant_replay.h"

#include <algorithm>
#include <cstdio>

#include "sim/daynight.h"
#include "sim/internal/tenant_engine.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace internal {

// GPUs as people read them: "134", "150.5".
std::string Gpus(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

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

}  // namespace internal

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
  internal::Engine e(workload, policy, options);
  TenantSummary s = e.Run();
  s.seed = seed;
  return s;
}

}  // namespace gpuplane::sim
