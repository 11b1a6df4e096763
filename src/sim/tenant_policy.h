// The multi-tenant policies the tenant replay compares, each a configuration of one engine
// following what ../shared/reference/schedulers.md records of the scheduler it is named
// after: how tenants' quotas work, whether a gang is placed whole or pod by pod (and how long
// placed members wait for the rest), how victims are chosen, and who may evict whom.
// docs/SCHEDULING.md states each rule with its source. Plain values; thread-safe.
#ifndef GPUPLANE_SIM_TENANT_POLICY_H_
#define GPUPLANE_SIM_TENANT_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::sim {

enum class Quotas {
  kNone,       // kube: priority only
  kFairShare,  // kai, volcano, gpuplane: guarantees then weights (sched/fair_share.h)
  kNominal,    // kueue: nominal quota, borrowing what others leave unused
  kGuarantee,  // yunikorn: guaranteed resources; share = allocated / guarantee
};

enum class VictimRule {
  kPodsLowestPriority,  // kube, volcano, yunikorn: pods, newest first (gang-unaware)
  kJobsReverseOrder,    // kai: whole jobs, lowest priority, most recently started first
  kJobsBorrowingFirst,  // kueue: whole jobs from borrowing queues first, then as kai; the set
                        // minimized by dropping victims not needed
  kJobsLostWork,        // gpuplane: whole jobs, least lost work (sched/victims.h)
};

struct TenantPolicy {
  std::string name;
  Quotas quotas = Quotas::kNone;
  bool atomic_gangs = true;      // else pod by pod, members placed so far held
  double gang_hold_seconds = 0;  // pod by pod: how long placed members wait for the rest
  VictimRule victims = VictimRule::kJobsLostWork;
  double preemption_delay = 0;  // a job waits this long before it may preempt
  // Preemptible work waits this long before it may reclaim: most of what it waits for ends
  // on its own meanwhile, without an eviction and its restore.
  double reclaim_delay = 0;
  bool high_within_guarantee = false;  // non-preemptible jobs use only their tenant's guarantee
  // Non-preemptible jobs first across all tenants, and they may evict preemptible jobs of
  // tenants above their fair share (sched::Preemptor::priority_across_queues).
  bool high_first = false;
  // A tenant whose jobs were reclaimed by another does not reclaim from it for this long
  // (0: no such rule), so reclaims never go back and forth.
  double reclaim_cooldown = 0;
  // Preemptible work that waits for room (reclaim) evicts only jobs that checkpointed within
  // this many seconds, or a tenth of the checkpoint interval if less, so it waits for a
  // checkpoint rather than throw work away (0: any).
  double reclaim_after_checkpoint = 0;
  // Opportunistic work (TenantWorkload::opportunistic) is a victim within its guarantee
  // window (TenantRunOptions::guarantee_window) only when nothing else makes room.
  bool window_protection = false;
  // Opportunistic work starts only while the GPUs the rest of the workload is expected to
  // want within the window (what it wants now plus the largest rise over the coming hours on
  // the last 7 days) leave room beside the opportunistic runs still within their windows;
  // it goes beside those young runs, and a reclaim takes a run within its window only after
  // waiting one checkpoint interval.
  bool opportunistic_headroom = false;
  // Once a job that fits within its tenant's fair share cannot start in a cycle, the nodes
  // with the most free GPUs (one per pod it still needs) are reserved for it for the rest of
  // the cycle: preemptible jobs that would take their tenant beyond its share start only on
  // other nodes. GPUs that free up there gather for the tenant below its share instead of
  // going, a few at a time, to tenants above theirs (which starves large gangs).
  bool fair_share_holds = false;
  // Running jobs within their min-runtime (TenantJob::min_runtime, per tenant, or
  // TenantRunOptions::min_runtime) are never victims, of preemption or reclaim.
  bool min_runtime = false;
};

// kube, kai, volcano, kueue, yunikorn, gpuplane.
const std::vector<std::string>& TenantPolicyNames();
// Errors: an unknown name (the message lists the known ones).
absl::StatusOr<TenantPolicy> TenantPolicyNamed(const std::string& name);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_TENANT_POLICY_H_
