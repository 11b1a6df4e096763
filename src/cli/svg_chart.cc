#include "cli/svg_chart.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "util/strings.h"

namespace gpuplane::cli {

using util::Fixed;
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr double kLeft = 60, kRight = 170, kTop = 30, kBottom = 45;
constexpr double kLabelGap = 13;  // pixels between line-end labels

// A tick's text: as many decimals as the step needs (25, 2.5, 0.25).
std::string TickText(double v, double step) {
  int digits = 0;
  while (digits < 6 &&
         std::fabs(step * std::pow(10, digits) - std::round(step * std::pow(10, digits))) > 1e-9) {
    ++digits;
  }
  return Fixed(std::fabs(v) < step * 1e-9 ? 0 : v, digits);
}

// The plot area's mapping from data to pixels.
struct Frame {
  double x0, x1, y0, y1, w, h;
  double Px(double x) const { return kLeft + (x - x0) / (x1 - x0) * (w - kLeft - kRight); }
  double Py(double y) const { return h - kBottom - (y - y0) / (y1 - y0) * (h - kTop - kBottom); }
};

std::pair<double, double> Extent(const std::vector<Series>& series, bool x) {
  double lo = 1e300, hi = -1e300;
  for (const Series& s : series) {
    for (auto [px, py] : s.points) {
      const double v = x ? px : py;
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) return {0, 1};
  if (lo == hi) return {lo, lo + 1};
  return {lo, hi};
}

// The axis range and its ticks: a fixed range keeps its ends; otherwise the ticks' ends.
std::pair<std::pair<double, double>, std::vector<double>> Axis(
    const std::optional<std::pair<double, double>>& fixed, std::pair<double, double> extent) {
  std::pair<double, double> range = fixed.value_or(extent);
  if (range.second <= range.first) range.second = range.first + 1;
  std::vector<double> ticks = NiceTicks(range.first, range.second);
  if (!fixed) return {{ticks.front(), ticks.back()}, ticks};
  std::erase_if(ticks, [&](double t) {
    const double eps = (range.second - range.first) * 1e-9;
    return t < range.first - eps || t > range.second + eps;
  });
  return {range, ticks};
}

void Axes(const Chart& c, const Frame& f, const std::vector<double>& xt,
          const std::vector<double>& yt, std::string& svg) {
  const double xs = xt.size() > 1 ? xt[1] - xt[0] : 1, ys = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double y : yt) {
    util::Append(svg, "<line x1='", Fixed(kLeft, 0), "' x2='", Fixed(f.w - kRight, 0), "' y1='",
                 Fixed(f.Py(y), 1), "' y2='", Fixed(f.Py(y), 1), "' stroke='#eee'/><text x='",
                 Fixed(kLeft - 5, 0), "' y='", Fixed(f.Py(y) + 4, 1), "' text-anchor='end'>",
                 TickText(y, ys), "</text>");
  }
  for (double x : xt) {
    util::Append(svg, "<text x='", Fixed(f.Px(x), 1), "' y='", Fixed(f.h - kBottom + 15, 0),
                 "' text-anchor='middle'>", TickText(x, xs), "</text>");
  }
  util::Append(svg, "<rect x='", Fixed(kLeft, 0), "' y='", Fixed(kTop, 0), "' width='",
               Fixed(f.w - kLeft - kRight, 0), "' height='", Fixed(f.h - kTop - kBottom, 0),
               "' fill='none' stroke='#999'/>");
  util::Append(svg, "<text x='", Fixed((kLeft + f.w - kRight) / 2, 0), "' y='", Fixed(f.h - 8, 0),
               "' text-anchor='middle'>", HtmlEscape(c.x_label), "</text>");
  const double mid = (kTop + f.h - kBottom) / 2;
  util::Append(svg, "<text x='14' y='", Fixed(mid, 0), "' transform='rotate(-90 14 ", Fixed(mid, 0),
               ")' text-anchor='middle'>", HtmlEscape(c.y_label), "</text>");
}

// Each series' label at the height where its line ends (its last point inside the x range),
// pushed apart top to bottom so that none overlaps another.
std::vector<double> LabelHeights(const std::vector<Series>& series, const Frame& f) {
  std::vector<std::pair<double, size_t>> wanted;
  for (size_t i = 0; i < series.size(); ++i) {
    double y = f.y0;
    for (auto [px, py] : series[i].points) {
      if (px <= f.x1 && std::isfinite(py)) y = py;
    }
    const double clamped = std::clamp(f.Py(y), kTop + 4, f.h - kBottom);
    wanted.emplace_back(clamped, i);
  }
  std::sort(wanted.begin(), wanted.end());
  std::vector<double> at(series.size());
  double last = -1e300;
  for (auto [y, i] : wanted) {
    last = std::max(y, last + kLabelGap);
    at[i] = last;
  }
  return at;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw * (1 - 1e-9)) {
      step = m * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; ticks.size() < 100; t += step) {
    ticks.push_back(std::round(t / step) * step);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string SvgLineChart(const Chart& c, const std::vector<Series>& series) {
  auto [xr, xt] = Axis(c.x_range, Extent(series, true));
  auto [yr, yt] = Axis(c.y_range, Extent(series, false));
  const Frame f{xr.first, xr.second, yr.first, yr.second, c.width, c.height};
  std::string svg =
      util::Cat("<svg xmlns='http://www.w3.org/2000/svg' width='", Fixed(f.w, 0), "' height='",
                Fixed(f.h, 0), "' font-family='sans-serif' font-size='11'>");
  util::Append(svg, "<text x='", Fixed(kLeft, 0), "' y='18' font-size='14'>", HtmlEscape(c.title),
               "</text>");
  Axes(c, f, xt, yt, svg);
  std::string clip = "clip-";  // unique per chart title within a report
  for (char ch : c.title) {
    if (std::isalnum(static_cast<unsigned char>(ch))) clip += ch;
  }
  util::Append(svg, "<clipPath id='", clip, "'><rect x='", Fixed(kLeft, 0), "' y='", Fixed(kTop, 0),
               "' width='", Fixed(f.w - kLeft - kRight, 0), "' height='",
               Fixed(f.h - kTop - kBottom, 0), "'/></clipPath>");
  const std::vector<double> label_y = LabelHeights(series, f);
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const char* color = s.dashed ? "#555" : kColors[i % std::size(kColors)];
    std::string pts;
    for (auto [x, y] : s.points) {
      if (std::isfinite(y)) util::Append(pts, Fixed(f.Px(x), 1), ",", Fixed(f.Py(y), 1), " ");
    }
    util::Append(svg, "<polyline clip-path='url(#", clip, ")' fill='none' stroke='", color,
                 "' stroke-width='1.5'", s.dashed ? " stroke-dasharray='5,4'" : "", " points='",
                 pts, "'/>");
    util::Append(svg, "<text x='", Fixed(f.w - kRight + 6, 0), "' y='", Fixed(label_y[i] + 4, 1),
                 "' fill='", color, "'>", HtmlEscape(s.name), "</text>");
  }
  return svg + "</svg>";
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace gpuplane::cli
