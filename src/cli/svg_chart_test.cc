#include "cli/svg_chart.h"

#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpuplane::cli {
namespace {

TEST(NiceTicksTest, RoundValuesCoveringTheRange) {
  EXPECT_EQ(NiceTicks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(NiceTicks(0.3, 96.3), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(NiceTicks(0, 130), (std::vector<double>{0, 50, 100, 150}));
  EXPECT_EQ(NiceTicks(85, 100), (std::vector<double>{85, 90, 95, 100}));
  EXPECT_EQ(NiceTicks(85, 95), (std::vector<double>{84, 86, 88, 90, 92, 94, 96}));
  EXPECT_EQ(NiceTicks(-1, 1), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(NiceTicks(5, 5).front(), 5);  // an empty range still gets an axis
}

// The y coordinates of the line-end labels (the texts after the plot, at x = width - 164).
std::vector<double> LabelYs(const std::string& svg) {
  std::vector<double> ys;
  std::regex label("<text x='476' y='([0-9.]+)'");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator();
       ++it) {
    ys.push_back(std::stod((*it)[1]));
  }
  return ys;
}

TEST(SvgLineChartTest, LabelsAtLineEndsNeverOverlap) {
  // Three lines ending at nearly the same value, one far below.
  std::vector<Series> series = {{"a", {{0, 0}, {10, 95.0}}},
                                {"b", {{0, 0}, {10, 95.2}}},
                                {"c", {{0, 0}, {10, 95.1}}},
                                {"d", {{0, 0}, {10, 40}}},
                                {"bound", {{0, 97}, {10, 97}}, true}};
  const std::string svg = SvgLineChart(Chart{"t", "x", "y"}, series);
  std::vector<double> ys = LabelYs(svg);
  ASSERT_EQ(ys.size(), 5u) << svg;
  std::sort(ys.begin(), ys.end());
  for (size_t i = 1; i < ys.size(); ++i) EXPECT_GE(ys[i] - ys[i - 1], 13 - 1e-9) << svg;
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find(">100</text>"), std::string::npos) << "round ticks: " << svg;
}

TEST(SvgLineChartTest, ZoomedRangeClipsAndKeepsItsEnds) {
  std::vector<Series> series = {{"a", {{0, 0}, {130, 96}}}};
  Chart zoom{"zoomed", "x", "y", std::pair<double, double>{80, 130},
             std::pair<double, double>{85, 100}};
  const std::string svg = SvgLineChart(zoom, series);
  EXPECT_NE(svg.find("clip-path='url(#clip-zoomed)'"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">80</text>"), std::string::npos);
  EXPECT_NE(svg.find(">130</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">150</text>"), std::string::npos) << "no tick outside a fixed range";
  EXPECT_EQ(HtmlEscape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
}

}  // namespace
}  // namespace gpuplane::cli
