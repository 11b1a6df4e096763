// A built-in generator of GPU jobs for replay mode: a deterministic (per seed) stream of
// inference services (GPU shares), single-GPU batch jobs, multi-GPU training jobs and CPU-only
// jobs, arriving as a Poisson process whose rate keeps the cluster at `load` of its GPU
// capacity on average. A pure function of its options and the cluster view (borrowed for the
// call); thread-safe.
#ifndef GPUPLANE_SIM_WORKLOAD_GENERATOR_H_
#define GPUPLANE_SIM_WORKLOAD_GENERATOR_H_

#include <cstdint>
#include <vector>

#include "sched/cluster_view.h"
#include "sim/replay.h"

namespace gpuplane::sim {

struct JobMixSpec {
  int64_t jobs = 10000;
  double load = 0.85;  // mean requested GPU time / capacity
  uint64_t seed = 42;
};

std::vector<ReplayJob> GenerateJobs(const JobMixSpec& spec, const sched::ClusterView& cluster);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_WORKLOAD_GENERATOR_H_
