#include "sim/tenant_scenario.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "util/strings.h"

namespace gpuplane::sim {
namespace {

using Fields = std::map<std::string, std::string>;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A decimal number in [lo, hi]; false when it is not one.
bool Number(const std::string& text, double lo, double hi, double& out) {
  const char* end = text.data() + text.size();
  auto [ptr, err] = std::from_chars(text.data(), end, out);
  return err == std::errc() && ptr == end && std::isfinite(out) && out >= lo && out <= hi;
}

class Parser {
 public:
  Parser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
    out_.file = file_;
  }
  absl::StatusOr<TenantScenario> Run();

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(util::Cat(file_, ":", line_, ": ", what));
  }
  // Words after the first two of `words` as key=value (a bare word maps to "").
  absl::StatusOr<Fields> KeyValues(const std::vector<std::string>& words, size_t from,
                                   const std::set<std::string>& flags) const;
  absl::StatusOr<double> Field(const Fields& f, const std::string& key, double lo, double hi,
                               bool required, double fallback) const;
  absl::Status Statement(const std::vector<std::string>& words);
  absl::Status Tenant(const std::vector<std::string>& words);
  absl::Status Job(const std::vector<std::string>& words);
  absl::Status Expect(const std::vector<std::string>& words);
  absl::Status Setting(const std::vector<std::string>& words, double lo, double hi, double& out);

  std::string_view text_;
  std::string file_;
  int line_ = 0;
  TenantScenario out_;
  std::map<std::string, int> tenant_;
  std::set<std::string> job_names_;
};

absl::StatusOr<Fields> Parser::KeyValues(const std::vector<std::string>& words, size_t from,
                                         const std::set<std::string>& flags) const {
  Fields f;
  for (size_t i = from; i < words.size(); ++i) {
    const size_t eq = words[i].find('=');
    const std::string key = words[i].substr(0, eq);
    if (eq == std::string::npos && !flags.contains(key)) {
      return Error(util::Cat("\"", words[i], "\" is not key=value"));
    }
    if (!f.emplace(key, eq == std::string::npos ? "" : words[i].substr(eq + 1)).second) {
      return Error(util::Cat("\"", key, "\" is given twice"));
    }
  }
  return f;
}

absl::StatusOr<double> Parser::Field(const Fields& f, const std::string& key, double lo, double hi,
                                     bool required, double fallback) const {
  auto it = f.find(key);
  if (it == f.end()) {
    if (required) return Error(util::Cat("missing ", key, "="));
    return fallback;
  }
  double v = 0;
  if (!Number(it->second, lo, hi, v)) {
    return Error(
        util::Cat(key, "=\"", it->second, "\" is not a number from ", Num(lo), " to ", Num(hi)));
  }
  return v;
}

absl::Status Parser::Setting(const std::vector<std::string>& words, double lo, double hi,
                             double& out) {
  if (words.size() != 2 || !Number(words[1], lo, hi, out)) {
    return Error(util::Cat(words[0], " takes one number from ", Num(lo), " to ", Num(hi)));
  }
  return absl::OkStatus();
}

absl::Status Parser::Tenant(const std::vector<std::string>& words) {
  if (words.size() < 2) return Error("tenant needs a name");
  if (tenant_.contains(words[1])) return Error(util::Cat("tenant \"", words[1], "\" twice"));
  absl::StatusOr<Fields> f = KeyValues(words, 2, {"opportunistic"});
  if (!f.ok()) return f.status();
  for (const auto& [key, value] : *f) {
    if (key != "guarantee" && key != "opportunistic" && key != "min_runtime") {
      return Error(util::Cat("unknown tenant field \"", key,
                             "\"; known: guarantee, min_runtime, opportunistic"));
    }
  }
  absl::StatusOr<double> g = Field(*f, "guarantee", 0, 1e6, true, 0);
  if (!g.ok()) return g.status();
  absl::StatusOr<double> min_runtime = Field(*f, "min_runtime", 0, 1e10, false, -1);
  if (!min_runtime.ok()) return min_runtime.status();
  out_.workload.min_runtime.push_back(*min_runtime);
  tenant_[words[1]] = static_cast<int>(out_.workload.tenants.size());
  out_.workload.tenants.push_back(words[1]);
  out_.workload.guarantee_gpus.push_back(static_cast<int>(*g));
  out_.workload.opportunistic.push_back(f->contains("opportunistic"));
  return absl::OkStatus();
}

