// Test helpers for api/ tests: repository paths. Not for production code.
// Pure functions; thread-safe.
#ifndef GPUPLANE_API_TESTING_H_
#define GPUPLANE_API_TESTING_H_

#include <string>

namespace gpuplane::api::testing {

// Absolute path of a file in the source tree ("testdata/api/valid/x.yaml").
inline std::string SourcePath(const std::string& relative) {
  return std::string(GPUPLANE_SOURCE_DIR) + "/" + relative;
}

}  // namespace gpuplane::api::testing

#endif  // GPUPLANE_API_TESTING_H_
