// The tenant replay's preemption (sim/internal/tenant_engine.h): which running jobs a pending
// job may evict under its policy, the victims it chooses, and the evictions.
#include <algorithm>
#include <map>

#include "sim/internal/tenant_engine.h"

namespace gpuplane::sim::internal {

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

}  // namespace gpuplane::sim::internal
