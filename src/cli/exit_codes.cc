#include "cli/exit_codes.h"

#include <cstdio>
#include <string>

namespace gpuplane::cli {

int ExitFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied:
      return kExitUsage;
    default:
      return kExitRuntime;
  }
}

int Fail(std::string_view command, const absl::Status& s) {
  std::fprintf(stderr, "gpuplane %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               std::string(s.message()).c_str());
  return ExitFor(s);
}

}  // namespace gpuplane::cli
