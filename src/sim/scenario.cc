#include "sim/scenario.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>

#include "alloc/allocator.h"
#include "alloc/request.h"
#include "model/allocation_state.h"
#include "model/inventory.h"
#include "sched/rng.h"
#include "sched/worth.h"
#include "sim/cluster_generator.h"
#include "sim/fifo_events.h"
#include "sim/node_load.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

constexpr char kMix[] = "h100=6,h200=3,b200=3,a100-80gb+mig=4";
constexpr double kOomAfterHours = 0.25;  // an OOM shows once the model is loaded
constexpr int kAttempts = 6;

struct Job {
  double arrival = 0;  // hours
  double hours = 0;
  int gpus = 1;
  int need_gib = 0;  // GPU memory per GPU
  bool inference = false;
};

std::vector<Job> MakeJobs(const ScenarioSpec& spec) {
  sched::Rng rng(spec.seed);
  std::vector<Job> jobs(static_cast<size_t>(spec.jobs));
  auto log_uniform = [&](double lo, double hi) {
    return std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * rng.Unit());
  };
  for (Job& j : jobs) {
    j.arrival = rng.Unit() * spec.days * 24;
    j.inference = rng.Unit() < 0.65;
    if (j.inference) {
      const int needs[] = {8, 10, 16, 20, 35};
      j.need_gib = needs[rng.Below(5)];
      j.hours = log_uniform(1, 12);
    } else {
      double g = rng.Unit();
      j.gpus = g < 0.4 ? 1 : g < 0.7 ? 2 : g < 0.9 ? 4 : 8;
      const int needs[] = {40, 60, 75, 100, 120, 160};  // half need more than an H100 has
      j.need_gib = needs[rng.Below(6)];
      j.hours = log_uniform(2, 24);
    }
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const Job& a, const Job& b) { return a.arrival < b.arrival; });
  return jobs;
}

api::DeviceSelector Cel(std::string expr) {
  return api::DeviceSelector{api::CelDeviceSelector{std::move(expr)}};
}

std::string MemoryAtLeast(int gib) {
  return util::Cat("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('", gib,
                   "Gi')) >= 0");
}

api::ResourceClaimSpec ClaimFor(const Job& j, bool dra) {
  api::ResourceClaimSpec spec;
  api::DeviceRequest r;
  r.name = "gpu";
  if (!dra) {  // nvidia.com/gpu: N
    api::ExactDeviceRequest ex;
    ex.device_class_name = "gpu.nvidia.com";
    ex.count = j.gpus;
    r.exactly = ex;
  } else if (j.inference) {
    for (const char* size : {"1g", "2g", "3g"}) {
      api::DeviceSubRequest sub;
      sub.name = util::Cat("mig-", size);
      sub.device_class_name = "mig.nvidia.com";
      sub.selectors.push_back(Cel(util::Cat(MemoryAtLeast(j.need_gib),
                                            " && device.attributes['gpu.nvidia.com'].profile."
                                            "startsWith('",
                                            size, ".')")));
      r.first_available.push_back(sub);
    }
    api::DeviceSubRequest full;
    full.name = "full";
    full.device_class_name = "gpu.nvidia.com";
    full.selectors.push_back(Cel(MemoryAtLeast(j.need_gib)));
    r.first_available.push_back(full);
  } else {
    api::ExactDeviceRequest ex;
    ex.device_class_name = "gpu.nvidia.com";
    ex.count = j.gpus;
    ex.selectors.push_back(Cel(MemoryAtLeast(j.need_gib)));
    r.exactly = ex;
    if (j.gpus > 1) {
      spec.devices.constraints.push_back(
          {{}, std::string("gpu.nvidia.com/nvlinkDomain"), std::nullopt});
    }
  }
  spec.devices.requests.push_back(std::move(r));
  return spec;
}

struct Running {
  std::vector<alloc::Choice> choices;
  model::NodeId node = 0;
  double gpu_units = 0;  // physical GPUs' worth (a MIG slice counts its memory share)
  bool oom = false;
  double started = 0;
};

std::vector<alloc::CompiledClaim> CompileJobs(const model::Inventory& inv,
                                              const std::vector<Job>& jobs, bool dra) {
  alloc::SelectorCache cache;
  std::vector<alloc::CompiledClaim> claims;
  for (size_t i = 0; i < jobs.size(); ++i) {
    claims.push_back(
        *alloc::CompileClaim("sim", util::Cat("job-", i), ClaimFor(jobs[i], dra), inv, cache));
  }
  return claims;
}

// Each node's capacity in physical GPUs, for node ordering and utilization.
std::vector<double> NodeGpus(const model::Inventory& inv) {
  std::vector<double> node_gpus(inv.nodes().size(), 0);
  for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
    for (model::DeviceId d : inv.nodes()[n].devices) {
      if (inv.devices()[d].spec->attributes.at("type").string_value == "gpu") node_gpus[n] += 1;
    }
  }
  return node_gpus;
}

// Physical GPUs' worth of an allocation (a MIG slice counts its memory share) and, in
// `smallest_gib`, the memory of its smallest device.
double GpuUnits(const model::Inventory& inv, const std::vector<alloc::Choice>& choices,
                int64_t& smallest_gib) {
  double units = 0;
  for (const alloc::Choice& ch : choices) {
    const api::Device& dev = *inv.devices()[ch.device].spec;
    int64_t gib = dev.capacity.at("memory").value.Value() >> 30;
    smallest_gib = std::min(smallest_gib, gib);
    bool full = dev.attributes.at("type").string_value == "gpu";
    units += full ? 1.0 : static_cast<double>(gib) / 80.0;
  }
  return units;
}

