// Flag values shared by several commands, read with errors that name the flag and say what
// form it takes. Pure functions; thread-safe.
// FiniteRange is the check for every floating-point flag: CLI11's own Range and
// NonNegativeNumber let "nan" through (every comparison with NaN is false), and a NaN
// interval or share would hang a loop or poison every figure computed from it.
#ifndef GPUPLANE_CLI_FLAGS_H_
#define GPUPLANE_CLI_FLAGS_H_

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"

namespace gpuplane::cli {

// A duration flag ("30m", "1h") in seconds: positive, or with `zero_ok` also 0.
absl::StatusOr<double> DurationSeconds(const char* flag, const std::string& text,
                                       bool zero_ok = false);

// A CLI11 check that the value is a finite number within [lo, hi] ("nan", "inf" and "1e999"
// are refused with the range in the message).
CLI::Validator FiniteRange(double lo, double hi);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_FLAGS_H_
