#include "cli/simulate_tenants.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <thread>

#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "cli/tenant_report.h"
#include "nlohmann/json.hpp"
#include "sim/daynight.h"
#include "sim/openb_tenants.h"
#include "sim/philly.h"
#include "sim/tenant_replay.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct Stat {
  double mean = 0, sd = 0;
};

// Mean and sample standard deviation of one figure over the seeds' runs.
template <typename T>
Stat Over(const std::vector<sim::TenantSummary>& runs, T sim::TenantSummary::*field) {
  Stat s;
  for (const sim::TenantSummary& r : runs) s.mean += static_cast<double>(r.*field);
  s.mean /= static_cast<double>(runs.size());
  for (const sim::TenantSummary& r : runs) {
    const double d = static_cast<double>(r.*field) - s.mean;
    s.sd += d * d;
  }
  s.sd = runs.size() > 1 ? std::sqrt(s.sd / static_cast<double>(runs.size() - 1)) : 0;
  return s;
}

// One policy's figures over the seeds; `without`: the same runs without opportunistic work
// (empty when the workload has none).
nlohmann::ordered_json SummaryJson(const std::string& policy,
                                   const std::vector<sim::TenantSummary>& runs,
                                   const std::vector<sim::TenantSummary>& without) {
  using S = sim::TenantSummary;
  const double opportunistic = Over(runs, &S::opportunistic_evictions_per_window).mean;
  nlohmann::ordered_json out = {
      {"policy", policy},
      {"jobs", runs.front().jobs},
      {"jct_mean_s", Over(runs, &S::jct_mean_s).mean},
      {"jct_p99_s", Over(runs, &S::jct_p99_s).mean},
      {"queue_delay_p95_s",
       {{"high", Over(runs, &S::queue_delay_p95_high_s).mean},
        {"low", Over(runs, &S::queue_delay_p95_low_s).mean}}},
      {"alloc_while_queued", Over(runs, &S::alloc_while_queued).mean},
      {"jain_min_hourly", Over(runs, &S::jain_min_hourly).mean},
      {"preemptions", Over(runs, &S::preemptions).mean},
      {"lost_gpu_hours", Over(runs, &S::lost_gpu_hours).mean},
      {"partial_gang_evictions", Over(runs, &S::partial_gang_evictions).mean},
      {"incomplete_gang_gpu_seconds", Over(runs, &S::incomplete_gang_gpu_seconds).mean},
      {"fair_share_cycles", Over(runs, &S::fair_share_cycles).mean},
      {"opportunistic_evictions_per_window",
       opportunistic < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(opportunistic)},
      {"night_alloc", Over(runs, &S::night_alloc).mean},
      {"day_alloc", Over(runs, &S::day_alloc).mean}};
  if (opportunistic >= 0) {
    out["opportunistic_jobs_evicted_in_window"] =
        Over(runs, &S::opportunistic_jobs_evicted_in_window).mean;
  }
  if (!without.empty()) {
    out["without_opportunistic"] = {{"night_alloc", Over(without, &S::night_alloc).mean},
                                    {"day_alloc", Over(without, &S::day_alloc).mean},
                                    {"queue_delay_p95_s",
                                     {{"high", Over(without, &S::queue_delay_p95_high_s).mean},
                                      {"low", Over(without, &S::queue_delay_p95_low_s).mean}}}};
  }
  return out;
}

// Per policy: the sampled pending jobs' reasons by kind (all seeds), how many would fit
// without their blockers, and one example text per kind.
nlohmann::ordered_json ReasonsJson(const std::vector<std::string>& policies,
                                   const std::vector<std::vector<sim::TenantSummary>>& runs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < policies.size(); ++i) {
    std::map<std::string, int> by_kind;
    std::map<std::string, std::string> example;
    int samples = 0, fits = 0;
    for (const sim::TenantSummary& r : runs[i]) {
      for (const sim::PendingSample& p : r.samples) {
        const std::string kind = sim::KindName(p.reason.kind);
        by_kind[kind] += 1;
        example.try_emplace(kind, p.reason.text);
        samples += 1;
        fits += p.fits_without_blockers ? 1 : 0;
      }
    }
    out.push_back({{"policy", policies[i]},
                   {"samples", samples},
                   {"fit_without_blockers", fits},
                   {"by_kind", by_kind},
                   {"examples", example}});
  }
  return out;
}

