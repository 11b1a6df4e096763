#include "sim/replay.h"

#include <algorithm>
#include <optional>

#include "sched/policy.h"
#include "sched/rng.h"
#include "sim/events.h"
#include "sim/shape_queue.h"
#include "sim/usage_meter.h"

namespace gpuplane::sim {

std::vector<ReplayJob> JobsFromTrace(const std::vector<sched::PodDemand>& demands,
                                     const std::vector<double>& creation,
                                     const std::vector<double>& deletion) {
  std::vector<ReplayJob> jobs;
  double start = creation.empty() ? 0 : *std::min_element(creation.begin(), creation.end());
  for (size_t i = 0; i < demands.size(); ++i) {
    double d = deletion[i] >= creation[i] ? deletion[i] - creation[i] : -1;
    jobs.push_back({demands[i], creation[i] - start, d});
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const ReplayJob& a, const ReplayJob& b) { return a.arrival < b.arrival; });
  return jobs;
}

namespace {

// One trace replay on the event loop: arrivals tried first, then queued by shape
// (shape_queue.h); departures free their nodes and retry the queue once per instant.
class TraceReplay {
 public:
  TraceReplay(std::shared_ptr<const SimCluster> cluster, const std::vector<ReplayJob>& jobs,
              std::unique_ptr<sched::Policy> policy, const std::string& policy_name,
              const ReplayOptions& options)
      : rng_(options.seed), jobs_(jobs), placed_(jobs.size()) {
    absl::StatusOr<std::unique_ptr<SimState>> made =
        SimState::Make(std::move(cluster), std::move(policy), rng_);
    if (!made.ok()) {
      error_ = made.status();
      return;
    }
    sim_ = std::move(*made);
    std::vector<uint32_t> node_order = sim_->view().priority;
    rng_.Shuffle(node_order);
    sim_->view().SetPriority(std::move(node_order));
    run_.policy = policy_name;
    run_.seed = options.seed;
    run_.jobs = static_cast<int64_t>(jobs.size());
    for (const ReplayJob& j : jobs) {
      horizon_ = std::max(horizon_, j.arrival + std::max(0.0, j.duration));
    }
    meter_.emplace(static_cast<double>(sim_->view().total_milli), std::max(1, options.samples),
                   horizon_);
    queue_.emplace([this](size_t j) -> const sched::PodDemand& { return jobs_[j].demand; },
                   [this](uint32_t n, const sched::PodDemand& d) {
                     return sched::Feasible(sim_->view().nodes[n], d);
                   },
                   options.full_retry ? ShapeQueue::Pass::kFull : ShapeQueue::Pass::kFreedNodes);
  }

  absl::StatusOr<ReplayRun> Run() {
    if (!error_.ok()) return error_;
    JobEnds ends;
    RunEvents(
        jobs_.size(), [&](size_t j) { return jobs_[j].arrival; }, ends, Arrivals::kTryFirst,
        *queue_, [&](double t) { Advance(t); }, [&](size_t j) { return TryStart(j, ends); },
        [&](size_t j) { return Depart(j); });
    if (!error_.ok()) return error_;
    // Queued jobs can finish after the last arrival's planned end: the run ends at the later.
    run_.end_time = std::max(horizon_, now_);
    Advance(run_.end_time);
    run_.never_started = static_cast<int64_t>(queue_->size());
    run_.utilization = std::move(meter_->samples());
    run_.gpu_hours = meter_->integral() / 1000 / 3600;
    run_.disagreements += sim_->disagreements();
    return std::move(run_);
  }

 private:
  void Advance(double t) {
    now_ = t;
    meter_->Advance(t, static_cast<double>(sim_->allocated_milli()));
  }

  bool TryStart(size_t j, JobEnds& ends) {
    if (!error_.ok()) return false;
    SimState::Placed p = sim_->Place(j, jobs_[j].demand);
    if (p.outcome != SimState::Outcome::kPlaced) {
      if (p.outcome == SimState::Outcome::kRefused) ++run_.disagreements;
      return false;
    }
    placed_[j] = p.node;
    run_.waits.push_back(now_ - jobs_[j].arrival);
    ++run_.started;
    if (jobs_[j].duration >= 0) ends.push({now_ + jobs_[j].duration, j});
    return true;
  }

  bool Depart(size_t j) {
    absl::Status s = sim_->Release(j);
    if (!s.ok() && error_.ok()) error_ = s;
    queue_->NodeFreed(placed_[j]);
    return false;
  }

  sched::Rng rng_;
  std::unique_ptr<SimState> sim_;
  absl::Status error_;
  const std::vector<ReplayJob>& jobs_;
  ReplayRun run_;
  double horizon_ = 0, now_ = 0;
  std::optional<UsageMeter> meter_;
  std::optional<ShapeQueue> queue_;
  std::vector<uint32_t> placed_;  // each started job's view node
};

}  // namespace

absl::StatusOr<ReplayRun> RunReplay(std::shared_ptr<const SimCluster> cluster,
                                    const std::vector<ReplayJob>& jobs,
                                    const sched::Workload& workload, const std::string& policy_name,
                                    const ReplayOptions& options) {
  absl::StatusOr<std::unique_ptr<sched::Policy>> policy = sched::MakePolicy(policy_name, workload);
  if (!policy.ok()) return policy.status();
  if (!std::is_sorted(jobs.begin(), jobs.end(), [](const ReplayJob& a, const ReplayJob& b) {
        return a.arrival < b.arrival;
      })) {
    return absl::InvalidArgumentError("replay jobs must be sorted by arrival time");
  }
  return TraceReplay(std::move(cluster), jobs, std::move(*policy), policy_name, options).Run();
}

}  // namespace gpuplane::sim
