#include "sim/workload_generator.h"

#include <cmath>

#include "sched/rng.h"

namespace gpuplane::sim {
namespace {

struct Kind {
  double share;         // of jobs
  int num_gpu;          // 0: CPU only
  int milli[3];         // choices for one GPU (equal weight)
  double hours[2];      // duration range, log-uniform
  int64_t cpu_per_gpu;  // milli-CPU per GPU (per job for CPU-only)
};

// Shares of jobs and sizes loosely follow the openb trace's mix (../shared/data/openb).
const Kind kKinds[] = {
    {0.30, 1, {250, 460, 500}, {4, 48}, 4000},      // inference service, a GPU share
    {0.36, 1, {1000, 1000, 1000}, {0.5, 6}, 8000},  // batch / notebook, one GPU
    {0.08, 2, {1000, 1000, 1000}, {2, 12}, 8000},   // training
    {0.05, 4, {1000, 1000, 1000}, {2, 24}, 8000},  {0.03, 8, {1000, 1000, 1000}, {4, 48}, 8000},
    {0.18, 0, {0, 0, 0}, {0.2, 4}, 4000},  // CPU only
};

}  // namespace

std::vector<ReplayJob> GenerateJobs(const JobMixSpec& spec, const sched::ClusterView& cluster) {
  sched::Rng rng(spec.seed);
  int max_gpus = std::max(1, cluster.max_gpus_per_node);
  // Mean GPU-seconds per job, to set the arrival rate for the load.
  double mean_gpu_seconds = 0;
  for (const Kind& k : kKinds) {
    double mean_hours = (k.hours[1] - k.hours[0]) / std::log(k.hours[1] / k.hours[0]);
    double milli = (k.milli[0] + k.milli[1] + k.milli[2]) / 3.0 / 1000;
    mean_gpu_seconds += k.share * std::min(k.num_gpu, max_gpus) * milli * mean_hours * 3600;
  }
  double capacity_gpus = static_cast<double>(cluster.total_milli) / 1000;
  double rate = spec.load * capacity_gpus / std::max(1e-9, mean_gpu_seconds);  // jobs/second
  std::vector<ReplayJob> jobs;
  jobs.reserve(static_cast<size_t>(spec.jobs));
  double t = 0;
  for (int64_t i = 0; i < spec.jobs; ++i) {
    t += -std::log(1 - rng.Unit()) / rate;
    double pick = rng.Unit(), acc = 0;
    const Kind* kind = &kKinds[0];
    for (const Kind& k : kKinds) {
      acc += k.share;
      if (pick < acc) {
        kind = &k;
        break;
      }
    }
    ReplayJob j;
    j.arrival = t;
    double lo = std::log(kind->hours[0]), hi = std::log(kind->hours[1]);
    j.duration = std::exp(lo + (hi - lo) * rng.Unit()) * 3600;
    j.demand.num_gpu = std::min(kind->num_gpu, max_gpus);
    j.demand.gpu_milli = j.demand.num_gpu == 0 ? 0 : kind->milli[rng.Below(3)];
    j.demand.cpu_milli = kind->cpu_per_gpu * std::max(1, j.demand.num_gpu);
    j.demand.memory_mib = j.demand.cpu_milli * 4;  // 4 MiB per milli-CPU: 4 GiB per core
    jobs.push_back(j);
  }
  return jobs;
}

}  // namespace gpuplane::sim
