// Output of `gpuplane simulate`: the terminal table, the JSON document and the
// self-contained HTML report (inline SVG charts, no scripts or network). Pure functions of
// the results they are given (borrowed for the call), returning strings; WriteReport's errors
// are Unavailable (the file could not be written). Thread-safe.
#ifndef GPUPLANE_CLI_SIMULATE_OUTPUT_H_
#define GPUPLANE_CLI_SIMULATE_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/svg_chart.h"
#include "sim/experiment.h"
#include "sim/replay.h"
#include "sim/scenario.h"

namespace gpuplane::cli {

struct FillReport {
  std::string trace;
  int64_t total_milli = 0;
  std::vector<sim::FillRun> runs;
  std::vector<sim::PolicySummary> summary;
  int64_t input_problems = 0;
};

struct ReplayReport {
  std::string workload;
  int64_t total_milli = 0;
  std::vector<sim::ReplayRun> runs;
  int64_t input_problems = 0;
};

std::string FillTable(const FillReport& r);
std::string ReplayTable(const ReplayReport& r);
std::string ReplayJson(const ReplayReport& r);
absl::Status WriteReplayHtml(const ReplayReport& r, const std::string& path);
std::string ScenarioTable(const std::string& description,
                          const std::vector<sim::ScenarioResult>& results);
std::string ScenarioJson(const std::string& description,
                         const std::vector<sim::ScenarioResult>& results);
absl::Status WriteScenarioHtml(const std::string& description,
                               const std::vector<sim::ScenarioResult>& results,
                               const std::string& path);

// Writes a report's HTML to `path` (Unavailable, naming the path, when it cannot).
absl::Status WriteReport(const std::string& path, const std::string& html);

// Percentile (0..100) of unsorted values, nearest rank; 0 for none.
double Percentile(std::vector<double> values, double p);
std::string FillJson(const FillReport& r);
absl::Status WriteFillHtml(const FillReport& r, const std::string& path);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_SIMULATE_OUTPUT_H_
