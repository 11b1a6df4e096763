#include "cli/simulate_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::cli {

using util::Fixed;
namespace {

// JSON numbers rounded to 4 decimals, so output is stable and compact.
double Round4(double v) { return static_cast<double>(std::llround(v * 1e4)) / 1e4; }

}  // namespace

absl::Status WriteReport(const std::string& path, const std::string& html) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    return absl::UnavailableError(util::Cat("cannot write report ", path,
                                            ": check that its directory exists and is writable"));
  }
  out << html;
  if (!out) return absl::UnavailableError(util::Cat("writing report ", path, " failed"));
  return absl::OkStatus();
}

std::string FillTable(const FillReport& r) {
  std::string out = util::Cat("fill mode, trace ", r.trace, ", ", r.total_milli / 1000,
                              " GPUs; allocation ratio at 100% arrived workload (mean +- sd "
                              "over seeds)\n\n");
  util::Append(out, "policy       alloc %          unallocated GPUs   failed pods   runs\n");
  for (const sim::PolicySummary& s : r.summary) {
    int runs = 0;
    for (const sim::FillRun& run : r.runs) runs += run.policy == s.policy ? 1 : 0;
    char line[200];
    std::snprintf(line, sizeof line, "%-12s %6.2f +- %-5.2f   %7.1f +- %-6.1f  %9.1f   %4d\n",
                  s.policy.c_str(), s.alloc_ratio_at_100.mean, s.alloc_ratio_at_100.sd,
                  s.unallocated_gpus_at_100.mean, s.unallocated_gpus_at_100.sd, s.failed_pods.mean,
                  runs);
    out += line;
  }
  if (!r.summary.empty()) {
    char line[200];
    const sim::MeanSd& bound = r.summary.front().packing_bound_at_100;
    std::snprintf(line, sizeof line,
                  "\nno placement can pass %.2f +- %.2f %% (the packing bound of the pods arrived "
                  "by 100%%;\nCPU, memory and GPU models ignored)\n",
                  bound.mean, bound.sd);
    out += line;
  }
  int64_t disagreements = 0;
  for (const sim::FillRun& run : r.runs) disagreements += run.disagreements;
  if (disagreements > 0) {
    util::Append(out, "\nwarning: the allocator disagreed with the policies' view ", disagreements,
                 " times (a bug; please report)\n");
  }
  return out;
}

std::string FillJson(const FillReport& r) {
  nlohmann::ordered_json doc;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const sim::FillRun& run : r.runs) {
    nlohmann::ordered_json alloc = nlohmann::ordered_json::object();
    nlohmann::ordered_json frag = nlohmann::ordered_json::object();
    for (size_t x = 0; x < run.alloc_ratio.size(); ++x) {
      alloc[std::to_string(x)] = Round4(run.alloc_ratio[x]);
      frag[std::to_string(x)] = Round4(run.frag_ratio[x]);
    }
    runs.push_back({{"policy", run.policy},
                    {"seed", run.seed},
                    {"trace", r.trace},
                    {"alloc_ratio", alloc},
                    {"frag_ratio", frag},
                    {"failed_pods", run.failed_pods},
                    {"packing_bound_at_100", Round4(run.packing_bound_at_100)}});
  }
  nlohmann::ordered_json summary = nlohmann::ordered_json::array();
  for (const sim::PolicySummary& s : r.summary) {
    summary.push_back(
        {{"policy", s.policy},
         {"trace", r.trace},
         {"alloc_ratio_at_100",
          {{"mean", Round4(s.alloc_ratio_at_100.mean)}, {"sd", Round4(s.alloc_ratio_at_100.sd)}}},
         {"unallocated_gpus_at_100",
          {{"mean", Round4(s.unallocated_gpus_at_100.mean)},
           {"sd", Round4(s.unallocated_gpus_at_100.sd)}}},
         {"packing_bound_at_100",
          {{"mean", Round4(s.packing_bound_at_100.mean)},
           {"sd", Round4(s.packing_bound_at_100.sd)}}}});
  }
  doc["runs"] = runs;
  doc["summary"] = summary;
  return doc.dump() + "\n";
}

