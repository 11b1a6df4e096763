// Where a command's wall-clock figures go. Stdout is a function of a command's inputs and flags
// alone, so equal runs print equal bytes; times go to stderr instead, measured by the command
// (engines take no clock of their own, or an injected one). With JSON output they are one line,
// {"timings":{"seconds":S,...}}, the last the command writes to stderr (scripts/sched_bench.sh
// reads it); with text output one line for people, "took S s". Main thread only.
#ifndef GPUPLANE_CLI_TIMINGS_H_
#define GPUPLANE_CLI_TIMINGS_H_

#include "nlohmann/json.hpp"

namespace gpuplane::cli {

// REQUIRES: `timings` is an object with a number "seconds" (the whole run).
void PrintTimings(bool json, const nlohmann::ordered_json& timings);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_TIMINGS_H_
