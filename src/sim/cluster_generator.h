// Synthetic heterogeneous clusters published the way NVIDIA's DRA driver publishes GPUs
// (DeviceClasses gpu.nvidia.com / mig.nvidia.com, one pool per node, dynamic MIG as
// partitionable devices with shared counters). Deterministic: same spec, same objects.
// Pure functions; thread-safe.
#ifndef GPUPLANE_SIM_CLUSTER_GENERATOR_H_
#define GPUPLANE_SIM_CLUSTER_GENERATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/core_types.h"
#include "api/object.h"
#include "api/resource_types.h"

namespace gpuplane::sim {

inline constexpr char kNvidiaDriver[] = "gpu.nvidia.com";

struct NodeGroupSpec {
  std::string product;  // a key of model::GpuProducts(): "h100", "a100-80gb", "t4", ...
  int nodes = 1;
  int gpus_per_node = 8;
  bool dynamic_mig = false;  // publish every MIG placement as a partitionable device
};

struct ClusterSpec {
  std::vector<NodeGroupSpec> groups;
  std::string driver_version = "580.82.7";
  std::string cuda_driver_version = "13.0.0";
};

// At most this many nodes in one mix (beyond the largest clusters Kubernetes runs; a typo of
// a few more digits would otherwise fill the memory).
inline constexpr int64_t kMaxMixNodes = 100'000;

// Parses "h100=2,a100-80gb+mig=1x4,t4=1x4": PRODUCT[+mig]=NODES[xGPUS] (8 GPUs by default),
// at most kMaxMixNodes nodes in all.
absl::StatusOr<ClusterSpec> ParseClusterMix(std::string_view mix);

// The example cluster of examples/: one node each of H100, H200 and B200 (8 GPUs), an A100
// 80GB node with 4 dynamic-MIG GPUs, and a T4 node with 4 GPUs.
ClusterSpec ExampleClusterSpec();

struct GeneratedNode {
  api::Node node;
  std::vector<api::ResourceSlice> slices;
};

struct GeneratedCluster {
  std::vector<api::DeviceClass> classes;
  std::vector<GeneratedNode> nodes;
};

absl::StatusOr<GeneratedCluster> GenerateCluster(const ClusterSpec& spec);

// The cluster's DeviceClasses and ResourceSlices as objects (source "generated").
std::vector<api::SourcedObject> ToObjects(const GeneratedCluster& cluster);

// The DeviceClasses NVIDIA's driver installs: gpu.nvidia.com and mig.nvidia.com.
std::vector<api::DeviceClass> NvidiaDeviceClasses();

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_CLUSTER_GENERATOR_H_
