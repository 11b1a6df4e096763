#include "cli/flags.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "util/duration.h"
#include "util/strings.h"

namespace gpuplane::cli {

absl::StatusOr<double> DurationSeconds(const char* flag, const std::string& text, bool zero_ok) {
  std::optional<double> s = util::PositiveDurationSeconds(text, zero_ok);
  if (!s) {
    return absl::InvalidArgumentError(util::Cat(flag, " \"", text, "\" is not a ",
                                                zero_ok ? "" : "positive ",
                                                "duration such as 30m or 1h"));
  }
  return *s;
}

namespace {

// 0.01, 0.5, 600, 10000000: the shortest fixed notation that reads back the same.
std::string Plain(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : util::Cat(v);
}

}  // namespace

CLI::Validator FiniteRange(double lo, double hi) {
  const std::string range = util::Cat("a finite number from ", Plain(lo), " to ", Plain(hi));
  return CLI::Validator(
      [lo, hi, range](const std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < lo ||
            v > hi) {
          return util::Cat("\"", text, "\" is not ", range);
        }
        return "";
      },
      util::Cat("FINITE in [", Plain(lo), " - ", Plain(hi), "]"), "FINITE");
}

}  // namespace gpuplane::cli
