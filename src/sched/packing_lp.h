// The GPU packing program: how a workload's GPU requests would best fill a cluster's GPUs,
// Gilmore and Gomory's cutting-stock linear program turned to maximize the packed milli-GPU,
// solved by column generation. Its dual prices say what free GPU space is worth to the
// workload (the gpuplane policy places by them), and its optimum bounds the allocation any
// placement can reach. Pure functions; thread-safe.
#ifndef GPUPLANE_SCHED_PACKING_LP_H_
#define GPUPLANE_SCHED_PACKING_LP_H_

#include <cstddef>
#include <map>
#include <vector>

namespace gpuplane::sched {

// Requests of one kind: each takes `milli` (1..1000) of one GPU and counts as `value` packed
// milli-GPU (0: its milli); `count` of them (fractional counts are expected numbers). A
// multi-GPU request is that many whole-GPU (1000) items.
struct PackingItem {
  int milli = 0;
  double count = 0;
  double value = 0;

  double packed() const { return value > 0 ? value : milli; }
};

// How one GPU is filled: `counts[i]` items of kind i; used on `gpus` GPUs in the solution.
struct PackingPattern {
  std::vector<int> counts;
  double gpus = 0;
};

struct PackingSolution {
  double packed_milli = 0;          // the program's optimum (primal value of the solution)
  double bound_milli = 0;           // an upper bound proven by weak duality (see below)
  double gpu_price = 0;             // dual price of one GPU (milli)
  std::vector<double> item_prices;  // dual price of one item of each kind (milli), >= 0
  std::vector<PackingPattern> patterns;
  int columns = 0;  // patterns generated on the way (for diagnostics)
};

// Maximize the packed milli-GPU: choose x_p >= 0 GPUs filled by pattern p (any multiset of
// items whose milli sum to at most 1000) with sum x_p <= gpus and, for each kind i,
// sum_p counts_p[i] x_p <= count_i. Patterns come from an exact knapsack over the dual
// prices, so at the end no pattern improves the solution. `bound_milli` is the dual objective
// after the exact knapsack has made the prices feasible for every pattern, capped by the GPUs
// and the demand: a valid bound on any packing even if floating-point error had spoiled the
// simplex, and equal to packed_milli (within rounding) when it did not.
// Items whose milli is outside 1..1000 are never packed.
// REQUIRES: count >= 0, value >= 0, gpus >= 0.
PackingSolution SolvePackingLp(const std::vector<PackingItem>& items, double gpus);

// Requests grouped by size into classes `width` milli wide (whole GPUs alone), so that the
// program has at most 1000 / width + 1 rows whatever the sizes: a class takes the room of its
// smallest member and counts as its largest, so its optimum still bounds any packing of the
// requests. `item_of_milli` maps each input size to its class's item.
struct GroupedItems {
  std::vector<PackingItem> items;
  std::map<int, size_t> item_of_milli;
};
GroupedItems GroupBySize(const std::map<int, double>& count_by_milli, int width);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_PACKING_LP_H_
