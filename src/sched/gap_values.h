// What free GPU space is worth to a workload, from the dual prices of its packing program
// (packing_lp.h): a task type's net value is its milli-GPU minus its price, and a GPU's free
// share is worth the most net value the workload's one-GPU task types could still put there,
// counting only types whose CPU the node can still give. The gpuplane policy places a sharing pod
// where it destroys the least of this worth. Immutable after construction; thread-safe;
// owns its tables (computed from the prices at construction).
#ifndef GPUPLANE_SCHED_GAP_VALUES_H_
#define GPUPLANE_SCHED_GAP_VALUES_H_

#include <cstdint>
#include <vector>

#include "sched/fragmentation.h"
#include "sched/packing_lp.h"

namespace gpuplane::sched {

class GapValues {
 public:
  // The workload's GPU task types, as many as fill `gpus` GPUs in their proportions, packed
  // by SolvePackingLp. Copyable.
  GapValues(const Workload& workload, double gpus);

  // Net value of a pod of `milli` (1..1000) on one GPU: milli minus its kind's price; for a
  // share no task type has, the worth of the space it takes.
  double NetValue(int milli) const { return net_[milli]; }
  // Worth of `free` milli (0..1000) of one GPU on a node with `cpu_free` millicores free.
  double Value(int free, int64_t cpu_free) const {
    const std::vector<double>* values = ValuesFor(cpu_free);
    return values == nullptr ? 0 : (*values)[free];
  }
  // The values by free milli for a node with `cpu_free` free; nullptr when no type fits.
  const std::vector<double>* ValuesFor(int64_t cpu_free) const;

  const PackingSolution& solution() const { return solution_; }

 private:
  PackingSolution solution_;
  std::vector<int64_t> cpu_levels_;          // distinct CPU of one-GPU types, ascending
  std::vector<std::vector<double>> values_;  // per CPU level: worth by free milli, 0..1000
  std::vector<double> net_;                  // by milli, 0..1000
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_GAP_VALUES_H_
