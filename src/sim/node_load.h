// GPUs in use per node, for the replay engines that order nodes themselves (the built-in
// scenario and the replay of Pods with claims): pack (fullest first, keeping whole nodes free)
// or spread (least allocated first, as Kubernetes' LeastAllocated). Plain value type.
#ifndef GPUPLANE_SIM_NODE_LOAD_H_
#define GPUPLANE_SIM_NODE_LOAD_H_

#include <algorithm>
#include <numeric>
#include <vector>

#include "model/inventory.h"

namespace gpuplane::sim {

class NodeLoad {
 public:
  // `gpus`: each node's capacity in whole GPUs.
  explicit NodeLoad(std::vector<double> gpus)
      : gpus_(std::move(gpus)), used_(gpus_.size(), 0), order_(gpus_.size()) {}

  void Add(model::NodeId n, double gpus) {
    used_[n] += gpus;
    total_used_ += gpus;
  }
  void Remove(model::NodeId n, double gpus) { Add(n, -gpus); }
  double total_used() const { return total_used_; }
  double capacity() const { return std::accumulate(gpus_.begin(), gpus_.end(), 0.0); }

  // Nodes in the order to try them; ties keep node order. Nodes without GPUs count as full.
  // With `worth` (per node), nodes worth less come first whatever their load (a job takes the
  // cheapest model that fits, sched/worth.h), then the load order.
  const std::vector<model::NodeId>& Order(bool pack, const std::vector<double>* worth = nullptr) {
    std::iota(order_.begin(), order_.end(), model::NodeId{0});
    std::stable_sort(order_.begin(), order_.end(), [&](model::NodeId a, model::NodeId b) {
      if (worth != nullptr && (*worth)[a] != (*worth)[b]) return (*worth)[a] < (*worth)[b];
      double fa = Fraction(a), fb = Fraction(b);
      return pack ? fa > fb : fa < fb;
    });
    return order_;
  }

 private:
  double Fraction(model::NodeId n) const { return gpus_[n] > 0 ? used_[n] / gpus_[n] : 1; }

  std::vector<double> gpus_, used_;
  std::vector<model::NodeId> order_;
  double total_used_ = 0;
};

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_NODE_LOAD_H_
