#include "sim/replay.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <queue>
#include <tuple>

#include "sched/policy.h"
#include "sched/rng.h"

namespace gpuplane::sim {
namespace {

// Whether `b` needs at least what `a` needs (so if `a` fits nowhere, neither does `b`).
bool NoSmaller(const sched::PodDemand& a, const sched::PodDemand& b) {
  bool models = a.models == 0 || (b.models != 0 && (b.models & ~a.models) == 0);
  return b.cpu_milli >= a.cpu_milli && b.memory_mib >= a.memory_mib && b.num_gpu == a.num_gpu &&
         b.gpu_milli >= a.gpu_milli && models;
}

struct Departure {
  double time;
  size_t job;
  bool operator>(const Departure& o) const { return time != o.time ? time > o.time : job > o.job; }
};

}  // namespace

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

// One trace replay: arrivals tried first, then queued by shape; departures free their nodes
// and retry the queue once per instant.
class TraceReplay {
 public:
  TraceReplay(std::shared_ptr<const SimCluster> cluster, const std::vector<ReplayJob>& jobs,
              std::unique_ptr<sched::Policy> policy, const std::string& policy_name,
              const ReplayOptions& options)
      : rng_(options.seed), jobs_(jobs), options_(options), placed_(jobs.size()) {
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
    total_ = static_cast<double>(sim_->view().total_milli);
    run_.policy = policy_name;
    run_.seed = options.seed;
    run_.jobs = static_cast<int64_t>(jobs.size());
    for (const ReplayJob& j : jobs) {
      horizon_ = std::max(horizon_, j.arrival + std::max(0.0, j.duration));
    }
    sample_every_ = horizon_ > 0 ? horizon_ / std::max(1, options.samples) : 1;
  }

  absl::StatusOr<ReplayRun> Run() {
    if (!error_.ok()) return error_;
    size_t next = 0;
    while (next < jobs_.size() || !departures_.empty()) {
      bool arrival = next < jobs_.size() &&
                     (departures_.empty() || jobs_[next].arrival <= departures_.top().time);
      now_ = arrival ? jobs_[next].arrival : departures_.top().time;
      Advance(now_);
      if (arrival) {
        size_t j = next++;
        // Nothing freed since the queue was last retried, so trying the newcomer first is fair.
        if (!TryStart(j)) Enqueue(j);
        continue;
      }
      // Every departure at this instant, then one retry of the queue.
      while (!departures_.empty() && departures_.top().time == now_) {
        size_t j = departures_.top().job;
        departures_.pop();
        absl::Status s = sim_->Release(j);
        if (!s.ok()) return s;
        freed_.push_back(placed_[j]);
      }
      RetryQueue();
    }
    // Queued jobs can finish after the last arrival's planned end: the run ends at the later.
    run_.end_time = std::max(horizon_, now_);
    Advance(run_.end_time);
    for (const Shape& shape : shapes_) {
      run_.never_started += static_cast<int64_t>(shape.waiting.size());
    }
    run_.gpu_hours = allocated_time_ / 1000 / 3600;
    run_.disagreements += sim_->disagreements();
    return std::move(run_);
  }

 private:
  // The queue, by shape: jobs with equal demands wait in one FIFO each, with arrival order
  // numbers, so a retry pass walks shapes rather than jobs and the queue's length costs
  // nothing. A pass starts jobs in queue order among the shapes that may fit, exactly as
  // walking the whole queue would.
  struct Shape {
    sched::PodDemand demand;
    std::deque<std::pair<uint64_t, size_t>> waiting;  // (order, job)
  };

  void Advance(double t) {  // integrate utilization and take samples up to t
    while (next_sample_ <= t && next_sample_ <= horizon_) {
      run_.utilization.emplace_back(next_sample_,
                                    static_cast<double>(sim_->allocated_milli()) * 100 / total_);
      next_sample_ += sample_every_;
    }
    allocated_time_ += static_cast<double>(sim_->allocated_milli()) * (t - last_);
    last_ = t;
  }

