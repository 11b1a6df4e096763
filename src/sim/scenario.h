// The built-in scenario `gpuplane simulate` runs without arguments: a heterogeneous cluster
// (H100 80GB, H200, B200, and A100 80GB with dynamic MIG) and a week of training and inference
// jobs, some needing more GPU memory than an H100 has and most inference fitting a MIG slice.
// Two ways to run it, through the same allocator on the same DRA objects:
//   k8s:      integer GPU requests (nvidia.com/gpu: N): whole GPUs, first fit, no memory
//             awareness; a job on a GPU with too little memory fails with OOM after a while and
//             is retried (up to 6 attempts, like a Job's backoffLimit);
//   gpuplane: DRA claims: training asks for GPUs with enough memory on one NVLink domain,
//             inference asks for a small MIG slice, else a medium one, else a whole GPU with
//             enough memory; best-fit node order and the allocator's scorer.
// Both run on the simulator's engine (engine.h). Pure functions returning values (the
// cluster and jobs are generated inside); thread-safe.
#ifndef GPUPLANE_SIM_SCENARIO_H_
#define GPUPLANE_SIM_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::sim {

struct ScenarioResult {
  std::string mode;  // "k8s" or "gpuplane"
  int64_t jobs = 0;
  int64_t completed = 0;
  int64_t oom_failures = 0;  // attempts that died with OOM
  int64_t gave_up = 0;       // jobs that ran out of attempts
  int64_t never_started = 0;
  double wasted_gpu_hours = 0;  // GPU time of attempts that died
  double useful_gpu_hours = 0;  // GPU time of attempts that completed
  double mean_wait_hours = 0;   // arrival to the start of the attempt that completed
  double p95_wait_hours = 0;
  double utilization = 0;  // allocated GPU time / capacity over the week, percent
};

struct ScenarioSpec {
  uint64_t seed = 42;
  int64_t jobs = 1200;
  double days = 7;
};

absl::StatusOr<std::vector<ScenarioResult>> RunDefaultScenario(const ScenarioSpec& spec);

// The cluster and workload in words, for the report header.
std::string DescribeDefaultScenario(const ScenarioSpec& spec);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_SCENARIO_H_