absl::Status Parser::Job(const std::vector<std::string>& words) {
  if (words.size() < 2 || words[1].find('=') != std::string::npos) {
    return Error("job needs a name first: job NAME submit=S duration=S gpus=N tenant=T [high]");
  }
  if (!job_names_.insert(words[1]).second) return Error(util::Cat("job \"", words[1], "\" twice"));
  absl::StatusOr<Fields> f = KeyValues(words, 2, {"high"});
  if (!f.ok()) return f.status();
  for (const auto& [key, value] : *f) {
    static const std::set<std::string> kKnown = {"submit", "duration",    "gpus",
                                                 "tenant", "min_runtime", "high"};
    if (!kKnown.contains(key)) {
      return Error(util::Cat("unknown job field \"", key,
                             "\"; known: submit, duration, gpus, tenant, min_runtime, high"));
    }
  }
  TenantJob j;
  absl::StatusOr<double> submit = Field(*f, "submit", 0, 1e10, true, 0);
  if (!submit.ok()) return submit.status();
  absl::StatusOr<double> duration = Field(*f, "duration", 0, 1e10, true, 0);
  if (!duration.ok()) return duration.status();
  absl::StatusOr<double> gpus = Field(*f, "gpus", 1, 1024, true, 0);
  if (!gpus.ok()) return gpus.status();
  if (*gpus != std::floor(*gpus)) return Error("gpus= must be a whole number");
  absl::StatusOr<double> min_runtime = Field(*f, "min_runtime", 0, 1e10, false, -1);
  if (!min_runtime.ok()) return min_runtime.status();
  j.min_runtime = *min_runtime;
  auto t = f->find("tenant");
  if (t == f->end()) return Error("missing tenant=");
  auto id = tenant_.find(t->second);
  if (id == tenant_.end()) {
    return Error(
        util::Cat("unknown tenant \"", t->second, "\"; declare it with a tenant line first"));
  }
  if (!out_.workload.jobs.empty() && *submit < out_.workload.jobs.back().submit) {
    return Error("jobs must be listed in submission order");
  }
  j.submit = *submit;
  j.duration = *duration;
  j.gpus = static_cast<int>(*gpus);
  j.tenant = id->second;
  j.high = f->contains("high");
  out_.workload.jobs.push_back(j);
  out_.job_names.push_back(words[1]);
  return absl::OkStatus();
}

absl::Status Parser::Expect(const std::vector<std::string>& words) {
  if (words.size() < 2) return Error("expect needs a policy");
  if (absl::StatusOr<TenantPolicy> p = TenantPolicyNamed(words[1]); !p.ok()) {
    return Error(std::string(p.status().message()));
  }
  absl::StatusOr<Fields> f = KeyValues(words, 2, {});
  if (!f.ok()) return f.status();
  TenantExpectation e;
  e.policy = words[1];
  e.line = line_;
  for (const auto& [key, value] : *f) {
    if (key == "evicted") {
      e.check_evicted = true;
      e.evicted = util::SplitNonEmpty(value, ',');
      for (const std::string& name : e.evicted) {
        if (!job_names_.contains(name)) {
          return Error(util::Cat("evicted= names job \"", name, "\", which is not declared above"));
        }
      }
      continue;
    }
    const auto& known = ExpectedFigures();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const std::string& k : known) util::Append(list, list.empty() ? "" : ", ", k);
      return Error(util::Cat("unknown figure \"", key, "\"; known: evicted, ", list));
    }
    absl::StatusOr<double> v = Field(*f, key, -1, 1e12, true, 0);
    if (!v.ok()) return v.status();
    e.figures[key] = *v;
  }
  out_.expectations.push_back(std::move(e));
  return absl::OkStatus();
}

absl::Status Parser::Statement(const std::vector<std::string>& words) {
  const std::string& w = words[0];
  if (w == "nodes") {
    double n = 0;
    if (absl::Status s = Setting(words, 1, 10000, n); !s.ok()) return s;
    out_.options.nodes = static_cast<int>(n);
    return absl::OkStatus();
  }
  if (w == "checkpoint-interval") return Setting(words, 1, 1e9, out_.options.checkpoint_interval);
  if (w == "restore") return Setting(words, 0, 1e9, out_.options.restore_seconds);
  if (w == "window") return Setting(words, 0, 1e9, out_.options.guarantee_window);
  if (w == "min-runtime") return Setting(words, 0, 1e10, out_.options.min_runtime);
  if (w == "usage-half-life") return Setting(words, 0, 1e10, out_.options.usage_half_life);
  if (w == "usage-k") return Setting(words, 0, 100, out_.options.usage_k);
  if (w == "tenant") return Tenant(words);
  if (w == "job") return Job(words);
  if (w == "expect") return Expect(words);
  return Error(util::Cat("unknown statement \"", w,
                         "\"; known: nodes, checkpoint-interval, restore, window, min-runtime, "
                         "usage-half-life, usage-k, tenant, job, "
                         "expect"));
}

