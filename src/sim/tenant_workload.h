// Multi-tenant workloads for the tenant replay (tenant_replay.h): jobs with a submission time,
// a run time, whole GPUs and a tenant, each tenant with a guaranteed number of GPUs; jobs of
// more than 8 GPUs are gangs of 8-GPU pods. From the Philly trace, tenants' guarantees come
// from their share of its GPU time (philly.h says why), and a seeded draw marks a fraction of
// jobs non-preemptible (`high`; the trace has no priorities); another, when asked, marks a
// share as saving on the termination signal (no trace says). Plain values; pure functions;
// thread-safe. The day/night workload with opportunistic work is daynight.h's.
#ifndef GPUPLANE_SIM_TENANT_WORKLOAD_H_
#define GPUPLANE_SIM_TENANT_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/philly.h"

namespace gpuplane::sim {

inline constexpr int kPodGpus = 8;  // a gang's members are whole 8-GPU nodes

struct TenantJob {
  double submit = 0;    // seconds
  double duration = 0;  // seconds of running it needs
  int gpus = 0;
  int tenant = 0;
  bool high = false;              // non-preemptible priority class; the rest may be preempted
  std::vector<int> Pods() const;  // GPUs of each pod
  // Seconds after each start during which it is never a victim (policies that honour
  // min-runtime); < 0: its tenant's (TenantWorkload::min_runtime).
  double min_runtime = -1;
  // It saves its state on the termination signal (TenantRunOptions::signal_save_seconds says
  // how long that takes).
  bool saves_on_signal = false;
};

struct TenantWorkload {
  std::vector<std::string> tenants;
  std::vector<int> guarantee_gpus;  // per tenant
  std::vector<TenantJob> jobs;      // by submission
  std::string guarantee_note;       // how the guarantees were set, for every report
  // Per tenant (empty: none): its jobs are opportunistic work, which takes no fair share
  // (no guarantee, no over-guarantee weight), runs on idle GPUs and is evicted first.
  std::vector<bool> opportunistic;
  // Per tenant (empty or < 0: TenantRunOptions::min_runtime): its jobs' min-runtime, seconds.
  std::vector<double> min_runtime;
  bool Opportunistic(int tenant) const {
    return static_cast<size_t>(tenant) < opportunistic.size() && opportunistic[tenant];
  }
};

// REQUIRES: 0 <= high_fraction <= 1; cluster_gpus > 0.
TenantWorkload FromPhilly(const PhillyTrace& trace, int cluster_gpus, double high_fraction,
                          uint64_t seed);

// Marks a `share` of the jobs as saving on the termination signal, each by a draw seeded with
// `seed` and the job's own values (submission, duration, GPUs, tenant), so a job draws the same
// in a workload with and without opportunistic work. REQUIRES: 0 <= share <= 1.
void DrawSignalSavers(TenantWorkload& w, double share, uint64_t seed);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_TENANT_WORKLOAD_H_