namespace {

// Per policy, the mean over seeds of the allocation and fragmentation curves.
std::pair<std::vector<Series>, std::vector<Series>> FillCurves(const FillReport& r) {
  std::vector<Series> alloc, frag;
  for (const sim::PolicySummary& s : r.summary) {
    Series a{s.policy, {}}, f{s.policy, {}};
    for (int x = 0; x <= sim::kMaxArrived; ++x) {
      double sa = 0, sf = 0;
      int n = 0;
      for (const sim::FillRun& run : r.runs) {
        if (run.policy != s.policy) continue;
        sa += run.alloc_ratio[x], sf += run.frag_ratio[x], ++n;
      }
      a.points.emplace_back(x, sa / n);
      f.points.emplace_back(x, sf / n);
    }
    alloc.push_back(std::move(a));
    frag.push_back(std::move(f));
  }
  return {std::move(alloc), std::move(frag)};
}

// The zoomed panel: from the first arrived workload where the policies differ by more than
// two points (rounded down to 10), to the end; from the lowest value there (rounded down to
// 5) to 100.
Chart ZoomOn(const std::vector<Series>& alloc, Chart chart) {
  int from = sim::kMaxArrived;
  for (int x = 0; x <= sim::kMaxArrived && from == sim::kMaxArrived; ++x) {
    double lo = 1e300, hi = -1e300;
    for (const Series& s : alloc) {
      lo = std::min(lo, s.points[x].second);
      hi = std::max(hi, s.points[x].second);
    }
    if (hi - lo > 2) from = x;
  }
  const double x0 = std::max(0.0, std::floor(from / 10.0) * 10);
  double low = 100;
  for (const Series& s : alloc) {
    for (auto [x, y] : s.points) {
      if (x >= x0) low = std::min(low, y);
    }
  }
  chart.title += " (zoomed where the policies part)";
  chart.x_range = {x0, sim::kMaxArrived};
  chart.y_range = {std::max(0.0, std::floor(low / 5) * 5), 100};
  return chart;
}

std::string FillCharts(const FillReport& r) {
  auto [alloc, frag] = FillCurves(r);
  if (!r.summary.empty()) {
    const double bound = r.summary.front().packing_bound_at_100.mean;
    alloc.push_back(Series{util::Cat("packing bound at 100: ", Fixed(bound, 2)),
                           {{0, bound}, {sim::kMaxArrived, bound}},
                           /*dashed=*/true});
  }
  const Chart whole{"GPU allocation ratio", "arrived workload (% of GPU capacity)", "allocated (%)",
                    std::pair<double, double>{0, sim::kMaxArrived},
                    std::pair<double, double>{0, 100}};
  std::string out = util::Cat("<p>", SvgLineChart(whole, alloc), "</p>");
  if (!r.summary.empty()) {
    std::vector<Series> curves(alloc.begin(), alloc.end());
    curves.pop_back();  // the zoom's range comes from the policies, not the bound
    util::Append(out, "<p>", SvgLineChart(ZoomOn(curves, whole), alloc), "</p>");
  }
  const Chart fragmentation{"Fragmentation ratio", "arrived workload (% of GPU capacity)",
                            "fragmented / idle (%)", std::pair<double, double>{0, sim::kMaxArrived},
                            std::pair<double, double>{0, 100}};
  util::Append(out, "<p>", SvgLineChart(fragmentation, frag), "</p>");
  return out;
}

}  // namespace

