// Trace pods as the policies see them (sched::PodDemand), checked against a cluster: pods
// that can never run there (more GPUs than any node has, only GPU models the cluster lacks,
// more CPU or memory than any node has) are reported with their trace line and dropped;
// unknown models among known ones are reported and ignored. Pure functions returning values;
// thread-safe.
#ifndef GPUPLANE_SIM_WORKLOAD_H_
#define GPUPLANE_SIM_WORKLOAD_H_

#include <string>
#include <vector>

#include "sched/cluster_view.h"
#include "sim/trace.h"

namespace gpuplane::sim {

struct Demands {
  std::vector<sched::PodDemand> pods;
  std::vector<std::string> names;     // parallel to pods
  std::vector<size_t> trace_index;    // parallel to pods: index in the trace
  std::vector<std::string> problems;  // "file:line: ..." each
  int dropped = 0;
};

Demands ToDemands(const std::vector<TracePod>& pods, const sched::ClusterView& cluster);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_WORKLOAD_H_
