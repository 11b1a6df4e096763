// SVG line charts for the simulator's HTML reports, drawn to be read: axes snapped to round
// ticks (0, 25, 50, ... rather than 0.3, 24.3, ...), each line labelled at its end (labels
// pushed apart so they never overlap), optional dashed reference lines, and a fixed data range
// for zoomed panels (lines clipped to the plot). Pure functions returning strings; thread-safe.
#ifndef GPUPLANE_CLI_SVG_CHART_H_
#define GPUPLANE_CLI_SVG_CHART_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuplane::cli {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y) in data units
  bool dashed = false;                            // a reference line (bounds, targets)
};

struct Chart {
  std::string title, x_label, y_label;
  // Data ranges; absent: the series' extent, widened to round ticks.
  std::optional<std::pair<double, double>> x_range, y_range;
  double width = 640, height = 360;
};

// Round tick values covering [lo, hi] with about `target` intervals, steps of 1, 2, 2.5 or 5
// times a power of ten; the first tick <= lo and the last >= hi. REQUIRES: lo <= hi, finite.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);

std::string SvgLineChart(const Chart& chart, const std::vector<Series>& series);

// Escapes &, <, >, " for HTML text and attributes.
std::string HtmlEscape(const std::string& s);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_SVG_CHART_H_
