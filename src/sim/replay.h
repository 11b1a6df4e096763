// Replay mode: time-driven. Pods arrive at their creation time and, once started, run for
// their duration (deletion - creation; to the end when unknown). A pod that does not fit
// waits in a FIFO queue; whenever capacity frees, the queue is retried in order (a pod whose
// shape is no smaller than one that just failed is skipped in that pass, as it cannot fit
// either). Records GPU utilization over time, queueing delays and pods that never started.
// The cluster is shared read-only (shared_ptr<const SimCluster>, as in fill.h); jobs are
// borrowed for the call. Each call is independent and thread-safe.
#ifndef GPUPLANE_SIM_REPLAY_H_
#define GPUPLANE_SIM_REPLAY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sched/fragmentation.h"
#include "sim/sim_cluster.h"

namespace gpuplane::sim {

struct ReplayJob {
  sched::PodDemand demand;
  double arrival = 0;    // seconds
  double duration = -1;  // seconds of running; < 0: until the end
};

struct ReplayRun {
  std::string policy;
  uint64_t seed = 0;
  std::vector<std::pair<double, double>> utilization;  // (time, allocated GPU %) samples
  std::vector<double> waits;                           // per started job, seconds queued
  int64_t jobs = 0;
  int64_t started = 0;
  int64_t never_started = 0;  // still queued at the end
  double gpu_hours = 0;       // allocated GPU time
  double end_time = 0;
  int64_t disagreements = 0;
};

struct ReplayOptions {
  uint64_t seed = 42;
  int samples = 200;  // utilization samples over the run
  // Retry every queued job with a full policy search after each release, without the
  // freed-node shortcut (the reference the tests compare the shortcut with).
  bool full_retry = false;
};

absl::StatusOr<ReplayRun> RunReplay(std::shared_ptr<const SimCluster> cluster,
                                    const std::vector<ReplayJob>& jobs,
                                    const sched::Workload& workload, const std::string& policy,
                                    const ReplayOptions& options);

// Jobs from trace pods (their creation and deletion times, shifted to start at 0).
std::vector<ReplayJob> JobsFromTrace(const std::vector<sched::PodDemand>& demands,
                                     const std::vector<double>& creation,
                                     const std::vector<double>& deletion);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_REPLAY_H_