absl::Status WriteFillHtml(const FillReport& r, const std::string& path) {
  std::string html = util::Cat(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuplane simulate: ",
      HtmlEscape(r.trace),
      "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}</style></head><body>",
      "<h1>Fill mode: ", HtmlEscape(r.trace), "</h1><p>", r.total_milli / 1000,
      " GPUs. Means over seeds; allocation ratio at 100% arrived workload.</p><table><tr>"
      "<th>policy</th><th>alloc % (mean)</th><th>sd</th><th>unallocated GPUs</th>"
      "<th>failed pods</th></tr>");
  for (const sim::PolicySummary& s : r.summary) {
    util::Append(html, "<tr><td>", HtmlEscape(s.policy), "</td><td>",
                 Fixed(s.alloc_ratio_at_100.mean, 2), "</td><td>",
                 Fixed(s.alloc_ratio_at_100.sd, 2), "</td><td>",
                 Fixed(s.unallocated_gpus_at_100.mean, 1), "</td><td>",
                 Fixed(s.failed_pods.mean, 1), "</td></tr>");
  }
  util::Append(html, "</table>");
  if (!r.summary.empty()) {
    util::Append(html, "<p>No placement can pass ",
                 Fixed(r.summary.front().packing_bound_at_100.mean, 2),
                 "% at 100% arrived workload (the packing bound of the pods arrived by then; CPU, "
                 "memory and GPU models ignored; the dashed line).</p>");
  }
  util::Append(html, FillCharts(r), "</body></html>\n");
  return WriteReport(path, html);
}

std::string ScenarioTable(const std::string& description,
                          const std::vector<sim::ScenarioResult>& results) {
  std::string out = util::Cat("gpuplane simulate: the built-in scenario\n", description, "\n\n");
  util::Append(out, "                         k8s (integer GPUs)   gpuplane (DRA claims)\n");
  auto row = [&](const char* name, auto get, int digits) {
    char line[160];
    std::snprintf(line, sizeof line, "%-25s%18.*f   %20.*f\n", name, digits, get(results[0]),
                  digits, get(results[1]));
    out += line;
  };
  if (results.size() == 2) {
    row(
        "jobs completed", [](const sim::ScenarioResult& r) { return double(r.completed); }, 0);
    row(
        "OOM failures", [](const sim::ScenarioResult& r) { return double(r.oom_failures); }, 0);
    row(
        "jobs given up (6 OOMs)", [](const sim::ScenarioResult& r) { return double(r.gave_up); },
        0);
    row(
        "jobs never started", [](const sim::ScenarioResult& r) { return double(r.never_started); },
        0);
    row(
        "wasted GPU-hours", [](const sim::ScenarioResult& r) { return r.wasted_gpu_hours; }, 1);
    row(
        "useful GPU-hours", [](const sim::ScenarioResult& r) { return r.useful_gpu_hours; }, 1);
    row(
        "mean wait (hours)", [](const sim::ScenarioResult& r) { return r.mean_wait_hours; }, 2);
    row(
        "p95 wait (hours)", [](const sim::ScenarioResult& r) { return r.p95_wait_hours; }, 2);
    row(
        "GPU utilization (%)", [](const sim::ScenarioResult& r) { return r.utilization; }, 1);
  }
  util::Append(out,
               "\nEvery placement in both columns went through the same DRA allocator on the same\n"
               "ResourceSlices; only the requests differ. Fill-mode experiments on real traces:\n"
               "gpuplane simulate --nodes FILE --pods FILE (see README).\n");
  return out;
}

std::string ScenarioJson(const std::string& description,
                         const std::vector<sim::ScenarioResult>& results) {
  nlohmann::ordered_json rs = nlohmann::ordered_json::array();
  for (const sim::ScenarioResult& r : results) {
    rs.push_back({{"mode", r.mode},
                  {"jobs", r.jobs},
                  {"completed", r.completed},
                  {"oom_failures", r.oom_failures},
                  {"gave_up", r.gave_up},
                  {"never_started", r.never_started},
                  {"wasted_gpu_hours", Round4(r.wasted_gpu_hours)},
                  {"useful_gpu_hours", Round4(r.useful_gpu_hours)},
                  {"mean_wait_hours", Round4(r.mean_wait_hours)},
                  {"p95_wait_hours", Round4(r.p95_wait_hours)},
                  {"utilization", Round4(r.utilization)}});
  }
  nlohmann::ordered_json doc;
  doc["scenario"] = description;
  doc["results"] = rs;
  return doc.dump() + "\n";
}

