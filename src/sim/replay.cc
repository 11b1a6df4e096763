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
  SimState sim(std::move(cluster));
  sched::Rng rng(options.seed);
  std::vector<uint32_t> node_order = sim.view().priority;
  rng.Shuffle(node_order);
  sim.view().SetPriority(std::move(node_order));
  const double total = static_cast<double>(sim.view().total_milli);
  ReplayRun run;
  run.policy = policy_name;
  run.seed = options.seed;
  run.jobs = static_cast<int64_t>(jobs.size());
  double horizon = 0;
  for (const ReplayJob& j : jobs) {
    horizon = std::max(horizon, j.arrival + std::max(0.0, j.duration));
  }
  std::vector<Placed> placed(jobs.size());
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures;
  double now = 0, last = 0, allocated_time = 0;
  double sample_every = horizon > 0 ? horizon / std::max(1, options.samples) : 1;
  double next_sample = 0;
  auto advance = [&](double t) {  // integrate utilization and take samples up to t
    while (next_sample <= t && next_sample <= horizon) {
      run.utilization.emplace_back(next_sample,
                                   static_cast<double>(sim.allocated_milli()) * 100 / total);
      next_sample += sample_every;
    }
    allocated_time += static_cast<double>(sim.allocated_milli()) * (t - last);
    last = t;
  };
  auto try_start = [&](size_t j) {
    std::optional<sched::Placement> where = (*policy)->Place(sim.view(), jobs[j].demand, rng);
    if (!where) return false;
    std::optional<Placed> p = sim.Place(jobs[j].demand, *where);
    if (!p) {
      ++run.disagreements;
      return false;
    }
    placed[j] = std::move(*p);
    run.waits.push_back(now - jobs[j].arrival);
    ++run.started;
    if (jobs[j].duration >= 0) departures.push({now + jobs[j].duration, j});
    return true;
  };
  // The queue, by shape: jobs with equal demands wait in one FIFO each, with arrival order
  // numbers, so a retry pass walks shapes rather than jobs and the queue's length costs
  // nothing. A pass starts jobs in queue order among the shapes that may fit, exactly as
  // walking the whole queue would.
  struct Shape {
    sched::PodDemand demand;
    std::deque<std::pair<uint64_t, size_t>> waiting;  // (order, job)
  };
  std::vector<Shape> shapes;
  std::map<std::tuple<int64_t, int64_t, int, int, uint64_t>, size_t> shape_index;
  uint64_t order = 0;
  auto enqueue = [&](size_t j) {
    const sched::PodDemand& d = jobs[j].demand;
    auto [it, fresh] = shape_index.try_emplace(
        std::make_tuple(d.cpu_milli, d.memory_mib, d.num_gpu, d.gpu_milli, d.models),
        shapes.size());
    if (fresh) shapes.push_back(Shape{d, {}});
    shapes[it->second].waiting.emplace_back(order++, j);
  };
  // Every queued job fits nowhere as of the last pass (arrivals are tried first, then queued),
  // and since then only the nodes in `freed` gained room; so a shape that fits none of them
  // still fits nowhere, and the policy's full search is spent only on jobs that may start.
  std::vector<uint32_t> freed;
  auto retry_queue = [&] {
    std::vector<size_t> active;
    for (size_t s = 0; s < shapes.size(); ++s) {
      if (shapes[s].waiting.empty()) continue;
      bool may_fit = options.full_retry || std::any_of(freed.begin(), freed.end(), [&](uint32_t n) {
                       return sched::Feasible(sim.view().nodes[n], shapes[s].demand);
                     });
      if (may_fit) active.push_back(s);
    }
    while (!active.empty()) {
      auto first = std::min_element(active.begin(), active.end(), [&](size_t a, size_t b) {
        return shapes[a].waiting.front().first < shapes[b].waiting.front().first;
      });
      Shape& shape = shapes[*first];
      if (try_start(shape.waiting.front().second)) {
        shape.waiting.pop_front();
        if (shape.waiting.empty()) active.erase(first);
        continue;
      }
      // This shape fits nowhere now, and neither does any shape needing at least as much.
      sched::PodDemand failed = shape.demand;
      active.erase(first);
      if (!options.full_retry) {
        std::erase_if(active, [&](size_t s) { return NoSmaller(failed, shapes[s].demand); });
      }
    }
    freed.clear();
  };
  size_t next = 0;
  while (next < jobs.size() || !departures.empty()) {
    bool arrival =
        next < jobs.size() && (departures.empty() || jobs[next].arrival <= departures.top().time);
    now = arrival ? jobs[next].arrival : departures.top().time;
    advance(now);
    if (arrival) {
      size_t j = next++;
      // Nothing freed since the queue was last retried, so trying the newcomer first is fair.
      if (!try_start(j)) enqueue(j);
      continue;
    }
    // Every departure at this instant, then one retry of the queue.
    while (!departures.empty() && departures.top().time == now) {
      size_t j = departures.top().job;
      departures.pop();
      absl::Status s = sim.Release(jobs[j].demand, placed[j]);
      if (!s.ok()) return s;
      freed.push_back(placed[j].node);
    }
    retry_queue();
  }
  // Queued jobs can finish after the last arrival's planned end: the run ends at the later.
  run.end_time = std::max(horizon, now);
  advance(run.end_time);
  for (const Shape& shape : shapes) run.never_started += static_cast<int64_t>(shape.waiting.size());
  run.gpu_hours = allocated_time / 1000 / 3600;
  run.disagreements += sim.disagreements();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return run;
}

}  // namespace gpuplane::sim