absl::StatusOr<TenantScenario> Parser::Run() {
  out_.options.nodes = 1;
  size_t start = 0;
  while (start <= text_.size()) {
    size_t end = text_.find('\n', start);
    if (end == std::string_view::npos) end = text_.size();
    std::string line(text_.substr(start, end - start));
    start = end + 1;
    ++line_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with("# scenario:")) out_.description = Trim(line.substr(11));
    if (line.starts_with("# source:")) out_.source = Trim(line.substr(9));
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::vector<std::string> words = util::SplitNonEmpty(line, ' ');
    if (words.empty()) continue;
    if (absl::Status s = Statement(words); !s.ok()) return s;
  }
  if (out_.expectations.empty()) {
    return absl::InvalidArgumentError(
        util::Cat(file_, ": no expect line; say what a policy should do with the jobs"));
  }
  return std::move(out_);
}

double Figure(const TenantSummary& s, const std::string& name) {
  if (name == "finished") return static_cast<double>(s.finished);
  if (name == "preemptions") return static_cast<double>(s.preemptions);
  if (name == "lost_gpu_hours") return s.lost_gpu_hours;
  if (name == "partial_gang_evictions") return static_cast<double>(s.partial_gang_evictions);
  if (name == "incomplete_gang_gpu_seconds") return s.incomplete_gang_gpu_seconds;
  if (name == "fair_share_cycles") return static_cast<double>(s.fair_share_cycles);
  if (name == "end_s") return s.end_s;
  if (name == "queue_delay_p95_high_s") return s.queue_delay_p95_high_s;
  if (name == "queue_delay_p95_low_s") return s.queue_delay_p95_low_s;
  if (name == "jct_mean_s") return s.jct_mean_s;
  return s.opportunistic_jobs_evicted_in_window;
}

}  // namespace

const std::vector<std::string>& ExpectedFigures() {
  static const std::vector<std::string> kFigures = {"finished",
                                                    "preemptions",
                                                    "lost_gpu_hours",
                                                    "partial_gang_evictions",
                                                    "incomplete_gang_gpu_seconds",
                                                    "fair_share_cycles",
                                                    "end_s",
                                                    "queue_delay_p95_high_s",
                                                    "queue_delay_p95_low_s",
                                                    "jct_mean_s",
                                                    "opportunistic_jobs_evicted_in_window"};
  return kFigures;
}

absl::StatusOr<TenantScenario> ParseTenantScenario(std::string_view text, const std::string& file) {
  return Parser(text, file).Run();
}

std::vector<std::string> CheckTenantScenario(const TenantScenario& scenario) {
  std::vector<std::string> out;
  for (const TenantExpectation& e : scenario.expectations) {
    const TenantSummary s =
        RunTenantReplay(scenario.workload, *TenantPolicyNamed(e.policy), scenario.options, 1);
    const std::string where = util::Cat(scenario.file, ":", e.line, ": ", e.policy, ": ");
    for (const auto& [name, want] : e.figures) {
      const double got = Figure(s, name);
      if (std::abs(got - want) > 1e-6 * std::max(1.0, std::abs(want))) {
        out.push_back(util::Cat(where, name, " expected ", Num(want), ", got ", Num(got)));
      }
    }
    if (!e.check_evicted) continue;
    std::vector<std::string> got;
    for (int id : s.evictions) got.push_back(scenario.job_names[static_cast<size_t>(id)]);
    if (got != e.evicted) {
      std::string want_text, got_text;
      for (const std::string& n : e.evicted)
        util::Append(want_text, want_text.empty() ? "" : ",", n);
      for (const std::string& n : got) util::Append(got_text, got_text.empty() ? "" : ",", n);
      out.push_back(
          util::Cat(where, "evicted expected \"", want_text, "\", got \"", got_text, "\""));
    }
  }
  return out;
}

}  // namespace gpuplane::sim
