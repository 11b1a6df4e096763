// The tenant replay's pending reasons (sim/internal/tenant_engine.h): why a job waits, with
// the running jobs that block it, and the samples whose blockers are checked in a what-if.
#include <algorithm>

#include "sim/internal/tenant_engine.h"
#include "util/strings.h"

namespace gpuplane::sim::internal {

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

}  // namespace gpuplane::sim::internal
