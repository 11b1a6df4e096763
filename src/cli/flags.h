// Flag values shared by several commands, read with errors that name the flag and say what
// form it takes. Pure functions; thread-safe.
#ifndef GPUPLANE_CLI_FLAGS_H_
#define GPUPLANE_CLI_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpuplane::cli {

// A duration flag ("30m", "1h") in seconds: positive, or with `zero_ok` also 0.
absl::StatusOr<double> DurationSeconds(const char* flag, const std::string& text,
                                       bool zero_ok = false);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_FLAGS_H_
