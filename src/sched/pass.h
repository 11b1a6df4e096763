// One scheduling pass from objects, what `gpuplane schedule` and `gpuplane explain` run: the
// snapshot from the cluster objects (DeviceClasses, ResourceSlices, Nodes, allocated claims),
// the pod set from the workload objects (Pods, ResourceClaims, ResourceClaimTemplates,
// PodGroups, Workloads; allocated ResourceClaims among them count as cluster state too), the
// queue tree from the Queue objects of either (their limits and each pod's queue enforced;
// none: no queues; options.queues, when set, is used instead), and a Session over all.
// A pure function of its inputs: it reads the time only through options.clock, when one is
// given (decision and snapshot timings).
#ifndef GPUPLANE_SCHED_PASS_H_
#define GPUPLANE_SCHED_PASS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "sched/pod_set.h"
#include "sched/session.h"
#include "sched/snapshot.h"

namespace gpuplane::sched {

struct PassResult {
  PodSet pods;                      // borrows the workload objects
  std::vector<Decision> decisions;  // parallel to pods.pods
  std::unique_ptr<Snapshot> snapshot;
  std::vector<std::string> warnings;  // inventory and input problems, with file:line
  double snapshot_seconds = 0;        // building the snapshot (inventory, index), on options.clock
  std::vector<double> queue_devices;  // Session::QueueDevices after the pass
  double other_demand = -1;           // Session::OtherDemand after the pass
};

// Errors: an unknown policy; Queue objects that do not form a tree.
// `cluster` is taken by value: pass it with std::move when done with it (its slices move into
// the inventory).
absl::StatusOr<PassResult> RunPass(std::vector<api::SourcedObject> cluster,
                                   const std::vector<api::SourcedObject>& work,
                                   const SessionOptions& options,
                                   const std::map<std::string, double>& prices = {});
// The same on objects held elsewhere (the live scheduler's cache), copying none of them: the
// result borrows `cluster`'s slices and `work`, which must outlive it unchanged.
absl::StatusOr<PassResult> RunPass(const api::ObjectRefs& cluster, const api::ObjectRefs& work,
                                   const SessionOptions& options,
                                   const std::map<std::string, double>& prices = {});

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_PASS_H_