// printf into a string (one line of a table; each under 1,024 characters).
__attribute__((format(printf, 2, 3))) void Appendf(std::string& out, const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  out += buf;
}

std::string Cell(Stat s, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f ± %.*f", precision, s.mean, precision, s.sd);
  return buf;
}

std::string TableText(const std::vector<std::string>& policies,
                      const std::vector<std::vector<sim::TenantSummary>>& runs) {
  using S = sim::TenantSummary;
  std::string out;
  Appendf(out, "%-9s %9s %18s %18s %16s %16s %12s %12s %14s %16s %8s %8s %16s\n", "policy",
          "finished", "JCT mean h", "JCT p99 h", "wait p95 hi h", "wait p95 lo h", "alloc|wait",
          "Jain min/h", "preemptions", "lost GPU-h", "partial", "cycles", "incomplete GPU-h");
  for (size_t i = 0; i < policies.size(); ++i) {
    const std::vector<S>& r = runs[i];
    auto hours = [](Stat s) { return Stat{s.mean / 3600, s.sd / 3600}; };
    Appendf(out, "%-9s %9.0f %18s %18s %16s %16s %12s %12s %14s %16s %8.0f %8.0f %16s\n",
            policies[i].c_str(), Over(r, &S::finished).mean,
            Cell(hours(Over(r, &S::jct_mean_s)), 2).c_str(),
            Cell(hours(Over(r, &S::jct_p99_s)), 1).c_str(),
            Cell(hours(Over(r, &S::queue_delay_p95_high_s)), 2).c_str(),
            Cell(hours(Over(r, &S::queue_delay_p95_low_s)), 2).c_str(),
            Cell(Over(r, &S::alloc_while_queued), 3).c_str(),
            Cell(Over(r, &S::jain_min_hourly), 3).c_str(),
            Cell(Over(r, &S::preemptions), 0).c_str(), Cell(Over(r, &S::lost_gpu_hours), 0).c_str(),
            Over(r, &S::partial_gang_evictions).mean, Over(r, &S::fair_share_cycles).mean,
            Cell(hours(Over(r, &S::incomplete_gang_gpu_seconds)), 0).c_str());
  }
  return out;
}

// The opportunistic figures beside the same runs without opportunistic work.
std::string OpportunisticText(const std::vector<std::string>& policies,
                              const std::vector<std::vector<sim::TenantSummary>>& with,
                              const std::vector<std::vector<sim::TenantSummary>>& without) {
  using S = sim::TenantSummary;
  std::string out = "\nopportunistic work (against the same runs without it)\n";
  Appendf(out, "%-9s %16s %16s %8s %16s %16s %16s %16s %18s %18s\n", "policy", "night alloc",
          "without", "points", "day alloc", "without", "evictions/window", "jobs evicted",
          "wait p95 hi h", "without");
  for (size_t i = 0; i < policies.size(); ++i) {
    const double points =
        100 * (Over(with[i], &S::night_alloc).mean - Over(without[i], &S::night_alloc).mean);
    auto hours = [](Stat s) { return Stat{s.mean / 3600, s.sd / 3600}; };
    Appendf(out, "%-9s %16s %16s %+8.1f %16s %16s %16s %16s %18s %18s\n", policies[i].c_str(),
            Cell(Over(with[i], &S::night_alloc), 3).c_str(),
            Cell(Over(without[i], &S::night_alloc), 3).c_str(), points,
            Cell(Over(with[i], &S::day_alloc), 3).c_str(),
            Cell(Over(without[i], &S::day_alloc), 3).c_str(),
            Cell(Over(with[i], &S::opportunistic_evictions_per_window), 3).c_str(),
            Cell(Over(with[i], &S::opportunistic_jobs_evicted_in_window), 3).c_str(),
            Cell(hours(Over(with[i], &S::queue_delay_p95_high_s)), 3).c_str(),
            Cell(hours(Over(without[i], &S::queue_delay_p95_high_s)), 3).c_str());
  }
  return out;
}

