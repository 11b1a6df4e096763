// What placement policies see of a cluster: per node, its GPU model, free CPU and memory, and
// the free share of each GPU in milli-GPU (1000 = a whole GPU), kept in step with the
// allocator's state by the caller. Pods are reduced to the demand the policies score.
// Plain values; not synchronized.
#ifndef GPUPLANE_SCHED_CLUSTER_VIEW_H_
#define GPUPLANE_SCHED_CLUSTER_VIEW_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/inventory.h"

namespace gpuplane::sched {

inline constexpr int kMilli = 1000;  // one whole GPU

struct PodDemand {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;      // 0: CPU only
  int gpu_milli = 0;    // per GPU: 1..1000 for one GPU, 1000 for several
  uint64_t models = 0;  // bit per model id that may serve it; 0: any
  int type = -1;        // index into the workload's task types, when it is one of them

  int64_t gpu_request() const { return static_cast<int64_t>(num_gpu) * gpu_milli; }
  bool sharing() const { return num_gpu == 1 && gpu_milli < kMilli; }
  bool Allows(int model) const { return models == 0 || (models >> model & 1) != 0; }
};

// Tags of the GPU pods on a node (the clustering policy): 0 = share-gpu, k = k-gpu.
inline constexpr int kMaxGpusPerNode = 16;
inline int TagOf(const PodDemand& p) { return p.sharing() ? 0 : p.num_gpu; }

struct NodeView {
  std::string name;
  int model = -1;  // -1: no GPUs
  int64_t cpu_capacity = 0, cpu_free = 0;
  int64_t memory_capacity = 0, memory_free = 0;  // 0 capacity: not modelled, always fits
  std::vector<int> gpu_free;                     // milli per GPU, by index
  std::vector<model::DeviceId> gpu_devices;      // the allocator's device per GPU index
  std::array<int, kMaxGpusPerNode + 1> tags{};   // GPU pods per tag
  uint64_t version = 0;                          // bumped on every change (for caches)

  int gpus() const { return static_cast<int>(gpu_free.size()); }
  int64_t gpu_left() const { return gpu_left_; }
  int whole_free() const { return whole_free_; }  // GPUs with nothing allocated
  int max_free() const { return max_free_; }      // the largest free share of one GPU
  // Recomputes the aggregates above; call after changing gpu_free.
  void Refresh();

 private:
  int64_t gpu_left_ = 0;
  int whole_free_ = 0;
  int max_free_ = 0;
};

struct ClusterView {
  std::vector<NodeView> nodes;
  std::vector<std::string> models;  // model id -> name
  std::vector<uint32_t> priority;   // node order for ties (seed-dependent)
  std::vector<uint32_t> rank;       // node -> its position in `priority`
  int64_t total_milli = 0;          // all GPUs
  int max_gpus_per_node = 0;

  int ModelId(const std::string& name) const;  // -1 when unknown
  // Sets the tie order (a permutation of node indices) and the ranks that mirror it.
  void SetPriority(std::vector<uint32_t> order);
};

// Whether the pod fits on the node at all: CPU, memory, GPU model, and GPUs with room.
bool Feasible(const NodeView& node, const PodDemand& pod);

// The in-node choice the FGD artifact's policies make: a shared pod on the fitting GPU with
// the least free share (lowest index on ties), whole-GPU pods on the lowest-index free GPUs.
std::vector<int> TightestGpus(const NodeView& node, const PodDemand& pod);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_CLUSTER_VIEW_H_
