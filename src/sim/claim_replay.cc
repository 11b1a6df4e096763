#include "sim/claim_replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>

#include "alloc/allocator.h"
#include "alloc/batch.h"
#include "alloc/request.h"
#include "api/loader.h"
#include "model/allocation_state.h"
#include "sim/fifo_events.h"
#include "sim/node_load.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

// A non-negative number of seconds from an annotation; nullopt (with `problem`) when bad.
std::optional<double> Seconds(const api::ObjectMeta& meta, const char* key, double fallback,
                              bool required, std::string& problem) {
  auto it = meta.annotations.find(key);
  if (it == meta.annotations.end()) {
    if (required) problem = util::Cat("annotation ", key, " (seconds) is missing");
    return required ? std::nullopt : std::optional<double>(fallback);
  }
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || v > 1e10) {
    problem = util::Cat("annotation ", key, ": \"", it->second,
                        "\" is not a number of seconds (0 to 1e10)");
    return std::nullopt;
  }
  return v;
}

// A device's share of a physical GPU: its memory over the largest memory of a device of the
// same driver on its node (a whole GPU is 1, a MIG slice its memory share); 1 without memory.
std::vector<double> GpuShares(const model::Inventory& inv) {
  std::vector<double> share(inv.devices().size(), 1);
  for (const model::NodeInfo& node : inv.nodes()) {
    std::map<std::string, double> largest;
    auto memory = [&](model::DeviceId d) -> double {
      const api::Device& dev = *inv.devices()[d].spec;
      auto it = dev.capacity.find("memory");
      return it == dev.capacity.end() ? 0 : static_cast<double>(it->second.value.Value());
    };
    auto driver = [&](model::DeviceId d) -> const std::string& {
      return inv.pools()[inv.devices()[d].pool].driver;
    };
    for (model::DeviceId d : node.devices) {
      double& l = largest[driver(d)];
      l = std::max(l, memory(d));
    }
    for (model::DeviceId d : node.devices) {
      double l = largest[driver(d)];
      share[d] = l > 0 ? memory(d) / l : 1;
    }
  }
  return share;
}

struct Running {
  std::vector<alloc::Choice> choices;
  model::NodeId node = 0;
  double gpus = 0;
};

}  // namespace

ClaimWorkload LoadClaimWorkload(const std::vector<std::string>& paths) {
  ClaimWorkload out;
  api::LoadResult loaded = api::LoadPaths(paths);
  for (const api::Diagnostic& d : loaded.diagnostics) {
    if (d.is_error()) out.problems.push_back(d.ToString());
  }
  absl::StatusOr<std::vector<alloc::Unit>> units = alloc::Units(loaded.objects);
  if (!units.ok()) {
    out.problems.emplace_back(units.status().message());
    return out;
  }
  for (alloc::Unit& u : *units) {
    const auto* pod = std::get_if<api::Pod>(&u.source->object);
    if (pod == nullptr) continue;  // claims and templates only serve Pods here
    std::string where = util::Cat(u.source->file, ":", u.source->line);
    std::string problem;
    if (!u.shared.empty()) {
      problem = util::Cat("shares ResourceClaim ", u.shared.front(),
                          " with an earlier Pod; shared claims are not simulated");
    }
    std::optional<double> arrival = Seconds(pod->metadata, kArrivalAnnotation, 0, false, problem);
    std::optional<double> duration = Seconds(pod->metadata, kDurationAnnotation, 0, true, problem);
    if (problem.empty() && u.claims.empty()) problem = "has no resourceClaims";
    if (!problem.empty()) {
      out.problems.push_back(util::Cat(where, ": ", u.label, ": ", problem, "; skipped"));
      continue;
    }
    out.jobs.push_back({u.label, where, std::move(u.claims), *arrival, *duration});
  }
  std::stable_sort(out.jobs.begin(), out.jobs.end(),
                   [](const ClaimJob& a, const ClaimJob& b) { return a.arrival < b.arrival; });
  return out;
}

double GpuCapacity(const model::Inventory& inv) {
  const std::vector<double> share = GpuShares(inv);
  double capacity = 0;
  for (const model::NodeInfo& node : inv.nodes()) {
    for (model::DeviceId d : node.devices) capacity += share[d] == 1 ? 1 : 0;
  }
  return capacity;
}