struct Workloads {
  std::string name, title;
  std::vector<sim::TenantWorkload> with;     // per seed
  std::vector<sim::TenantWorkload> without;  // per seed, without opportunistic work (daynight)
};

absl::StatusOr<Workloads> MakeWorkloads(const TenantReplayArgs& args) {
  Workloads out;
  if (args.daynight_days > 0) {
    out.name = util::Cat("daynight:", args.daynight_days);
    for (uint64_t seed : args.seeds) {
      out.with.push_back(sim::DayNight({args.daynight_days, args.cluster_gpus, true}, seed));
      out.without.push_back(sim::DayNight({args.daynight_days, args.cluster_gpus, false}, seed));
    }
    out.title = util::Cat("daynight: ", out.with.front().jobs.size(), " jobs (",
                          out.without.front().jobs.size(), " without opportunistic work)");
    return out;
  }
  if (!args.openb.empty()) {
    absl::StatusOr<sim::PodTrace> pods = sim::ReadOpenbPods(args.openb);
    if (!pods.ok()) return pods.status();
    for (const std::string& p : pods->problems) std::fprintf(stderr, "warning: %s\n", p.c_str());
    if (std::none_of(pods->pods.begin(), pods->pods.end(),
                     [](const auto& p) { return p.num_gpu > 0; })) {
      return absl::InvalidArgumentError(
          util::Cat(args.openb, ": no GPU pods to replay (", pods->pods.size(),
                    " pods, none with num_gpu above 0; ", pods->problems.size(),
                    " rows skipped): give an openb pod list such as openb_pod_list_default.csv"));
    }
    out.name = "openb:" + args.openb;
    for (size_t i = 0; i < args.seeds.size(); ++i) {  // the trace is the same for every seed
      out.with.push_back(sim::FromOpenb(*pods, args.cluster_gpus, true));
      out.without.push_back(sim::FromOpenb(*pods, args.cluster_gpus, false));
    }
    out.title = util::Cat("openb: ", out.with.front().jobs.size(), " GPU pods (",
                          out.without.front().jobs.size(), " without best-effort work)");
    return out;
  }
  absl::StatusOr<sim::PhillyTrace> trace = sim::ReadPhilly(args.trace);
  if (!trace.ok()) return trace.status();
  for (const std::string& p : trace->problems) std::fprintf(stderr, "warning: %s\n", p.c_str());
  if (trace->jobs.empty()) {
    return absl::InvalidArgumentError(util::Cat(
        args.trace, ": no jobs to replay (",
        trace->problems.empty()
            ? std::string("the file has no rows")
            : util::Cat(trace->problems.size(), " rows skipped, as warned above"),
        "): give a Philly job trace with rows of timestamp, duration, num_gpus, gpu_time, "
        "cluster"));
  }
  const auto too_big = std::count_if(trace->jobs.begin(), trace->jobs.end(),
                                     [&](const auto& j) { return j.gpus > args.cluster_gpus; });
  if (too_big > 0) {
    std::fprintf(stderr,
                 "warning: %ld jobs need more than the cluster's %d GPUs; they never start\n",
                 static_cast<long>(too_big), args.cluster_gpus);
  }
  out.name = "philly:" + args.trace;
  out.title = util::Cat("philly: ", trace->jobs.size(), " jobs");
  for (uint64_t seed : args.seeds) {
    out.with.push_back(sim::FromPhilly(*trace, args.cluster_gpus, args.high_fraction, seed));
  }
  return out;
}

