// The engine of sim/tenant_replay.h, shared by its files (tenant_replay.cc: events, placement,
// queues and admission; tenant_preemption.cc: victims; tenant_reasons.cc: pending reasons).
// An Engine borrows the workload, policy and options it is given (they must outlive it) and
// owns the replay's state; one Run per Engine, on one thread (not thread-safe; separate
// Engines run in parallel). Internal to sim/.
#ifndef GPUPLANE_SIM_INTERNAL_TENANT_ENGINE_H_
#define GPUPLANE_SIM_INTERNAL_TENANT_ENGINE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sched/checkpoints.h"
#include "sched/demand_peaks.h"
#include "sched/fair_share.h"
#include "sched/victims.h"
#include "sim/tenant_metrics.h"
#include "sim/tenant_replay.h"

namespace gpuplane::sim::internal {

// GPUs as people read them: "134", "150.5".
std::string Gpus(double v);

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

}  // namespace gpuplane::sim::internal

#endif  // GPUPLANE_SIM_INTERNAL_TENANT_ENGINE_H_
