// Placement policies: given the cluster view and one pod, choose a node and the GPUs on it.
// The FGD artifact's policies (random, dotprod, clustering, packing, bestfit, fgd) exactly as
// ../shared/docs/fgd-method.md describes them, `k8s` (what Kubernetes does today), and
// `gpuplane` (ours). Nodes are visited in the view's priority order and ties go to the
// earlier node. A policy holds no cluster state (it reads the view it is given; fgd and gpuplane
// borrow the Workload, and keep memo caches of their own); one instance per simulation run,
// not thread-safe. Errors: MakePolicy's unknown names (InvalidArgument).
#ifndef GPUPLANE_SCHED_POLICY_H_
#define GPUPLANE_SCHED_POLICY_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sched/cluster_view.h"
#include "sched/fragmentation.h"
#include "sched/rng.h"

namespace gpuplane::sched {

struct Placement {
  uint32_t node = 0;
  std::vector<int> gpus;  // GPU indices on the node; empty: the allocator chooses (first fit)
};

class Policy {
 public:
  virtual ~Policy() = default;
  // Nullopt when no node is feasible.
  virtual std::optional<Placement> Place(const ClusterView& view, const PodDemand& pod,
                                         Rng& rng) = 0;
};

// The policy names MakePolicy accepts, in a stable order.
const std::vector<std::string>& PolicyNames();

// `workload` (the trace's task types) is needed by fgd and gpuplane; it must outlive the
// policy.
absl::StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const Workload& workload);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_POLICY_H_