// --checkpoint-on-signal in seconds; -1 when not given.
absl::StatusOr<double> SignalSaveSeconds(const TenantReplayArgs& args, double grace) {
  if (args.checkpoint_on_signal.empty()) return -1;
  absl::StatusOr<double> save =
      DurationSeconds("--checkpoint-on-signal", args.checkpoint_on_signal, true);
  if (save.ok() && *save > grace) {
    std::fprintf(stderr,
                 "warning: --checkpoint-on-signal %s is longer than --preemption-grace %s: no "
                 "victim has the time to save; give a longer grace\n",
                 args.checkpoint_on_signal.c_str(), args.preemption_grace.c_str());
  }
  return save;
}

// Each seed's workloads, with and without opportunistic work, draw the same jobs.
void MarkSignalSavers(Workloads& w, const TenantReplayArgs& args) {
  for (size_t i = 0; i < args.seeds.size(); ++i) {
    sim::DrawSignalSavers(w.with[i], args.checkpoint_on_signal_share, args.seeds[i]);
    if (i < w.without.size()) {
      sim::DrawSignalSavers(w.without[i], args.checkpoint_on_signal_share, args.seeds[i]);
    }
  }
}

// The replay's options from the flags; errors name the flag.
absl::StatusOr<sim::TenantRunOptions> RunOptions(const TenantReplayArgs& args) {
  absl::StatusOr<double> interval =
      DurationSeconds("--checkpoint-interval", args.checkpoint_interval);
  if (!interval.ok()) return interval.status();
  absl::StatusOr<double> window = DurationSeconds("--guarantee-window", args.guarantee_window);
  if (!window.ok()) return window.status();
  absl::StatusOr<double> min_runtime = DurationSeconds("--min-runtime", args.min_runtime, true);
  if (!min_runtime.ok()) return min_runtime.status();
  absl::StatusOr<double> half_life =
      DurationSeconds("--usage-half-life", args.usage_half_life, true);
  if (!half_life.ok()) return half_life.status();
  absl::StatusOr<double> grace = DurationSeconds("--preemption-grace", args.preemption_grace, true);
  if (!grace.ok()) return grace.status();
  absl::StatusOr<double> signal_save = SignalSaveSeconds(args, *grace);
  if (!signal_save.ok()) return signal_save.status();
  if (args.cluster_gpus < sim::kPodGpus || args.cluster_gpus % sim::kPodGpus != 0) {
    return absl::InvalidArgumentError(
        util::Cat("--cluster-gpus ", args.cluster_gpus,
                  " must be a positive multiple of 8 (whole 8-GPU nodes)"));
  }
  sim::TenantRunOptions options;
  options.nodes = args.cluster_gpus / sim::kPodGpus;
  options.checkpoint_interval = *interval;
  options.restore_seconds = args.restore_seconds;
  options.guarantee_window = *window;
  options.min_runtime = *min_runtime;
  options.usage_half_life = *half_life;
  options.preemption_grace = *grace;
  options.signal_save_seconds = *signal_save;
  options.reason_samples = 200;
  return options;
}

struct Runs {
  std::vector<std::vector<sim::TenantSummary>> with, without;  // per policy, per seed
};

// Every policy and seed (and the runs without opportunistic work, when the workload has them)
// on args.parallel threads; reasons are sampled in the runs with it only.
Runs RunAll(const Workloads& w, const std::vector<sim::TenantPolicy>& configs,
            const sim::TenantRunOptions& options, const TenantReplayArgs& args) {
  sim::TenantRunOptions baseline_options = options;
  baseline_options.reason_samples = 0;
  // Run i: policy i / (seeds x variants), then seed, then with (0) or without (1).
  const size_t variants = w.without.empty() ? 1 : 2;
  const size_t per_policy = args.seeds.size() * variants;
  const size_t n = configs.size() * per_policy;
  std::vector<sim::TenantSummary> results(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      const size_t seed = i % per_policy / variants;
      const bool with = i % variants == 0;
      results[i] =
          sim::RunTenantReplay(with ? w.with[seed] : w.without[seed], configs[i / per_policy],
                               with ? options : baseline_options, args.seeds[seed]);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(args.parallel, static_cast<int>(n)); ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  Runs out{std::vector<std::vector<sim::TenantSummary>>(configs.size()),
           std::vector<std::vector<sim::TenantSummary>>(configs.size())};
  for (size_t i = 0; i < n; ++i) {
    (i % variants == 0 ? out.with : out.without)[i / per_policy].push_back(std::move(results[i]));
  }
  return out;
}

}  // namespace

