// The simulator's event engine for workloads of Pods with DRA claims (the claims replay and
// the built-in scenario): jobs arrive in order of arrival, start through a sched::Session
// (the scheduling core: node filters, the policy's node order, the node index, the
// allocator), wait in one FIFO queue when nothing fits, and leave when their run ends; the
// queue is retried in order after each instant's departures (the event loop of events.h). A
// workload is the jobs plus a PodSet (one pod per job, parallel to the jobs); a configuration is
// the node order, the device choice, the load model (what a GPU's worth is) and the arrival rule.
//
// The engine integrates the units in use (the load model's device units) over time, up to
// the horizon, and samples them. Workload-specific outcomes (an attempt that dies with OOM
// and is retried) are the caller's, through EngineHooks.
//
// Ownership: borrows the snapshot and the pod set, which must outlive the call; the snapshot
// is left as the run ends (every job that started has left it). Not thread-safe; one run per
// snapshot at a time.
#ifndef GPUPLANE_SIM_ENGINE_H_
#define GPUPLANE_SIM_ENGINE_H_

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/inventory.h"
#include "sched/pod_set.h"
#include "sched/session.h"
#include "sched/snapshot.h"
#include "sim/events.h"

namespace gpuplane::sim {

struct EngineJob {
  double arrival = 0;
  double duration = 0;  // how long a start runs, unless EngineHooks::run_time says otherwise
};

struct EngineConfig {
  std::string policy = "pack";  // a sched::NodeOrderNames() entry
  sched::DeviceChoice devices = sched::DeviceChoice::kScored;
  sched::LoadModel load;  // device units and node capacity (empty: 1 per device)
  Arrivals arrivals = Arrivals::kBehindQueue;
  double horizon = std::numeric_limits<double>::infinity();  // integrate up to here
  int samples = 0;  // utilization samples over [0, sample_span]
  double sample_span = 0;
};

struct EngineHooks {
  // How long the attempt that started now runs, given the devices it got (default: the
  // job's duration).
  std::function<double(size_t job, const std::vector<model::DeviceId>& devices)> run_time;
  // An attempt ended (it started at `started` and held `units`): true puts the job back at
  // the end of the queue (a retry). Default: false.
  std::function<bool(size_t job, double started, double units)> ended;
};

struct EngineRun {
  std::vector<double> waits;  // per start, start - arrival, in start order
  size_t never_started = 0;   // jobs still waiting when no event was left
  double end_time = 0;        // the last event, at least the sample span
  double unit_time = 0;       // integral of units in use, up to the horizon
  double capacity = 0;        // units of the whole cluster (the load model's node capacity)
  std::vector<std::pair<double, double>> samples;  // (time, percent of capacity in use)
};

// Errors: an unknown policy, or a Session that could not undo a placement (internal).
// REQUIRES: jobs[j] is pods.pods[j]; arrivals nondecreasing; no gangs in `pods`.
absl::StatusOr<EngineRun> RunEngine(sched::Snapshot& snapshot, const sched::PodSet& pods,
                                    const std::vector<EngineJob>& jobs, const EngineConfig& config,
                                    const EngineHooks& hooks = {});

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_ENGINE_H_
