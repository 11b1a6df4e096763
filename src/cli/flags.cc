#include "cli/flags.h"

#include "absl/time/time.h"
#include "util/strings.h"

namespace gpuplane::cli {

absl::StatusOr<double> DurationSeconds(const char* flag, const std::string& text, bool zero_ok) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration() || d == absl::InfiniteDuration() ||
      (d == absl::ZeroDuration() && !zero_ok)) {
    return absl::InvalidArgumentError(util::Cat(flag, " \"", text, "\" is not a ",
                                                zero_ok ? "" : "positive ",
                                                "duration such as 30m or 1h"));
  }
  return absl::ToDoubleSeconds(d);
}

}  // namespace gpuplane::cli
