// Load-and-validate throughput of ResourceSlices (issue 2): 10,000 slices of 8 GPUs each,
// as one JSON List and as multi-document YAML, generated in memory by the cluster generator.
#include <string>

#include "api/loader.h"
#include "api/object.h"
#include "api/writer.h"
#include "benchmark/benchmark.h"
#include "sim/cluster_generator.h"

namespace gpuplane {
namespace {

struct Corpus {
  std::string json;
  std::string yaml;
  size_t slices = 0;
};

const Corpus& GetCorpus(int nodes) {
  static std::map<int, Corpus> cache;
  auto it = cache.find(nodes);
  if (it != cache.end()) return it->second;
  sim::ClusterSpec spec;
  spec.groups = {{"h100", nodes / 2, 8, false}, {"h200", nodes - nodes / 2, 8, false}};
  sim::GeneratedCluster cluster = *sim::GenerateCluster(spec);
  Corpus c;
  c.json = "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[";
  bool first = true;
  for (const sim::GeneratedNode& n : cluster.nodes) {
    for (const api::ResourceSlice& s : n.slices) {
      api::Doc d = api::EncodeObject(s);
      if (!first) c.json += ",";
      first = false;
      c.json += "\n";
      api::AppendJson(c.json, d, 2);
      c.yaml += "---\n";
      api::AppendYaml(c.yaml, d);
      ++c.slices;
    }
  }
  c.json += "]}\n";
  return cache.emplace(nodes, std::move(c)).first->second;
}

void Load(benchmark::State& state, bool json) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  const std::string& text = json ? c.json : c.yaml;
  for (auto _ : state) {
    api::Loader loader;
    loader.AddText(text, json ? "bench.json" : "bench.yaml",
                   json ? api::Format::kJson : api::Format::kYaml);
    api::LoadResult r = loader.Finish();
    if (r.objects.size() != c.slices || r.errors() != 0) state.SkipWithError("load failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["slices"] = static_cast<double>(c.slices);
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}

void BM_LoadSlicesJson(benchmark::State& state) { Load(state, true); }
void BM_LoadSlicesYaml(benchmark::State& state) { Load(state, false); }

BENCHMARK(BM_LoadSlicesJson)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadSlicesYaml)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpuplane

BENCHMARK_MAIN();
