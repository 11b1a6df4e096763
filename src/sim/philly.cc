#include "sim/philly.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "sim/csv.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

constexpr int kMaxJobGpus = 1024;

// Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days inverse).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS" as seconds since 1970; false when it is not one.
bool ParseTimestamp(std::string_view s, double& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return false;
  }
  auto num = [&](size_t at, size_t len, int64_t& v) {
    v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    return true;
  };
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) ||
      !num(17, 2, se)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  out = static_cast<double>(DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se);
  return true;
}

}  // namespace

absl::StatusOr<PhillyTrace> ParsePhilly(const std::string& text, const std::string& name) {
  csv::Table t = csv::ParseTable(text);
  csv::Columns cols(t, name);
  if (absl::Status s = cols.Require({"timestamp", "duration", "num_gpus", "cluster"}); !s.ok()) {
    return s;
  }
  PhillyTrace out;
  std::vector<double> epoch;
  for (const auto& [line, row] : t.rows) {
    PhillyJob j;
    j.source = csv::Where(name, line);
    std::string problem;
    int64_t gpus = 0;
    double at = 0;
    if (row.size() != t.header.size()) {
      problem = util::Cat("expected ", t.header.size(), " fields, found ", row.size());
    } else if (!ParseTimestamp(*cols.Get(row, "timestamp"), at)) {
      problem = util::Cat("timestamp \"", *cols.Get(row, "timestamp"),
                          "\" is not a time as YYYY-MM-DD HH:MM:SS");
    } else if (csv::Number(cols, row, "duration", j.duration, problem) &&
               csv::Integer(cols, row, "num_gpus", gpus, problem)) {
      j.tenant = *cols.Get(row, "cluster");
      if (gpus < 1 || gpus > kMaxJobGpus) {
        problem = util::Cat("num_gpus ", gpus, " is outside 1..", kMaxJobGpus);
      } else if (j.tenant.empty()) {
        problem = "the job has no cluster (tenant)";
      }
      j.gpus = static_cast<int>(gpus);
    }
    if (!problem.empty()) {
      out.problems.push_back(util::Cat(j.source, ": job skipped: ", problem));
      continue;
    }
    epoch.push_back(at);
    out.jobs.push_back(std::move(j));
  }
  if (!out.jobs.empty()) {
    out.first_submit_epoch = *std::min_element(epoch.begin(), epoch.end());
    for (size_t i = 0; i < out.jobs.size(); ++i) {
      out.jobs[i].submit = epoch[i] - out.first_submit_epoch;
    }
    std::stable_sort(out.jobs.begin(), out.jobs.end(),
                     [](const PhillyJob& a, const PhillyJob& b) { return a.submit < b.submit; });
  }
  return out;
}

absl::StatusOr<PhillyTrace> ReadPhilly(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) return text.status();
  return ParsePhilly(*text, path);
}

std::vector<TenantShare> TenantGuarantees(const PhillyTrace& trace, int cluster_gpus) {
  std::map<std::string, double> time;
  double total = 0;
  for (const PhillyJob& j : trace.jobs) {
    time[j.tenant] += j.duration * j.gpus;
    total += j.duration * j.gpus;
  }
  std::vector<TenantShare> out;
  out.reserve(time.size());
  for (const auto& [tenant, seconds] : time) {
    out.push_back({tenant, seconds, total > 0 ? seconds / total : 0, 0});
  }
  std::stable_sort(out.begin(), out.end(), [](const TenantShare& a, const TenantShare& b) {
    return a.gpu_seconds > b.gpu_seconds;
  });
  // Largest remainder: floors first, then one more GPU to the largest fractions.
  int given = 0;
  std::vector<size_t> by_fraction;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].guarantee_gpus = static_cast<int>(std::floor(out[i].share * cluster_gpus));
    given += out[i].guarantee_gpus;
    by_fraction.push_back(i);
  }
  auto fraction = [&](size_t i) {
    return out[i].share * cluster_gpus - std::floor(out[i].share * cluster_gpus);
  };
  std::stable_sort(by_fraction.begin(), by_fraction.end(),
                   [&](size_t a, size_t b) { return fraction(a) > fraction(b); });
  for (size_t k = 0; k < by_fraction.size() && given < cluster_gpus && total > 0; ++k, ++given) {
    ++out[by_fraction[k]].guarantee_gpus;
  }
  return out;
}

}  // namespace gpuplane::sim
