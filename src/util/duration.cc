#include "util/duration.h"

#include <string>

#include "absl/time/time.h"

namespace gpuplane::util {

std::optional<double> DurationSeconds(std::string_view text) {
  absl::Duration d;
  if (!absl::ParseDuration(std::string(text), &d) || d == absl::InfiniteDuration() ||
      d == -absl::InfiniteDuration()) {
    return std::nullopt;
  }
  return absl::ToDoubleSeconds(d);
}

}  // namespace gpuplane::util
