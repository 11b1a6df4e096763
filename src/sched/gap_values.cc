#include "sched/gap_values.h"

#include <algorithm>
#include <map>

namespace gpuplane::sched {
namespace {

constexpr int kGroupWidth = 10;  // milli; the openb traces' sizes are multiples of 10

// Most total net value of one-GPU kinds (milli -> net value) in each free share 0..1000
// (unbounded knapsack; every kind's net value is >= 0).
std::vector<double> Knapsack(const std::map<int, double>& kinds) {
  std::vector<double> best(kMilli + 1, 0.0);
  for (int u = 1; u <= kMilli; ++u) {
    best[u] = best[u - 1];
    for (const auto& [milli, net] : kinds) {
      if (milli <= u) best[u] = std::max(best[u], best[u - milli] + net);
    }
  }
  return best;
}

}  // namespace

GapValues::GapValues(const Workload& workload, double gpus) {
  // Items by milli on one GPU; a k-GPU type is k whole-GPU items.
  std::map<int, double> weight;  // milli -> probability x GPUs
  double demand = 0;             // expected milli-GPU of one pod
  for (const TaskType& t : workload.types()) {
    if (t.num_gpu <= 0) continue;
    const int milli = t.num_gpu == 1 ? std::min(t.gpu_milli, kMilli) : kMilli;
    weight[milli] += t.probability * t.num_gpu;
    demand += t.probability * t.num_gpu * milli;
  }
  std::map<int, double> count_by_milli;
  for (const auto& [milli, w] : weight) {
    count_by_milli[milli] = demand > 0 ? w * gpus * kMilli / demand : 0;
  }
  // Sizes grouped 10 milli wide keep the program small whatever the trace's sizes.
  const GroupedItems grouped = GroupBySize(count_by_milli, kGroupWidth);
  solution_ = SolvePackingLp(grouped.items, gpus);

  std::map<int, double> net_of;  // milli -> net value, for the types' sizes
  for (const auto& [milli, item] : grouped.item_of_milli) {
    net_of[milli] = std::max(0.0, milli - solution_.item_prices[item]);
  }
  for (const TaskType& t : workload.types()) {
    if (t.num_gpu == 1) cpu_levels_.push_back(t.cpu_milli);
  }
  std::sort(cpu_levels_.begin(), cpu_levels_.end());
  cpu_levels_.erase(std::unique(cpu_levels_.begin(), cpu_levels_.end()), cpu_levels_.end());
  for (int64_t level : cpu_levels_) {
    std::map<int, double> kinds;
    for (const TaskType& t : workload.types()) {
      if (t.num_gpu != 1 || t.cpu_milli > level) continue;
      const int milli = std::min(t.gpu_milli, kMilli);
      kinds[milli] = net_of[milli];
    }
    values_.push_back(Knapsack(kinds));
  }
  const std::vector<double> all = Knapsack(net_of);
  net_.assign(kMilli + 1, 0.0);
  for (int milli = 1; milli <= kMilli; ++milli) {
    auto it = net_of.find(milli);
    net_[milli] = it != net_of.end() ? it->second : all[milli];
  }
}

const std::vector<double>* GapValues::ValuesFor(int64_t cpu_free) const {
  auto it = std::upper_bound(cpu_levels_.begin(), cpu_levels_.end(), cpu_free);
  if (it == cpu_levels_.begin()) return nullptr;
  return &values_[static_cast<size_t>(it - cpu_levels_.begin()) - 1];
}

}  // namespace gpuplane::sched
