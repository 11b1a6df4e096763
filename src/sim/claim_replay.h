// Replay of Pods with DRA claims (`gpuplane simulate --mode replay --workload FILE`): Pods,
// ResourceClaimTemplates and ResourceClaims in YAML, JSON or JSONL, each Pod a job that
// arrives at its `sim.gpuplane.io/arrival` annotation (seconds from the start, default 0) and
// runs for `sim.gpuplane.io/duration` seconds. Jobs run through the simulator's engine
// (engine.h: the scheduling core's Session on the cluster's own DRA objects, with its node
// filters, so taints, node selectors and CPU/memory of Node objects apply): `gpuplane` is the
// "worth-pack" node order (cheapest model, then fullest first) with the allocator's scoring, `k8s`
// the "spread" order (least allocated first) with first-fit devices. Jobs that do not fit wait in a
// FIFO queue, retried when jobs end. Jobs that fit no node of the empty cluster, Pods sharing a
// claim, and bad annotations are reported with file and line and skipped. Functions return
// values and borrow their arguments for the call; thread-safe for distinct arguments.
#ifndef GPUPLANE_SIM_CLAIM_REPLAY_H_
#define GPUPLANE_SIM_CLAIM_REPLAY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "model/inventory.h"
#include "sim/replay.h"

namespace gpuplane::sim {

inline constexpr char kArrivalAnnotation[] = "sim.gpuplane.io/arrival";
inline constexpr char kDurationAnnotation[] = "sim.gpuplane.io/duration";

struct ClaimJob {
  std::string label;  // "pod ns/name"
  std::string where;  // file:line
  api::SourcedObject pod;
  std::vector<api::ResourceClaim> claims;
  double arrival = 0, duration = 0;  // seconds
};

struct ClaimWorkload {
  std::vector<ClaimJob> jobs;  // by arrival (stable)
  std::vector<std::string> problems;
};

// Reads the files (YAML/JSON documents, or JSONL: one object per line). Errors: a path that
// is missing or unreadable (problems inside the files are the workload's `problems`).
absl::StatusOr<ClaimWorkload> LoadClaimWorkload(const std::vector<std::string>& paths);

// `policy`: "gpuplane" or "k8s". Jobs that fit no node of the empty cluster are moved to
// `problems` (with the allocator's reasons on the first node) and not replayed. The result is
// a ReplayRun like the trace replay's (seed 0: nothing here is random), with utilization in
// whole GPUs' worth (see GpuShares in the .cc) sampled `samples` times.
// `cluster`: DeviceClasses, ResourceSlices, Nodes (and claims already allocated, which keep
// their devices).
absl::StatusOr<ReplayRun> ReplayClaims(const std::vector<api::SourcedObject>& cluster,
                                       std::vector<ClaimJob>& jobs, const std::string& policy,
                                       std::vector<std::string>& problems, int samples = 200);

// The cluster's GPU capacity in whole GPUs (the denominator of the utilization above).
double GpuCapacity(const model::Inventory& inventory);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_CLAIM_REPLAY_H_
