#include "sched/cluster_view.h"

#include <algorithm>

namespace gpuplane::sched {

void NodeView::Refresh() {
  gpu_left_ = 0;
  whole_free_ = 0;
  max_free_ = 0;
  for (int f : gpu_free) {
    gpu_left_ += f;
    whole_free_ += f == kMilli ? 1 : 0;
    max_free_ = std::max(max_free_, f);
  }
}

int ClusterView::ModelId(const std::string& name) const {
  auto it = std::find(models.begin(), models.end(), name);
  return it == models.end() ? -1 : static_cast<int>(it - models.begin());
}

void ClusterView::SetPriority(std::vector<uint32_t> order) {
  priority = std::move(order);
  rank.assign(priority.size(), 0);
  for (uint32_t i = 0; i < priority.size(); ++i) rank[priority[i]] = i;
}

bool Feasible(const NodeView& node, const PodDemand& pod) {
  if (node.cpu_free < pod.cpu_milli) return false;
  if (node.memory_capacity > 0 && node.memory_free < pod.memory_mib) return false;
  if (pod.num_gpu == 0) return true;
  if (node.model < 0 || !pod.Allows(node.model)) return false;
  if (pod.num_gpu == 1) return node.max_free() >= pod.gpu_milli;
  return node.whole_free() >= pod.num_gpu;
}

std::vector<int> TightestGpus(const NodeView& node, const PodDemand& pod) {
  std::vector<int> out;
  if (pod.num_gpu == 1) {
    int best = -1;
    for (int g = 0; g < node.gpus(); ++g) {
      int f = node.gpu_free[g];
      if (f >= pod.gpu_milli && (best < 0 || f < node.gpu_free[best])) best = g;
    }
    if (best >= 0) out.push_back(best);
    return out;
  }
  for (int g = 0; g < node.gpus() && static_cast<int>(out.size()) < pod.num_gpu; ++g) {
    if (node.gpu_free[g] == kMilli) out.push_back(g);
  }
  return out;
}

}  // namespace gpuplane::sched
