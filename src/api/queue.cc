#include <optional>
#include <string>
#include <string_view>

#include "api/names.h"
#include "api/queue_types.h"
#include "util/duration.h"
#include "util/strings.h"

namespace gpuplane::api {

std::string CheckQueueResourceKey(std::string_view key) {
  static constexpr std::string_view kHint =
      "; a queue may name cpu, memory, gpu, gpu/<model> or deviceclass/<name>";
  if (key == "cpu" || key == "memory" || key == "gpu") return "";
  if (key.starts_with("gpu/")) {
    std::string_view model = key.substr(4);
    if (model.empty() || model.size() > 63 || model.find('/') != model.npos) {
      return util::Cat("\"", key, "\": the model must be 1-63 characters without '/'", kHint);
    }
    return "";
  }
  if (key.starts_with("deviceclass/")) {
    std::string problem = CheckDnsSubdomain(key.substr(12));
    return problem.empty() ? "" : util::Cat("\"", key, "\": the DeviceClass name ", problem);
  }
  return util::Cat("unknown resource \"", key, "\"", kHint);
}

std::variant<double, std::string> QueueDurationSeconds(std::string_view text) {
  std::optional<double> s = util::DurationSeconds(text);
  if (!s) return util::Cat("\"", text, "\" is not a duration such as \"30m\" or \"1h30m\"");
  if (*s < 0) return util::Cat("\"", text, "\" must not be negative");
  return *s;
}

}  // namespace gpuplane::api
