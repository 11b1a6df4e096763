#include "sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <list>

#include "model/inventory.h"
#include "sched/pod_set.h"
#include "sched/rng.h"
#include "sched/snapshot.h"
#include "sim/cluster_generator.h"
#include "sim/engine.h"
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

// Physical GPUs' worth per device: 1 for a whole GPU, a MIG slice its memory share of an
// 80 GiB GPU.
std::vector<double> DeviceUnits(const model::Inventory& inv) {
  std::vector<double> units;
  for (const model::DeviceInfo& d : inv.devices()) {
    int64_t gib = d.spec->capacity.at("memory").value.Value() >> 30;
    bool full = d.spec->attributes.at("type").string_value == "gpu";
    units.push_back(full ? 1.0 : static_cast<double>(gib) / 80.0);
  }
  return units;
}

// The memory of an allocation's smallest device, in GiB.
int64_t SmallestGib(const model::Inventory& inv, const std::vector<model::DeviceId>& devices) {
  int64_t smallest = INT64_MAX;
  for (model::DeviceId d : devices) {
    smallest = std::min(smallest, inv.devices()[d].spec->capacity.at("memory").value.Value() >> 30);
  }
  return smallest;
}

// One pod per job, asking for the job's claim.
sched::PodSet JobPods(const std::vector<Job>& jobs, bool dra, const api::SourcedObject& pod) {
  sched::PodSet pods;
  for (size_t i = 0; i < jobs.size(); ++i) {
    sched::PodInfo p = sched::DescribePod(pod, i);
    p.key = util::Cat("sim/job-", i);
    api::ResourceClaim claim;
    claim.metadata.namespace_name = "sim";
    claim.metadata.name = util::Cat("job-", i);
    claim.spec = ClaimFor(jobs[i], dra);
    p.claims.push_back({p.key, sched::OwnedClaim(std::move(claim)), false});
    pods.pods.push_back(std::move(p));
  }
  return pods;
}

void Waits(std::vector<double>& waits, ScenarioResult& res) {
  double sum = 0;
  for (double w : waits) sum += w;
  res.mean_wait_hours = waits.empty() ? 0 : sum / static_cast<double>(waits.size());
  std::sort(waits.begin(), waits.end());
  res.p95_wait_hours =
      waits.empty() ? 0 : waits[std::min(waits.size() - 1, waits.size() * 95 / 100)];
}

// The engine's configuration for a mode: k8s spreads (LeastAllocated) and takes the first
// devices that fit; gpuplane takes the cheapest model that fits (memory x compute
// capability), so jobs that fit an H100 leave the H200s and B200s to the ones that need their
// memory, then packs (best fit), keeping whole nodes free, with the allocator's scoring.
EngineConfig ModeConfig(const model::Inventory& inv, bool dra, const ScenarioSpec& spec) {
  EngineConfig config;
  config.policy = dra ? "worth-pack" : "spread";
  config.devices = dra ? sched::DeviceChoice::kScored : sched::DeviceChoice::kFirstFit;
  config.load.device_units = DeviceUnits(inv);
  config.load.node_capacity = NodeGpus(inv);
  config.arrivals = Arrivals::kTryFirst;
  config.horizon = spec.days * 24;
  return config;
}

absl::StatusOr<ScenarioResult> RunMode(const std::vector<api::SourcedObject>& cluster,
                                       const std::vector<Job>& jobs, bool dra,
                                       const ScenarioSpec& spec) {
  ScenarioResult res;
  res.mode = dra ? "gpuplane" : "k8s";
  res.jobs = static_cast<int64_t>(jobs.size());
  std::unique_ptr<sched::Snapshot> snapshot = sched::Snapshot::Build(cluster);
  const model::Inventory& inv = snapshot->inventory();
  const api::SourcedObject pod{api::Pod{}, "scenario", 0, true};
  const sched::PodSet pods = JobPods(jobs, dra, pod);
  std::vector<EngineJob> engine_jobs;
  engine_jobs.reserve(jobs.size());
  for (const Job& j : jobs) engine_jobs.push_back({j.arrival, j.hours});
  std::vector<int> attempts(jobs.size(), 0);
  std::vector<bool> oom(jobs.size(), false);
  std::vector<double> waits;
  EngineHooks hooks;
  hooks.run_time = [&](size_t j, const std::vector<model::DeviceId>& devices) {
    ++attempts[j];
    oom[j] = SmallestGib(inv, devices) < jobs[j].need_gib;
    return oom[j] ? std::min(kOomAfterHours, jobs[j].hours) : jobs[j].hours;
  };
  double now = 0;
  hooks.ended = [&](size_t j, double started, double units) {  // true: an OOM retry
    now = started + (oom[j] ? std::min(kOomAfterHours, jobs[j].hours) : jobs[j].hours);
    double gpu_hours = units * (now - started);
    if (!oom[j]) {
      ++res.completed;
      res.useful_gpu_hours += gpu_hours;
      waits.push_back(started - jobs[j].arrival);
      return false;
    }
    ++res.oom_failures;
    res.wasted_gpu_hours += gpu_hours;
    if (attempts[j] < kAttempts) return true;
    ++res.gave_up;
    return false;
  };
  absl::StatusOr<EngineRun> run =
      RunEngine(*snapshot, pods, engine_jobs, ModeConfig(inv, dra, spec), hooks);
  if (!run.ok()) return run.status();
  res.never_started = static_cast<int64_t>(run->never_started);
  Waits(waits, res);
  res.utilization =
      run->capacity > 0 ? run->unit_time / (run->capacity * (spec.days * 24)) * 100 : 0;
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
  const std::vector<api::SourcedObject> objects = ToObjects(*cluster);
  std::vector<Job> jobs = MakeJobs(spec);
  std::vector<ScenarioResult> results;
  for (bool dra : {false, true}) {
    absl::StatusOr<ScenarioResult> r = RunMode(objects, jobs, dra, spec);
    if (!r.ok()) return r.status();
    results.push_back(std::move(*r));
  }
  return results;
}

}  // namespace gpuplane::sim
