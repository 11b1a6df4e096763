#include "cli/tenant_report.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "cli/simulate_output.h"
#include "cli/svg_chart.h"
#include "sim/tenant_metrics.h"
#include "util/strings.h"

namespace gpuplane::cli {

using util::Fixed;
namespace {

constexpr int kMaxPoints = 400;  // per line: longer runs are averaged into wider buckets

// Time axis unit for a run of `hours`: hours up to three days, days beyond.
double AxisUnit(size_t hours) { return hours > 72 ? 24 : 1; }

// Hours per bucket so that a line of `hours` has at most kMaxPoints points.
size_t Bucket(size_t hours) { return std::max<size_t>(1, (hours + kMaxPoints - 1) / kMaxPoints); }

// Means of value(hour) over buckets of hours, skipping hours where it has none; x at the
// bucket's start in axis units.
template <typename F>
std::vector<std::pair<double, double>> Bucketed(const std::vector<sim::TenantHour>& hours,
                                                F value) {
  std::vector<std::pair<double, double>> out;
  const size_t width = Bucket(hours.size());
  const double unit = AxisUnit(hours.size());
  for (size_t start = 0; start < hours.size(); start += width) {
    double sum = 0;
    int n = 0;
    for (size_t h = start; h < std::min(hours.size(), start + width); ++h) {
      if (std::optional<double> v = value(hours[h])) {
        sum += *v;
        ++n;
      }
    }
    if (n > 0) out.emplace_back(static_cast<double>(start) / unit, sum / n);
  }
  return out;
}

std::string TimeLabel(size_t hours) { return AxisUnit(hours) > 1 ? "days" : "hours"; }

std::string JainSection(const TenantReport& r) {
  std::vector<Series> lines;
  size_t longest = 0;
  for (size_t p = 0; p < r.policies.size(); ++p) {
    if (r.runs[p].empty()) continue;
    const std::vector<sim::TenantHour>& hours = r.runs[p].front().hourly;
    longest = std::max(longest, hours.size());
    lines.push_back({r.policies[p], Bucketed(hours, sim::HourJain)});
  }
  std::string out =
      "<h2>Fairness</h2><p>Jain's index of allocation / fair share over the tenants that waited "
      "in each hour (1: every waiting tenant at the same fraction of its share). ";
  if (Bucket(longest) > 1) util::Append(out, "Means over ", Bucket(longest), "-hour buckets. ");
  util::Append(out, "The lowest hour is <code>jain_min_hourly</code>.</p>");
  for (Series& s : lines) {
    if (!s.points.empty()) continue;
    s.points.emplace_back(0, 1);  // no contended hour: the index is 1 throughout
  }
  out += SvgLineChart(Chart{"Hourly Jain index (first seed)", TimeLabel(longest), "Jain index",
                            std::nullopt, std::pair<double, double>{0, 1}},
                      lines);
  return out;
}

// Per policy, small charts of each tenant's allocated GPUs (solid) and fair share (dashed),
// for tenants that waited at some point.
std::string TenantSection(const TenantReport& r) {
  std::string out =
      "<h2>Allocation against fair share, per tenant</h2><p>GPUs allocated (solid) and fair "
      "share (dashed) over time, first seed, tenants that had work waiting at some point.</p>";
  for (size_t p = 0; p < r.policies.size(); ++p) {
    if (r.runs[p].empty()) continue;
    const std::vector<sim::TenantHour>& hours = r.runs[p].front().hourly;
    util::Append(out, "<h3>", HtmlEscape(r.policies[p]), "</h3><div>");
    for (size_t t = 0; t < r.tenants.size(); ++t) {
      const bool waited = std::any_of(hours.begin(), hours.end(), [&](const sim::TenantHour& h) {
        return t < h.waited.size() && h.waited[t];
      });
      if (!waited) continue;
      auto field = [t](std::vector<double> sim::TenantHour::*f) {
        return [t, f](const sim::TenantHour& h) -> std::optional<double> {
          if (t >= (h.*f).size()) return std::nullopt;
          return (h.*f)[t];
        };
      };
      std::vector<Series> lines = {
          {"allocated", Bucketed(hours, field(&sim::TenantHour::allocated))},
          {"fair share", Bucketed(hours, field(&sim::TenantHour::fair)), true}};
      out += SvgLineChart(Chart{r.tenants[t], TimeLabel(hours.size()), "GPUs", std::nullopt,
                                std::nullopt, 400, 220},
                          lines);
    }
    out += "</div>";
  }
  return out;
}

// Percentile curves (x: 0..100) of values pooled over a policy's seeds, divided by `unit`.
Series Curve(const std::string& name, const std::vector<double>& values, double unit) {
  Series s{name, {}};
  for (int p = 0; p <= 100; p += 2) s.points.emplace_back(p, Percentile(values, p) / unit);
  return s;
}

template <typename F>
std::vector<double> Pooled(const std::vector<sim::TenantSummary>& runs, F field) {
  std::vector<double> out;
  for (const sim::TenantSummary& r : runs) {
    const std::vector<double>& v = r.*field;
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::string QuantileRow(const std::string& policy, const std::vector<double>& v, double unit) {
  std::string row = util::Cat("<tr><td>", HtmlEscape(policy), "</td><td>", v.size(), "</td>");
  for (double p : {50.0, 90.0, 95.0, 99.0, 100.0}) {
    util::Append(row, "<td>", Fixed(Percentile(v, p) / unit, 2), "</td>");
  }
  return row + "</tr>";
}

constexpr const char* kQuantileHead =
    "<tr><th>policy</th><th>n</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th>"
    "<th>max</th></tr>";

// A table of one per-run list's quantiles (in hours), pooled over each policy's seeds, and
// the percentile curves of the policies that have any values.
std::string QuantileBlock(const TenantReport& r, std::vector<double> sim::TenantSummary::*field,
                          const std::string& title, const std::string& x_label,
                          const std::string& y_label) {
  std::string out = util::Cat("<table>", kQuantileHead);
  std::vector<Series> curves;
  for (size_t p = 0; p < r.policies.size(); ++p) {
    std::vector<double> v = Pooled(r.runs[p], field);
    out += QuantileRow(r.policies[p], v, 3600);
    if (!v.empty()) curves.push_back(Curve(r.policies[p], v, 3600));
  }
  out += "</table>";
  if (!curves.empty()) {
    out += SvgLineChart(
        Chart{title, x_label, y_label, std::pair<double, double>{0, 100}, std::nullopt}, curves);
  }
  return out;
}

std::string DelaySection(const TenantReport& r) {
  std::string out =
      "<h2>Queueing delay by priority</h2><p>Submission to first start, hours, all seeds. "
      "High: non-preemptible work; low: preemptible.</p>";
  using S = sim::TenantSummary;
  for (auto [name, field] :
       {std::pair{"high", &S::queue_delays_high_s}, std::pair{"low", &S::queue_delays_low_s}}) {
    util::Append(out, "<h3>", name, "</h3>",
                 QuantileBlock(r, field, util::Cat("Queueing delay, ", name),
                               "percentile of started jobs", "hours"));
  }
  return out;
}

std::string LostWorkSection(const TenantReport& r) {
  return "<h2>Work lost per preemption</h2><p>GPU-hours each eviction threw away (GPUs x time "
         "since the last checkpoint, plus the restore), all seeds.</p>" +
         QuantileBlock(r, &sim::TenantSummary::lost_gpu_seconds, "Lost work per preemption",
                       "percentile of preemptions", "GPU-hours");
}

}  // namespace

std::string TenantHtml(const TenantReport& r) {
  std::string html = util::Cat(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuplane simulate: "
      "multi-tenant replay</title><style>body{font-family:sans-serif;margin:2em}"
      "pre{background:#f6f6f6;padding:1em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style></head><body>"
      "<h1>Multi-tenant replay</h1><p>",
      HtmlEscape(r.title), "</p><p>", HtmlEscape(r.note), "</p><pre>", HtmlEscape(r.tables),
      "</pre>");
  bool any = false;
  for (const std::vector<sim::TenantSummary>& runs : r.runs) any = any || !runs.empty();
  if (any) {
    html += JainSection(r);
    html += DelaySection(r);
    html += LostWorkSection(r);
    html += TenantSection(r);
  }
  return html + "</body></html>\n";
}

absl::Status WriteTenantHtml(const TenantReport& r, const std::string& path) {
  return WriteReport(path, TenantHtml(r));
}

}  // namespace gpuplane::cli
