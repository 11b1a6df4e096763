// The tenant replay: a multi-tenant job workload (tenant_workload.h) on whole 8-GPU nodes
// under one multi-tenant policy (tenant_policy.h). Jobs arrive, wait, start (a gang all at
// once, or pod by pod with placed members held, as the policy does), run, and may be
// preempted: a preempted job restarts from its last checkpoint (every checkpoint interval of
// its run) and its remaining run grows by the lost work and the restore time. Each event
// instant runs one scheduling cycle: fair shares recomputed (sched/fair_share.h), pending jobs
// in the policy's order placed where they fit, best fit (under gpuplane, nodes held for the
// first job within its tenant's share that cannot start: TenantPolicy::fair_share_holds); a
// waiting job entitled to preempt (a non-preemptible job over preemptible ones of its tenant,
// or a tenant below its share) chooses victims by the policy's rule under the shared rules of
// sched/victims.h, never one within its min-runtime where the policy honours it.
// Opportunistic work (a tenant with no guarantee and no weight) runs on idle GPUs, last in
// every order; under gpuplane a run within its guarantee window is a victim only when nothing
// else makes room, and opportunistic work starts only while the growth the rest of the
// workload showed over the coming hours on earlier days leaves room. Placement counts whole GPUs
// (the Philly trace asks for nothing else). Each call is independent and thread-safe; the
// workload is borrowed for the call.
#ifndef GPUPLANE_SIM_TENANT_REPLAY_H_
#define GPUPLANE_SIM_TENANT_REPLAY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/tenant_metrics.h"
#include "sim/tenant_policy.h"
#include "sim/tenant_workload.h"

namespace gpuplane::sim {

struct TenantRunOptions {
  int nodes = 64;
  int gpus_per_node = 8;
  double checkpoint_interval = 1800;
  double restore_seconds = 60;
  // A waiting job tries preemption again only after this long (bounds the work per cycle).
  double preemption_retry_seconds = 60;
  // A reclaim from B by A and then from A by B within this long counts as a fair-share cycle.
  double cycle_cooldown_seconds = 600;
  // Explain this many pending jobs, spread over the run (0: none): each gets a reason and the
  // running jobs that block it, and a what-if checks that without them it would fit.
  int reason_samples = 0;
  // Opportunistic work: each run it starts is protected this long (policies with
  // window_protection); an eviction within it counts against the eviction rate.
  double guarantee_window = 3600;
  // Min-runtime for tenants and jobs that set none (0: none); honoured by policies with
  // TenantPolicy::min_runtime.
  double min_runtime = 0;
  // > 0: fair shares lean against each tenant's GPU use decayed with this half-life (seconds):
  // weights W become max(W + usage_k (W - U), 0), U the normalized decayed use (KAI's
  // time-based fair share, sched/fair_share.h). The share every policy's metrics compare
  // against, and the one kai, volcano and gpuplane schedule by.
  double usage_half_life = 0;
  double usage_k = 1;
  // A victim's grace period (seconds; Kubernetes' terminationGracePeriodSeconds): it runs on
  // this long after it is chosen, holding its GPUs, so a checkpoint due within it still
  // lands; what it loses is counted when it stops (lost work at t + grace, which is what
  // policies that choose by lost work compare). A victim that would finish within it
  // finishes; its preemptor starts when the grace ends.
  double preemption_grace = 0;
  // >= 0: jobs marked TenantJob::saves_on_signal save their state on the termination signal,
  // taking this long: a victim whose grace covers it keeps all its work, loses only the
  // restore (sched::SavesOnSignal) and exits once saved, which is when its preemptor may start
  // (when no other victim holds on longer). -1: no job does.
  double signal_save_seconds = -1;
};

// Why a job waits after a cycle, with the running jobs whose removal would let it start.
struct PendingReason {
  enum class Kind {
    kWaitingToPreempt,  // it may evict the blockers and will on its next try
    kFairShare,         // the room it needs is held by tenants within their fair shares
    kPriority,          // held by work it may not preempt (non-preemptible, or its own tenant's)
    kGuarantee,         // non-preemptible work beyond its tenant's guarantee (kai)
    kGangIncomplete,    // some members placed, the rest wait (pod-by-pod policies)
    kHeadroom,          // opportunistic: the rest of the workload is expected to need the room
  };
  Kind kind = Kind::kWaitingToPreempt;
  std::string text;
  std::vector<int> blockers;  // job indices
};

struct PendingSample {
  int job = 0;
  double time = 0;
  PendingReason reason;
  bool fits_without_blockers = false;  // the what-if
};

struct TenantSummary {
  std::string policy;
  uint64_t seed = 0;
  int64_t jobs = 0;
  int64_t finished = 0;  // jobs that ran to completion (the rest never started)
  double jct_mean_s = 0;
  double jct_p99_s = 0;
  double queue_delay_p95_high_s = 0;
  double queue_delay_p95_low_s = 0;
  double alloc_while_queued = 0;
  double jain_min_hourly = 1;
  int64_t preemptions = 0;  // jobs evicted
  double lost_gpu_hours = 0;
  int64_t partial_gang_evictions = 0;
  double incomplete_gang_gpu_seconds = 0;
  int64_t fair_share_cycles = 0;
  // Opportunistic work (-1 when the workload has none): evictions within the guarantee
  // window per window granted (each run started), and the fraction of its jobs evicted at
  // least once within a window.
  double opportunistic_evictions_per_window = -1;
  double opportunistic_jobs_evicted_in_window = -1;
  // Mean allocated fraction of the cluster at night (22:00-06:00) and by day, until the last
  // submission (the drain after it is left out).
  double night_alloc = 0;
  double day_alloc = 0;
  double end_s = 0;                    // when the last job finished
  std::vector<PendingSample> samples;  // TenantRunOptions::reason_samples
  std::vector<int> evictions;          // jobs evicted, in order
  // For reports: each eviction's lost GPU-seconds (parallel to evictions), every started
  // job's queueing delay (submission to first start) by class, and the per-tenant hours.
  std::vector<double> lost_gpu_seconds;
  std::vector<double> queue_delays_high_s, queue_delays_low_s;
  std::vector<TenantHour> hourly;
};

std::string KindName(PendingReason::Kind kind);

TenantSummary RunTenantReplay(const TenantWorkload& workload, const TenantPolicy& policy,
                              const TenantRunOptions& options, uint64_t seed);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_TENANT_REPLAY_H_
