// Test helpers: repository paths, pod specs and objects from YAML text, a seeded random source
// for property tests. Not for production code. Pure functions, thread-safe; a Rand is not
// synchronized.
#ifndef GPUPLANE_API_TESTING_H_
#define GPUPLANE_API_TESTING_H_

#include <random>
#include <string>
#include <variant>

#include "api/loader.h"

namespace gpuplane::api::testing {

// Absolute path of a file in the source tree ("testdata/api/valid/x.yaml").
inline std::string SourcePath(const std::string& relative) {
  return std::string(GPUPLANE_SOURCE_DIR) + "/" + relative;
}

// The spec of Pod t/p whose `spec:` holds `yaml` (lines indented by two spaces); an empty spec
// when it does not load, so that a test's expectations on it fail.
inline PodSpec PodSpecOf(const std::string& yaml) {
  Loader loader;
  loader.AddText("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: t}\nspec:\n" + yaml,
                 "p.yaml", Format::kYaml);
  LoadResult r = loader.Finish();
  if (r.errors() != 0 || r.objects.empty()) return {};
  return std::get<Pod>(r.objects.front().object).spec;
}

// The objects of YAML text `yaml` (read as the file "random.yaml").
inline LoadResult LoadText(const std::string& yaml) {
  Loader loader;
  loader.AddText(yaml, "random.yaml", Format::kYaml);
  return loader.Finish();
}

// Every diagnostic of `r`, one a line, for a failing assertion's message.
inline std::string Diagnostics(const LoadResult& r) {
  std::string out;
  for (const Diagnostic& d : r.diagnostics) out += d.ToString() + "\n";
  return out;
}

struct Rand {
  std::mt19937 rng;
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng); }
};

}  // namespace gpuplane::api::testing

#endif  // GPUPLANE_API_TESTING_H_
