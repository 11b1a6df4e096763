#include "sim/claim_replay.h"

#include <algorithm>
#include <cmath>
#include <list>

#include "alloc/allocator.h"
#include "alloc/batch.h"
#include "alloc/request.h"
#include "api/loader.h"
#include "model/allocation_state.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"
#include "sim/engine.h"
#include "util/strings.h"
#include "util/suggest.h"

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

}  // namespace

absl::StatusOr<ClaimWorkload> LoadClaimWorkload(const std::vector<std::string>& paths) {
  ClaimWorkload out;
  absl::StatusOr<api::LoadResult> read = api::LoadPaths(paths);
  if (!read.ok()) return read.status();
  api::LoadResult& loaded = *read;
  for (const api::Diagnostic& d : loaded.diagnostics) {
    if (d.is_error()) out.problems.push_back(d.ToString());
  }
  absl::StatusOr<std::vector<alloc::AllocationUnit>> units = alloc::AllocationUnits(loaded.objects);
  if (!units.ok()) {
    out.problems.emplace_back(units.status().message());
    return out;
  }
  for (alloc::AllocationUnit& u : *units) {
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
      out.problems.push_back(util::Cat(where, ": ", u.Label(), ": ", problem, "; skipped"));
      continue;
    }
    std::string label = u.Label();
    out.jobs.push_back(
        {std::move(label), where, *u.source, std::move(u.claims), *arrival, *duration});
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

// Drops (with a problem naming it) the jobs whose claims do not compile or that no node of
// the empty cluster can run.
void CompileRunnable(const model::Inventory& inv, const alloc::Allocator& allocator,
                     std::vector<ClaimJob>& jobs, std::vector<std::string>& problems) {
  alloc::Allocator explainer(inv);
  alloc::SelectorCache cache;
  model::AllocationState state(inv);
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
    runnable.push_back(std::move(job));
  }
  jobs = std::move(runnable);
}

// The job as a pod of the engine's PodSet. Keys carry the job's index, so jobs with equal
// names (a workload may repeat one) stay apart.
sched::PodInfo SimPod(const ClaimJob& job, size_t index) {
  sched::PodInfo p = sched::DescribePod(job.pod, index);
  p.key = util::Cat(index, ":", p.key);
  p.bound_node.clear();  // the replay places every job itself
  for (const api::ResourceClaim& c : job.claims) {
    p.claims.push_back({util::Cat(index, ":", c.metadata.namespace_name, "/", c.metadata.name),
                        sched::OwnedClaim(c), false});
  }
  return p;
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

absl::StatusOr<ReplayRun> ReplayClaims(const std::vector<api::SourcedObject>& cluster,
                                       std::vector<ClaimJob>& jobs, const std::string& policy,
                                       std::vector<std::string>& problems, int samples) {
  if (policy != "gpuplane" && policy != "k8s") {
    return absl::InvalidArgumentError(
        util::Cat("--policy ", policy, ": a workload of Pods with claims runs with gpuplane or k8s",
                  util::DidYouMean(policy, {"gpuplane", "k8s"})));
  }
  std::unique_ptr<sched::Snapshot> snapshot = sched::Snapshot::Build(cluster);
  const model::Inventory& inv = snapshot->inventory();
  EngineConfig config;
  // gpuplane takes the cheapest model that fits, then packs (fullest first, keeping whole
  // nodes free), with the allocator's scoring;
  // k8s spreads (least allocated) and takes the first devices that fit.
  config.policy = policy == "gpuplane" ? "worth-pack" : "spread";
  config.devices =
      policy == "gpuplane" ? sched::DeviceChoice::kScored : sched::DeviceChoice::kFirstFit;
  alloc::AllocatorOptions options{.explain = false};
  if (config.devices == sched::DeviceChoice::kFirstFit) options.max_solutions = 1;
  CompileRunnable(inv, alloc::Allocator(inv, options), jobs, problems);

  config.load.device_units = GpuShares(inv);
  config.load.node_capacity = NodeGpus(inv, config.load.device_units);
  double horizon = 0;
  for (const ClaimJob& j : jobs) horizon = std::max(horizon, j.arrival + j.duration);
  config.samples = samples;
  config.sample_span = horizon;
  sched::PodSet pods;
  std::vector<EngineJob> engine_jobs;
  for (size_t i = 0; i < jobs.size(); ++i) {
    pods.pods.push_back(SimPod(jobs[i], i));
    engine_jobs.push_back({jobs[i].arrival, jobs[i].duration});
  }
  absl::StatusOr<EngineRun> er = RunEngine(*snapshot, pods, engine_jobs, config);
  if (!er.ok()) return er.status();
  ReplayRun run;
  run.policy = policy;
  run.jobs = static_cast<int64_t>(jobs.size());
  run.waits = std::move(er->waits);
  run.utilization = std::move(er->samples);
  run.started = static_cast<int64_t>(run.waits.size());
  run.never_started = static_cast<int64_t>(er->never_started);
  run.end_time = er->end_time;
  run.gpu_hours = er->unit_time / 3600;
  return run;
}

}  // namespace gpuplane::sim
