// Fill mode: the FGD paper's experiment (../shared/docs/fgd-method.md). Shuffle the trace
// with the seed, inflate it by resampling to `tune` times the cluster's GPU capacity, give
// nodes a seed-dependent priority order, then submit pods one at a time to an empty cluster;
// nothing leaves, and a pod that fits nowhere fails once and is dropped. Records the GPU
// allocation ratio and the fragmentation against the arrived workload (0-130%). RunFill takes
// the cluster as shared_ptr<const SimCluster> because parallel runs share it read-only; the
// pods and workload are borrowed for the call. Each call is independent and thread-safe.
#ifndef GPUPLANE_SIM_FILL_H_
#define GPUPLANE_SIM_FILL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sched/fragmentation.h"
#include "sim/sim_cluster.h"

namespace gpuplane::sim {

struct FillOptions {
  uint64_t seed = 42;
  double tune = 1.3;
};

struct FillRun {
  std::string policy;
  uint64_t seed = 0;
  // Per arrived workload x (percent of GPU capacity, 0..130): means over the submissions
  // whose rounded x equals x; x values no submission hit carry the previous value.
  std::vector<double> alloc_ratio;  // allocated milli-GPU / capacity, percent
  std::vector<double> frag_ratio;   // fragmented / idle milli-GPU, percent
  int64_t submitted = 0;
  int64_t failed_pods = 0;
  int64_t disagreements = 0;  // allocator took other GPUs than the policy chose
  // No placement of the pods arrived by x = 100 allocates more (percent; the packing program
  // over their GPU requests, CPU, memory and GPU models ignored). Depends on the seed only.
  double packing_bound_at_100 = 0;

  double AllocAt(int x) const { return alloc_ratio.at(x); }
};

inline constexpr int kMaxArrived = 130;

// `pods` is the trace (already checked against the cluster); `workload` its task types.
absl::StatusOr<FillRun> RunFill(std::shared_ptr<const SimCluster> cluster,
                                const std::vector<sched::PodDemand>& pods,
                                const sched::Workload& workload, const std::string& policy,
                                const FillOptions& options);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_FILL_H_
