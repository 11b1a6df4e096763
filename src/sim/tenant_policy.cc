#include "sim/tenant_policy.h"

#include "util/strings.h"
#include "util/suggest.h"

namespace gpuplane::sim {

const std::vector<std::string>& TenantPolicyNames() {
  static const std::vector<std::string> kNames = {"kube",  "kai",      "volcano",
                                                  "kueue", "yunikorn", "gpuplane"};
  return kNames;
}

absl::StatusOr<TenantPolicy> TenantPolicyNamed(const std::string& name) {
  TenantPolicy p;
  p.name = name;
  if (name == "kube") {
    // No quotas; gang members wait in Permit for a fixed 5 minutes; preemption is per pod.
    p.atomic_gangs = false;
    p.gang_hold_seconds = 300;
    p.victims = VictimRule::kPodsLowestPriority;
  } else if (name == "kai") {
    // Deserved quota and over-quota weights; reclaim by saturation; whole-job victims in
    // reverse job order; priority >= 100 is non-preemptible and stays within quota;
    // preemptMinRuntime / reclaimMinRuntime per queue (one value for both here).
    p.quotas = Quotas::kFairShare;
    p.victims = VictimRule::kJobsReverseOrder;
    p.high_within_guarantee = true;
    p.min_runtime = true;
  } else if (name == "volcano") {
    // proportion plugin; gang plugin places gangs whole; victims chosen task by task.
    p.quotas = Quotas::kFairShare;
    p.victims = VictimRule::kPodsLowestPriority;
  } else if (name == "kueue") {
    // Admission by nominal quota with borrowing; kube-scheduler then places pods one by one,
    // waitForPodsReady (30 min) evicts an incomplete workload; victims from borrowing queues.
    p.quotas = Quotas::kNominal;
    p.atomic_gangs = false;
    p.gang_hold_seconds = 1800;
    p.victims = VictimRule::kJobsBorrowingFirst;
  } else if (name == "yunikorn") {
    // Guarantees; gang placeholders time out after 15 minutes; preemption of allocations
    // (pods) after a 30 s delay, never below a queue's guarantee.
    p.quotas = Quotas::kGuarantee;
    p.atomic_gangs = false;
    p.gang_hold_seconds = 900;
    p.victims = VictimRule::kPodsLowestPriority;
    p.preemption_delay = 30;
  } else if (name == "gpuplane") {
    p.quotas = Quotas::kFairShare;
    p.victims = VictimRule::kJobsLostWork;
    p.high_first = true;
    p.reclaim_cooldown = 600;
    p.reclaim_after_checkpoint = 300;
    p.reclaim_delay = 900;
    p.window_protection = true;
    p.fair_share_holds = true;
    p.min_runtime = true;
    p.opportunistic_headroom = true;
  } else {
    std::string known;
    for (const std::string& n : TenantPolicyNames())
      util::Append(known, known.empty() ? "" : ", ", n);
    return absl::InvalidArgumentError(util::Cat("unknown multi-tenant policy \"", name,
                                                "\"; known: ", known,
                                                util::DidYouMean(name, TenantPolicyNames())));
  }
  return p;
}

}  // namespace gpuplane::sim