absl::Status WriteScenarioHtml(const std::string& description,
                               const std::vector<sim::ScenarioResult>& results,
                               const std::string& path) {
  std::string html = util::Cat(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuplane simulate</title>"
      "<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}</style>"
      "</head><body><h1>The built-in scenario</h1><pre>",
      HtmlEscape(ScenarioTable(description, results)), "</pre></body></html>\n");
  return WriteReport(path, html);
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

namespace {

// Allocated GPU time over capacity time, in percent.
double MeanUtilization(const sim::ReplayRun& run, int64_t total_milli) {
  if (run.end_time <= 0 || total_milli <= 0) return 0;
  return run.gpu_hours * 3600 * 1000 / (static_cast<double>(total_milli) * run.end_time) * 100;
}

double MeanOf(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

std::string ReplayTable(const ReplayReport& r) {
  std::string out = util::Cat("replay mode, ", r.workload, ", ", r.total_milli / 1000, " GPUs\n\n");
  util::Append(out,
               "policy     seed    jobs   started  never  wait mean  p50      p95      "
               "util %  GPU-hours\n");
  for (const sim::ReplayRun& run : r.runs) {
    double util = MeanUtilization(run, r.total_milli);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%-10s %-6llu %7lld %9lld %6lld  %8.0fs %7.0fs %7.0fs %7.1f %10.0f\n",
                  run.policy.c_str(), static_cast<unsigned long long>(run.seed),
                  static_cast<long long>(run.jobs), static_cast<long long>(run.started),
                  static_cast<long long>(run.never_started), MeanOf(run.waits),
                  Percentile(run.waits, 50), Percentile(run.waits, 95), util, run.gpu_hours);
    out += line;
  }
  return out;
}

std::string ReplayJson(const ReplayReport& r) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const sim::ReplayRun& run : r.runs) {
    nlohmann::ordered_json util = nlohmann::ordered_json::array();
    for (auto [t, u] : run.utilization) util.push_back({Round4(t), Round4(u)});
    double mean_util = MeanUtilization(run, r.total_milli);
    runs.push_back({{"policy", run.policy},
                    {"seed", run.seed},
                    {"workload", r.workload},
                    {"jobs", run.jobs},
                    {"started", run.started},
                    {"never_started", run.never_started},
                    {"wait_seconds",
                     {{"mean", Round4(MeanOf(run.waits))},
                      {"p50", Round4(Percentile(run.waits, 50))},
                      {"p95", Round4(Percentile(run.waits, 95))},
                      {"max", Round4(Percentile(run.waits, 100))}}},
                    {"utilization_mean", Round4(mean_util)},
                    {"gpu_hours", Round4(run.gpu_hours)},
                    {"utilization", util}});
  }
  nlohmann::ordered_json doc;
  doc["replay"] = runs;
  return doc.dump() + "\n";
}

absl::Status WriteReplayHtml(const ReplayReport& r, const std::string& path) {
  std::vector<Series> util, waits;
  for (const sim::ReplayRun& run : r.runs) {
    std::string name = util::Cat(run.policy, " (seed ", run.seed, ")");
    Series u{name, {}};
    for (auto [t, v] : run.utilization) u.points.emplace_back(t / 3600, v);
    util.push_back(std::move(u));
    Series w{name, {}};
    for (int p = 0; p <= 100; p += 2) w.points.emplace_back(p, Percentile(run.waits, p) / 60);
    waits.push_back(std::move(w));
  }
  std::string html = util::Cat(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuplane simulate: replay</title>"
      "<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}</style>"
      "</head><body><h1>Replay: ",
      HtmlEscape(r.workload), "</h1><pre>", HtmlEscape(ReplayTable(r)), "</pre><p>",
      SvgLineChart(Chart{"GPU utilization over time", "hours", "allocated GPU (%)", std::nullopt,
                         std::pair<double, double>{0, 100}},
                   util),
      "</p><p>",
      SvgLineChart(Chart{"Queueing delay distribution", "percentile of started jobs",
                         "wait (minutes)", std::pair<double, double>{0, 100}, std::nullopt},
                   waits),
      "</p></body></html>\n");
  return WriteReport(path, html);
}

}  // namespace gpuplane::cli
