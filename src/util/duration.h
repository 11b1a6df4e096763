// Durations written as text, parsed one way everywhere: Go's form ("30m", "1h30m", "1.5s",
// "-5s", "0"), as Kubernetes, the Queue API, the pods' checkpoint annotations and the command
// line's duration flags write them, with or without the rule that they be positive (or
// non-negative). Callers name the input in their errors. Pure functions: no state, nothing
// owned or borrowed past the call; thread-safe.
#ifndef GPUPLANE_UTIL_DURATION_H_
#define GPUPLANE_UTIL_DURATION_H_

#include <optional>
#include <string_view>

namespace gpuplane::util {

// The duration `text` in seconds, negative ones included; nullopt when it does not parse or
// is infinite ("inf").
std::optional<double> DurationSeconds(std::string_view text);

// The duration `text` in seconds when it is positive, or, with `zero_ok`, also when it is 0;
// nullopt for negative ones and for what DurationSeconds refuses.
std::optional<double> PositiveDurationSeconds(std::string_view text, bool zero_ok);

}  // namespace gpuplane::util

#endif  // GPUPLANE_UTIL_DURATION_H_
