// Allocator benchmarks (issue 4), one core, allocation step alone (claim compilation with a
// warm selector cache, search, scoring, results, commit):
//   (a) one GPU by class + CEL selector per claim, filling 500 nodes x 8 H100s (node given);
//   (b) the same on 5,000 nodes: the cost per claim must not grow with the node count;
//   (c) "small MIG else medium else full GPU" claims filling 250 nodes x 4 dynamic-MIG A100s
//       (1,000 GPUs), node given, until every node refuses;
//   (d) an unsatisfiable 8-GPU matchAttribute claim tried on 1,000 nodes with 7 free GPUs;
//   (e) consumable capacity: 10Gi-of-memory claims filling 500 nodes x 8 shareable H100s
//       (8 claims per GPU, node given).
// Items per second are claims per second.
#include <string>
#include <vector>

#include "alloc/allocator.h"
#include "alloc/request.h"
#include "api/loader.h"
#include "benchmark/benchmark.h"
#include "sim/cluster_generator.h"

namespace gpuplane::alloc {
namespace {

// `shareable`: every device allows multiple allocations (consumable capacity).
model::Inventory BuildCluster(const std::string& mix, bool shareable = false) {
  sim::GeneratedCluster cluster = *sim::GenerateCluster(*sim::ParseClusterMix(mix));
  std::vector<api::SourcedObject> objects;
  for (const api::DeviceClass& c : cluster.classes) objects.push_back({c, "gen", 0, true});
  for (sim::GeneratedNode& n : cluster.nodes) {
    for (api::ResourceSlice& s : n.slices) {
      for (api::Device& d : s.spec.devices) d.allow_multiple_allocations = shareable;
      objects.push_back({s, "gen", 0, true});
    }
  }
  return model::Inventory::Build(objects);
}

api::ResourceClaimSpec Spec(const std::string& yaml) {
  api::Loader loader;
  loader.AddText(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, "
      "namespace: t}\nspec:\n  devices:\n" +
          yaml,
      "claim.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  if (r.errors() > 0) std::abort();
  return std::get<api::ResourceClaim>(r.objects.at(0).object).spec;
}

const char kOneH100[] =
    "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
    "        selectors:\n        - cel: {expression: \"device.attributes['gpu.nvidia.com']"
    ".productName.lowerAscii().contains('h100') && device.capacity['gpu.nvidia.com'].memory"
    ".compareTo(quantity('40Gi')) >= 0\"}\n";

const char kMigFirstAvailable[] =
    "    requests:\n    - name: gpu\n      firstAvailable:\n      - name: small\n"
    "        deviceClassName: mig.nvidia.com\n        selectors:\n"
    "        - cel: {expression: "
    "\"device.attributes['gpu.nvidia.com'].profile.startsWith('1g.')\"}\n"
    "      - name: medium\n        deviceClassName: mig.nvidia.com\n        selectors:\n"
    "        - cel: {expression: \"device.attributes['gpu.nvidia.com'].profile.startsWith('2g.') "
    "|| device.attributes['gpu.nvidia.com'].profile.startsWith('3g.')\"}\n"
    "      - name: full\n        deviceClassName: gpu.nvidia.com\n";

// Allocates `per_node` claims of `spec` on every node in turn, each iteration from empty; the
// items are the claims. Every claim must fit.
void FillEveryNode(benchmark::State& bs, const model::Inventory& inv,
                   const api::ResourceClaimSpec& spec, Allocator& allocator, int per_node) {
  int64_t claims = 0;
  for (auto _ : bs) {
    bs.PauseTiming();
    model::AllocationState state(inv);
    SelectorCache cache;
    bs.ResumeTiming();
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
      for (int c = 0; c < per_node; ++c) {
        CompiledClaim claim = *CompileClaim("t", "c", spec, inv, cache);
        Outcome o = allocator.Allocate({&claim}, n, state);
        if (!o.allocated || !allocator.Commit(o, {&claim}, state).ok()) {
          bs.SkipWithError("a claim did not fit");
          return;
        }
        ++claims;
      }
    }
  }
  bs.SetItemsProcessed(claims);
}

// (a), (b): fill every GPU, one claim per GPU, on the node a scheduler would have picked.
void BM_FillOneGpuPerClaim(benchmark::State& bs) {
  const int nodes = static_cast<int>(bs.range(0));
  model::Inventory inv = BuildCluster("h100=" + std::to_string(nodes));
  api::ResourceClaimSpec spec = Spec(kOneH100);
  // Second argument 0: first fit (no scoring), the baseline for what scoring costs.
  Allocator allocator(
      inv, AllocatorOptions{.explain = false, .max_solutions = bs.range(1) != 0 ? 64 : 1});
  FillEveryNode(bs, inv, spec, allocator, 8);
}
BENCHMARK(BM_FillOneGpuPerClaim)
    ->Args({500, 1})
    ->Args({5000, 1})
    ->Args({500, 0})
    ->Unit(benchmark::kMillisecond);

// (c): per node, claims until one is refused; counts every attempt.
void BM_FillMigFirstAvailable(benchmark::State& bs) {
  model::Inventory inv = BuildCluster("a100-80gb+mig=250x4");
  api::ResourceClaimSpec spec = Spec(kMigFirstAvailable);
  Allocator allocator(
      inv, AllocatorOptions{.explain = false, .max_solutions = bs.range(0) != 0 ? 64 : 1});
  int64_t claims = 0, allocated = 0;
  for (auto _ : bs) {
    bs.PauseTiming();
    model::AllocationState state(inv);
    SelectorCache cache;
    bs.ResumeTiming();
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
      while (true) {
        CompiledClaim claim = *CompileClaim("t", "c", spec, inv, cache);
        Outcome o = allocator.Allocate({&claim}, n, state);
        ++claims;
        if (!o.allocated) break;
        if (!allocator.Commit(o, {&claim}, state).ok()) std::abort();
        ++allocated;
      }
    }
  }
  bs.SetItemsProcessed(claims);
  bs.counters["allocated_per_node"] =
      static_cast<double>(allocated) / static_cast<double>(bs.iterations()) / 250.0;
}
BENCHMARK(BM_FillMigFirstAvailable)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// (d): the whole 1,000-node pass.
void BM_UnsatisfiableEightGpus(benchmark::State& bs) {
  model::Inventory inv = BuildCluster("h100=1000");
  model::AllocationState state(inv);
  for (const model::NodeInfo& n : inv.nodes()) {
    if (!state.Allocate(inv, n.devices[3], {}).ok()) std::abort();
  }
  api::ResourceClaimSpec spec = Spec(
      "    requests:\n    - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}\n"
      "    constraints: [{matchAttribute: gpu.nvidia.com/nvlinkDomain}]\n");
  Allocator allocator(inv, AllocatorOptions{.explain = false});
  SelectorCache cache;
  for (auto _ : bs) {
    CompiledClaim claim = *CompileClaim("t", "c", spec, inv, cache);
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
      if (allocator.Allocate({&claim}, n, state).allocated) std::abort();
    }
  }
  bs.SetItemsProcessed(bs.iterations());
}
BENCHMARK(BM_UnsatisfiableEightGpus)->Unit(benchmark::kMillisecond);

// (e): every shareable GPU filled with 8 claims of 10Gi of its 80Gi.
void BM_FillSharedCapacity(benchmark::State& bs) {
  model::Inventory inv = BuildCluster("h100=500", true);
  api::ResourceClaimSpec spec = Spec(
      "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
      "        capacity: {requests: {memory: 10Gi}}\n");
  Allocator allocator(inv, AllocatorOptions{.explain = false});
  FillEveryNode(bs, inv, spec, allocator, 64);
}
BENCHMARK(BM_FillSharedCapacity)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplane::alloc

BENCHMARK_MAIN();
