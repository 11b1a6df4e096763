// The packing program behind the gpuplane policy and the fill-mode bound: solving it for a
// workload shaped like the openb default trace (its 21 request sizes and pod counts, copied as
// numbers from ../shared/data/openb/openb_pod_list_default.csv) on as many GPUs as it
// requests, and for workloads with many distinct sizes, as a worst case.
#include <benchmark/benchmark.h>

#include <vector>

#include "sched/packing_lp.h"

namespace gpuplane::sched {
namespace {

// Sizes (milli) and pod counts of the default trace's GPU requests, whole GPUs as 1000.
std::vector<PackingItem> DefaultLike() {
  return {{50, 7},    {110, 24},  {140, 1},  {160, 74}, {220, 62},  {230, 140},  {270, 4},
          {290, 1},   {320, 328}, {330, 7},  {350, 6},  {370, 47},  {440, 2},    {460, 128},
          {470, 750}, {480, 19},  {550, 72}, {590, 75}, {650, 253}, {810, 1078}, {1000, 4355}};
}

// As many GPUs as the items request: where demand meets capacity, the prices carry most.
double Gpus(const std::vector<PackingItem>& items) {
  double milli = 0;
  for (const PackingItem& i : items) milli += i.milli * i.count;
  return milli / 1000;
}

void BM_PackingLpDefaultLike(benchmark::State& state) {
  const std::vector<PackingItem> items = DefaultLike();
  for (auto _ : state) benchmark::DoNotOptimize(SolvePackingLp(items, Gpus(items)));
}
BENCHMARK(BM_PackingLpDefaultLike)->Unit(benchmark::kMillisecond);

// Every multiple of `step` milli below a GPU, 10 of each, on as many GPUs as they need.
void BM_PackingLpManySizes(benchmark::State& state) {
  const int step = static_cast<int>(state.range(0));
  std::vector<PackingItem> items;
  for (int milli = step; milli < 1000; milli += step) items.push_back({milli, 10});
  for (auto _ : state) benchmark::DoNotOptimize(SolvePackingLp(items, Gpus(items)));
  state.counters["sizes"] = static_cast<double>(items.size());
}
BENCHMARK(BM_PackingLpManySizes)->Arg(50)->Arg(20)->Arg(10)->Arg(5)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplane::sched

BENCHMARK_MAIN();
