// Durations written as text, parsed one way everywhere: Go's form ("30m", "1h30m", "1.5s",
// "-5s", "0"), as Kubernetes, the Queue API, the pods' checkpoint annotations and the command
// line's duration flags write them. Callers add their own rules (positive, non-negative) and
// name the input in their errors. Pure; thread-safe.
#ifndef GPUPLANE_UTIL_DURATION_H_
#define GPUPLANE_UTIL_DURATION_H_

#include <optional>
#include <string_view>

namespace gpuplane::util {

// The duration `text` in seconds, negative ones included; nullopt when it does not parse or
// is infinite ("inf").
std::optional<double> DurationSeconds(std::string_view text);

}  // namespace gpuplane::util

#endif  // GPUPLANE_UTIL_DURATION_H_