  bool TryStart(size_t j) {
    SimState::Placed p = sim_->Place(j, jobs_[j].demand);
    if (p.outcome != SimState::Outcome::kPlaced) {
      if (p.outcome == SimState::Outcome::kRefused) ++run_.disagreements;
      return false;
    }
    placed_[j] = p.node;
    run_.waits.push_back(now_ - jobs_[j].arrival);
    ++run_.started;
    if (jobs_[j].duration >= 0) departures_.push({now_ + jobs_[j].duration, j});
    return true;
  }

  void Enqueue(size_t j) {
    const sched::PodDemand& d = jobs_[j].demand;
    auto [it, fresh] = shape_index_.try_emplace(
        std::make_tuple(d.cpu_milli, d.memory_mib, d.num_gpu, d.gpu_milli, d.models),
        shapes_.size());
    if (fresh) shapes_.push_back(Shape{d, {}});
    shapes_[it->second].waiting.emplace_back(order_++, j);
  }

  // Every queued job fits nowhere as of the last pass (arrivals are tried first, then queued),
  // and since then only the nodes in `freed_` gained room; so a shape that fits none of them
  // still fits nowhere, and the policy's full search is spent only on jobs that may start.
  void RetryQueue() {
    std::vector<size_t> active;
    for (size_t s = 0; s < shapes_.size(); ++s) {
      if (shapes_[s].waiting.empty()) continue;
      bool may_fit =
          options_.full_retry || std::any_of(freed_.begin(), freed_.end(), [&](uint32_t n) {
            return sched::Feasible(sim_->view().nodes[n], shapes_[s].demand);
          });
      if (may_fit) active.push_back(s);
    }
    while (!active.empty()) {
      auto first = std::min_element(active.begin(), active.end(), [&](size_t a, size_t b) {
        return shapes_[a].waiting.front().first < shapes_[b].waiting.front().first;
      });
      Shape& shape = shapes_[*first];
      if (TryStart(shape.waiting.front().second)) {
        shape.waiting.pop_front();
        if (shape.waiting.empty()) active.erase(first);
        continue;
      }
      // This shape fits nowhere now, and neither does any shape needing at least as much.
      sched::PodDemand failed = shape.demand;
      active.erase(first);
      if (!options_.full_retry) {
        std::erase_if(active, [&](size_t s) { return NoSmaller(failed, shapes_[s].demand); });
      }
    }
    freed_.clear();
  }

  sched::Rng rng_;
  std::unique_ptr<SimState> sim_;
  absl::Status error_;
  const std::vector<ReplayJob>& jobs_;
  const ReplayOptions& options_;
  ReplayRun run_;
  double total_ = 0, horizon_ = 0, sample_every_ = 1, next_sample_ = 0;
  double now_ = 0, last_ = 0, allocated_time_ = 0;
  std::vector<uint32_t> placed_;  // each started job's view node
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures_;
  std::vector<Shape> shapes_;
  std::map<std::tuple<int64_t, int64_t, int, int, uint64_t>, size_t> shape_index_;
  uint64_t order_ = 0;
  std::vector<uint32_t> freed_;
};

}  // namespace

absl::StatusOr<ReplayRun> RunReplay(std::shared_ptr<const SimCluster> cluster,
                                    const std::vector<ReplayJob>& jobs,
                                    const sched::Workload& workload, const std::string& policy_name,
                                    const ReplayOptions& options) {
  auto wall = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<sched::Policy>> policy = sched::MakePolicy(policy_name, workload);
  if (!policy.ok()) return policy.status();
  if (!std::is_sorted(jobs.begin(), jobs.end(), [](const ReplayJob& a, const ReplayJob& b) {
        return a.arrival < b.arrival;
      })) {
    return absl::InvalidArgumentError("replay jobs must be sorted by arrival time");
  }
  absl::StatusOr<ReplayRun> run =
      TraceReplay(std::move(cluster), jobs, std::move(*policy), policy_name, options).Run();
  if (run.ok()) {
    run->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
  return run;
}

}  // namespace gpuplane::sim
