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

std::optional<double> PositiveDurationSeconds(std::string_view text, bool zero_ok) {
  std::optional<double> s = DurationSeconds(text);
  if (!s || *s < 0 || (*s == 0 && !zero_ok)) return std::nullopt;
  return s;
}

}  // namespace gpuplane::util