namespace {

// Compiles every job; drops (with a problem naming it) those no node of the empty cluster can
// run. Returns the claims of the jobs kept, parallel to `jobs`.
std::vector<std::vector<alloc::CompiledClaim>> CompileRunnable(const model::Inventory& inv,
                                                               const alloc::Allocator& allocator,
                                                               std::vector<ClaimJob>& jobs,
                                                               std::vector<std::string>& problems) {
  alloc::Allocator explainer(inv);
  alloc::SelectorCache cache;
  model::AllocationState state(inv);
  std::vector<std::vector<alloc::CompiledClaim>> compiled;
  std::vector<ClaimJob> runnable;
  for (ClaimJob& job : jobs) {
    std::vector<alloc::CompiledClaim> cc;
    std::string problem;
    for (const api::ResourceClaim& c : job.claims) {
      absl::StatusOr<alloc::CompiledClaim> one =
          alloc::CompileClaim(c.metadata.namespace_name, c.metadata.name, c.spec, inv, cache);
      if (!one.ok()) {
        problem = std::string(one.status().message());
        break;
      }
      cc.push_back(std::move(*one));
    }
    std::vector<const alloc::CompiledClaim*> ptrs;
    ptrs.reserve(cc.size());
    for (const alloc::CompiledClaim& c : cc) ptrs.push_back(&c);
    bool fits = false;
    for (model::NodeId n = 0; problem.empty() && !fits && n < inv.nodes().size(); ++n) {
      fits = allocator.Allocate(ptrs, n, state).allocated;
    }
    if (problem.empty() && !fits) {
      problem = "fits no node even when the cluster is empty";
      if (!inv.nodes().empty()) {
        alloc::Outcome why = explainer.Allocate(ptrs, 0, state);
        if (!why.reasons.empty()) util::Append(problem, " (node 0: ", why.reasons.front(), ")");
      }
    }
    if (!problem.empty()) {
      problems.push_back(util::Cat(job.where, ": ", job.label, ": ", problem, "; skipped"));
      continue;
    }
    compiled.push_back(std::move(cc));
    runnable.push_back(std::move(job));
  }
  jobs = std::move(runnable);
  return compiled;
}

// Each node's capacity in whole GPUs.
std::vector<double> NodeGpus(const model::Inventory& inv, const std::vector<double>& share) {
  std::vector<double> node_gpus(inv.nodes().size(), 0);
  for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
    for (model::DeviceId d : inv.nodes()[n].devices) node_gpus[n] += share[d] == 1 ? 1 : 0;
  }
  return node_gpus;
}

}  // namespace

absl::StatusOr<ReplayRun> ReplayClaims(const model::Inventory& inv, std::vector<ClaimJob>& jobs,
                                       const std::string& policy,
                                       std::vector<std::string>& problems, int samples) {
  if (policy != "gpuplane" && policy != "k8s") {
    return absl::InvalidArgumentError(util::Cat(
        "--policy ", policy, ": a workload of Pods with claims runs with gpuplane or k8s"));
  }
  auto wall = std::chrono::steady_clock::now();
  const bool packing = policy == "gpuplane";
  alloc::AllocatorOptions options{.explain = false};
  if (!packing) options.max_solutions = 1;  // Kubernetes takes the first fit
  alloc::Allocator allocator(inv, options);
  std::vector<std::vector<alloc::CompiledClaim>> compiled =
      CompileRunnable(inv, allocator, jobs, problems);
  model::AllocationState state(inv);

  const std::vector<double> share = GpuShares(inv);
  NodeLoad load(NodeGpus(inv, share));
  const double capacity = load.capacity();
  ReplayRun run;
  run.policy = policy;
  run.jobs = static_cast<int64_t>(jobs.size());
  double horizon = 0;
  for (const ClaimJob& j : jobs) horizon = std::max(horizon, j.arrival + j.duration);
  std::vector<Running> running(jobs.size());
  JobEnds ends;
  double now = 0, last = 0, used_time = 0;
  const double sample_every = horizon > 0 ? horizon / std::max(1, samples) : 1;
  double next_sample = 0;
  auto advance = [&](double t) {  // integrate utilization and take samples up to t
    while (next_sample <= t && next_sample <= horizon) {
      run.utilization.emplace_back(next_sample,
                                   capacity > 0 ? load.total_used() * 100 / capacity : 0);
      next_sample += sample_every;
    }
    used_time += load.total_used() * (t - last);
    last = t;
  };
  auto try_start = [&](size_t j) {
    std::vector<const alloc::CompiledClaim*> ptrs;
    ptrs.reserve(compiled[j].size());
    for (const alloc::CompiledClaim& c : compiled[j]) ptrs.push_back(&c);
    // gpuplane packs (fullest first, keeping whole nodes free); k8s spreads (least allocated).
    for (model::NodeId n : load.Order(packing)) {
      alloc::Outcome o = allocator.Allocate(ptrs, n, state);
      if (!o.allocated) continue;
      if (!allocator.Commit(o, ptrs, state).ok()) return false;
      Running& r = running[j];
      r.choices = o.choices;
      r.node = n;
      r.gpus = 0;
      for (const alloc::Choice& ch : o.choices) r.gpus += share[ch.device];
      load.Add(n, r.gpus);
      run.waits.push_back(now - jobs[j].arrival);
      ends.push({now + jobs[j].duration, j});
      return true;
    }
    return false;
  };
  auto depart = [&](size_t j) {
    Running& r = running[j];
    (void)allocator.Release(r.choices, state);
    load.Remove(r.node, r.gpus);
    return false;
  };
  const std::list<size_t> queue = RunFifoEvents(
      jobs.size(), [&](size_t j) { return jobs[j].arrival; }, ends, Arrivals::kBehindQueue,
      [&](double t) {
        now = t;
        advance(t);
      },
      try_start, depart);
  run.started = static_cast<int64_t>(run.waits.size());
  run.never_started = static_cast<int64_t>(queue.size());
  run.end_time = std::max(horizon, now);
  advance(run.end_time);
  run.gpu_hours = used_time / 3600;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return run;
}

}  // namespace gpuplane::sim
