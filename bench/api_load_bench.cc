// Load-and-validate throughput of ResourceSlices (issue 2): 10,000 slices of 8 GPUs each,
// as one JSON List and as multi-document YAML, generated in memory by the cluster generator.
#include <map>
#include <string>

#include "api/loader.h"
#include "api/object.h"
#include "api/reader.h"
#include "api/writer.h"
#include "benchmark/benchmark.h"
#include "sim/cluster_generator.h"

namespace gpuplane {
namespace {

struct Corpus {
  std::string json;
  std::string json_compact;
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
  c.json_compact = c.json;
  bool first = true;
  for (const sim::GeneratedNode& n : cluster.nodes) {
    for (const api::ResourceSlice& s : n.slices) {
      api::Doc d = api::EncodeObject(s);
      if (!first) c.json += ",";
      if (!first) c.json_compact += ",";
      api::AppendJson(c.json_compact, d, 0);
      first = false;
      c.json += "\n";
      api::AppendJson(c.json, d, 2);
      c.yaml += "---\n";
      api::AppendYaml(c.yaml, d);
      ++c.slices;
    }
  }
  c.json += "]}\n";
  c.json_compact += "]}\n";
  return cache.emplace(nodes, std::move(c)).first->second;
}

void Load(benchmark::State& state, bool json, bool compact = false) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  const std::string& text = json ? (compact ? c.json_compact : c.json) : c.yaml;
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

// Baseline in the same run: parsing alone (text -> Doc trees), no typed decoding or checks.
void Parse(benchmark::State& state, bool json) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  const std::string& text = json ? c.json_compact : c.yaml;
  for (auto _ : state) {
    auto docs = json ? api::ReadJson(text, "bench.json") : api::ReadYaml(text, "bench.yaml");
    if (!docs.ok()) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(docs);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_ParseOnlyJsonCompact(benchmark::State& state) { Parse(state, true); }
void BM_ParseOnlyYaml(benchmark::State& state) { Parse(state, false); }
void BM_LoadSlicesJson(benchmark::State& state) { Load(state, true); }
void BM_LoadSlicesJsonCompact(benchmark::State& state) { Load(state, true, true); }
void BM_LoadSlicesYaml(benchmark::State& state) { Load(state, false); }

BENCHMARK(BM_ParseOnlyJsonCompact)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ParseOnlyYaml)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadSlicesJson)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadSlicesJsonCompact)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadSlicesYaml)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpuplane

BENCHMARK_MAIN();
