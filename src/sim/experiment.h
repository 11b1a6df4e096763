// Several fill runs (policies x seeds) over one cluster and trace, spread over threads, with
// results in a fixed order (policy order, then seed order) whatever the thread timing, and
// their summary: mean and standard deviation over seeds of the allocation ratio, of the
// unallocated GPUs and of the packing bound at an arrived workload of 100%. The cluster is
// shared read-only by the runs (a shared_ptr<const SimCluster>: every thread holds it while it
// runs); pods and workload are borrowed for the call. Thread-safe to call.
#ifndef GPUPLANE_SIM_EXPERIMENT_H_
#define GPUPLANE_SIM_EXPERIMENT_H_

#include <functional>
#include <string>
#include <vector>

#include "sim/fill.h"

namespace gpuplane::sim {

struct MeanSd {
  double mean = 0;
  double sd = 0;  // sample standard deviation; 0 for one run
};

struct PolicySummary {
  std::string policy;
  MeanSd alloc_ratio_at_100;
  MeanSd unallocated_gpus_at_100;
  MeanSd failed_pods;
  MeanSd packing_bound_at_100;  // the same for every policy: it depends on the seeds only
};

// `progress`, when set, is called after each finished run with (done, total), from the
// worker threads one at a time.
using Progress = std::function<void(size_t done, size_t total)>;

absl::StatusOr<std::vector<FillRun>> RunFills(std::shared_ptr<const SimCluster> cluster,
                                              const std::vector<sched::PodDemand>& pods,
                                              const sched::Workload& workload,
                                              const std::vector<std::string>& policies,
                                              const std::vector<uint64_t>& seeds, double tune,
                                              int jobs, const Progress& progress = nullptr);

std::vector<PolicySummary> Summarize(const std::vector<FillRun>& runs, int64_t total_milli);

MeanSd MeanAndSd(const std::vector<double>& xs);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_EXPERIMENT_H_
