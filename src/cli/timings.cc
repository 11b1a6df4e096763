#include "cli/timings.h"

#include <cstdio>
#include <string>

namespace gpuplane::cli {

void PrintTimings(bool json, const nlohmann::ordered_json& timings) {
  if (json) {
    std::string line = nlohmann::ordered_json{{"timings", timings}}.dump();
    std::fprintf(stderr, "%s\n", line.c_str());
  } else {
    std::fprintf(stderr, "took %.3f s\n", timings.at("seconds").get<double>());
  }
}

}  // namespace gpuplane::cli
