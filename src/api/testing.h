// Test helpers: repository paths, and pod specs from YAML. Not for production code.
// Pure functions; thread-safe.
#ifndef GPUPLANE_API_TESTING_H_
#define GPUPLANE_API_TESTING_H_

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

}  // namespace gpuplane::api::testing

#endif  // GPUPLANE_API_TESTING_H_