void Waits(std::vector<double>& waits, ScenarioResult& res) {
  double sum = 0;
  for (double w : waits) sum += w;
  res.mean_wait_hours = waits.empty() ? 0 : sum / static_cast<double>(waits.size());
  std::sort(waits.begin(), waits.end());
  res.p95_wait_hours =
      waits.empty() ? 0 : waits[std::min(waits.size() - 1, waits.size() * 95 / 100)];
}

ScenarioResult RunMode(const model::Inventory& inv, const std::vector<Job>& jobs, bool dra,
                       const ScenarioSpec& spec) {
  auto wall = std::chrono::steady_clock::now();
  ScenarioResult res;
  res.mode = dra ? "gpuplane" : "k8s";
  res.jobs = static_cast<int64_t>(jobs.size());
  model::AllocationState state(inv);
  alloc::AllocatorOptions options{.explain = false};
  if (!dra) options.max_solutions = 1;  // Kubernetes: first fit
  alloc::Allocator allocator(inv, options);
  std::vector<alloc::CompiledClaim> claims = CompileJobs(inv, jobs, dra);
  NodeLoad load(NodeGpus(inv));
  // gpuplane: the cheapest model that fits first (memory x compute capability), so jobs that
  // fit an H100 leave the H200s and B200s to the ones that need their memory.
  const std::vector<double> node_worth = sched::NodeWorth(inv, sched::DeviceWorth(inv, {}));
  const double capacity = load.capacity();
  std::vector<Running> running(jobs.size());
  std::vector<int> attempts(jobs.size(), 0);
  std::vector<double> waits;
  JobEnds ends;
  double now = 0, last = 0, used_time = 0;
  const double horizon = spec.days * 24;
  auto advance = [&](double t) {
    double upto = std::min(t, horizon);
    if (upto > last) used_time += load.total_used() * (upto - last);
    last = std::max(last, upto);
  };
  auto try_start = [&](size_t j) {
    // k8s spreads (LeastAllocated); gpuplane packs (best fit), keeping whole nodes free.
    for (model::NodeId n : load.Order(/*pack=*/dra, dra ? &node_worth : nullptr)) {
      alloc::Outcome o = allocator.Allocate({&claims[j]}, n, state);
      if (!o.allocated) continue;
      if (!allocator.Commit(o, {&claims[j]}, state).ok()) return false;
      Running& r = running[j];
      r.choices = o.choices;
      r.node = n;
      r.started = now;
      int64_t smallest_gib = INT64_MAX;
      r.gpu_units = GpuUnits(inv, o.choices, smallest_gib);
      r.oom = smallest_gib < jobs[j].need_gib;
      load.Add(n, r.gpu_units);
      ++attempts[j];
      ends.push({now + (r.oom ? std::min(kOomAfterHours, jobs[j].hours) : jobs[j].hours), j});
      return true;
    }
    return false;
  };
  auto depart = [&](size_t j) {  // true: an OOM retry joins the queue again
    Running& r = running[j];
    (void)allocator.Release(r.choices, state);
    load.Remove(r.node, r.gpu_units);
    double gpu_hours = r.gpu_units * (now - r.started);
    if (!r.oom) {
      ++res.completed;
      res.useful_gpu_hours += gpu_hours;
      waits.push_back(r.started - jobs[j].arrival);
      return false;
    }
    ++res.oom_failures;
    res.wasted_gpu_hours += gpu_hours;
    if (attempts[j] < kAttempts) return true;
    ++res.gave_up;
    return false;
  };
  const std::list<size_t> queue = RunFifoEvents(
      jobs.size(), [&](size_t j) { return jobs[j].arrival; }, ends, Arrivals::kTryFirst,
      [&](double t) {
        now = t;
        advance(t);
      },
      try_start, depart);
  res.never_started = static_cast<int64_t>(queue.size());
  Waits(waits, res);
  res.utilization = capacity > 0 ? used_time / (capacity * horizon) * 100 : 0;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return res;
}

}  // namespace

std::string DescribeDefaultScenario(const ScenarioSpec& spec) {
  return util::Cat(
      "cluster ", kMix, " (8 GPUs per node; the A100s publish every MIG placement), ", spec.jobs,
      " jobs over ", static_cast<int>(spec.days),
      " days: 65% inference (8-35 GiB, 1-12 h), 35% training (1-8 GPUs, 40-160 GiB per GPU, "
      "2-24 h)");
}

absl::StatusOr<std::vector<ScenarioResult>> RunDefaultScenario(const ScenarioSpec& spec) {
  absl::StatusOr<ClusterSpec> cs = ParseClusterMix(kMix);
  if (!cs.ok()) return cs.status();
  absl::StatusOr<GeneratedCluster> cluster = GenerateCluster(*cs);
  if (!cluster.ok()) return cluster.status();
  model::Inventory inv = model::Inventory::Build(ToObjects(*cluster));
  std::vector<Job> jobs = MakeJobs(spec);
  return std::vector<ScenarioResult>{RunMode(inv, jobs, false, spec),
                                     RunMode(inv, jobs, true, spec)};
}

}  // namespace gpuplane::sim