int RunTenantReplays(const TenantReplayArgs& args) {
  absl::StatusOr<sim::TenantRunOptions> run_options = RunOptions(args);
  if (!run_options.ok()) return Fail("simulate", run_options.status());
  const sim::TenantRunOptions& options = *run_options;
  const bool signal = options.signal_save_seconds >= 0;
  std::vector<std::string> policies =
      args.policies.empty() ? sim::TenantPolicyNames() : args.policies;
  std::vector<sim::TenantPolicy> configs;
  for (const std::string& name : policies) {
    absl::StatusOr<sim::TenantPolicy> p = sim::TenantPolicyNamed(name);
    if (!p.ok()) return Fail("simulate", p.status());
    configs.push_back(*p);
  }
  absl::StatusOr<Workloads> w = MakeWorkloads(args);
  if (!w.ok()) return Fail("simulate", w.status());
  if (signal) MarkSignalSavers(*w, args);
  const Runs runs = RunAll(*w, configs, options, args);
  const std::vector<std::vector<sim::TenantSummary>>& by_policy = runs.with;
  const std::vector<std::vector<sim::TenantSummary>>& without = runs.without;
  const size_t variants = w->without.empty() ? 1 : 2;
  const std::string& note = w->with.front().guarantee_note;
  std::fprintf(stderr, "%s\n", note.c_str());
  std::string title;
  Appendf(title, "%s on %d GPUs, checkpoint every %s, restore %.0f s, %zu seeds", w->title.c_str(),
          args.cluster_gpus, args.checkpoint_interval.c_str(), args.restore_seconds,
          args.seeds.size());
  if (signal) {
    Appendf(title, ", %g%% of jobs save on the termination signal in %s (grace %s)",
            args.checkpoint_on_signal_share * 100, args.checkpoint_on_signal.c_str(),
            args.preemption_grace.c_str());
  }
  std::string tables = TableText(policies, by_policy);
  if (variants == 2) tables += OpportunisticText(policies, by_policy, without);
  if (!args.report.empty()) {
    absl::Status s = WriteTenantHtml(
        TenantReport{title, note, tables, w->with.front().tenants, policies, by_policy},
        args.report);
    if (!s.ok()) return Fail("simulate", s);
  }
  if (args.output == "json") {
    nlohmann::ordered_json summary = nlohmann::ordered_json::array();
    for (size_t i = 0; i < configs.size(); ++i)
      summary.push_back(SummaryJson(policies[i], by_policy[i], without[i]));
    nlohmann::ordered_json out = {
        {"workload", w->name},
        {"cluster_gpus", args.cluster_gpus},
        {"checkpoint_interval_s", options.checkpoint_interval},
        {"restore_seconds", options.restore_seconds},
        {"guarantee_window_s", options.guarantee_window},
        {"min_runtime_s", options.min_runtime},
        {"usage_half_life_s", options.usage_half_life},
        {"preemption_grace_s", options.preemption_grace},
        {"checkpoint_on_signal_s", options.signal_save_seconds},
        {"checkpoint_on_signal_share", signal ? args.checkpoint_on_signal_share : 0},
        {"seeds", args.seeds},
        {"note", note},
        {"summary", summary},
        {"pending_reasons", ReasonsJson(policies, by_policy)}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s\n%s\n%s", title.c_str(), note.c_str(), tables.c_str());
  }
  return kExitOk;
}

}  // namespace gpuplane::cli
