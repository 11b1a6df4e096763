// The one exit-code rule of every gpuplane command (README, "Exit status"):
//   0  success;
//   1  the command ran to its end and found problems: invalid objects (validate), claims or
//      pods left unallocated or unscheduled, a CEL error, input lines skipped, a failed check;
//   2  usage: bad flags, missing or unreadable input paths, input the command cannot use at
//      all (it stops before doing its work);
//   3  runtime failure: output that could not be written, a dependency that is down (NVML,
//      the API server), an internal error.
// Modules report errors as absl::Status; ExitFor maps their codes onto 2 and 3 so commands
// never pick a number themselves. Pure functions; thread-safe.
#ifndef GPUPLANE_CLI_EXIT_CODES_H_
#define GPUPLANE_CLI_EXIT_CODES_H_

#include <string_view>

#include "absl/status/status.h"

namespace gpuplane::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitProblems = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRuntime = 3;

// 2 for errors about what the user gave (InvalidArgument, NotFound, FailedPrecondition,
// OutOfRange, AlreadyExists, PermissionDenied), 3 for the rest (Unavailable, DataLoss,
// Internal, ...). REQUIRES: !s.ok().
int ExitFor(const absl::Status& s);

// Prints "gpuplane COMMAND: message" on stderr and returns ExitFor(s).
int Fail(std::string_view command, const absl::Status& s);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_EXIT_CODES_H_
