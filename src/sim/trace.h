// Readers for cluster and workload traces: the openb node and pod CSVs
// (../shared/data/openb/README.md) and the spot-GPU node CSV. Columns are found by header
// name, so column order and extra columns do not matter. Bad rows are reported as
// "file:line: message" problems and skipped; only an unreadable file or a missing required
// column is an error. Pure functions returning values; thread-safe.
#ifndef GPUPLANE_SIM_TRACE_H_
#define GPUPLANE_SIM_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::sim {

struct TraceNode {
  std::string name;
  std::string model;  // empty when the node has no GPUs
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;  // 0: not known (not modelled)
  int gpus = 0;
  std::string source;  // "file:line"
};

struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;                // per GPU, clamped to 0..1000; 1000 when several GPUs
  std::vector<std::string> models;  // allowed GPU models; empty: any
  double creation = 0;              // seconds
  double deletion = -1;             // seconds; -1: never
  std::string source;               // "file:line"
  std::string qos;                  // LS, BE, Guaranteed, Burstable; empty when not given
};

struct NodeTrace {
  std::vector<TraceNode> nodes;
  std::vector<std::string> problems;
};

struct PodTrace {
  std::vector<TracePod> pods;
  std::vector<std::string> problems;
};

// openb_node_list_*.csv: sn, cpu_milli, memory_mib, gpu, model.
absl::StatusOr<NodeTrace> ReadOpenbNodes(const std::string& path);
// spot_gpu_node_info.csv: gpu_model, gpu_capacity_num, cpu_num (cores), node_name.
absl::StatusOr<NodeTrace> ReadSpotNodes(const std::string& path);
// openb_pod_list_*.csv: name, cpu_milli, memory_mib, num_gpu, gpu_milli, and optionally
// gpu_spec, creation_time, deletion_time.
absl::StatusOr<PodTrace> ReadOpenbPods(const std::string& path);

// The same from text already in memory (`name` labels problems); used by the fuzzer.
absl::StatusOr<NodeTrace> ParseOpenbNodes(const std::string& text, const std::string& name);
absl::StatusOr<NodeTrace> ParseSpotNodes(const std::string& text, const std::string& name);
absl::StatusOr<PodTrace> ParseOpenbPods(const std::string& text, const std::string& name);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_TRACE_H_
