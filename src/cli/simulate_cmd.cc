// `gpuplane simulate`: replays GPU workloads on a modelled cluster through the real allocator
// and the placement policies, and reports allocation, fragmentation and waiting.
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/loader.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/simulate_output.h"
#include "cli/simulate_tenants.h"
#include "cli/timings.h"
#include "model/inventory.h"
#include "nlohmann/json.hpp"
#include "sched/fragmentation.h"
#include "sched/policy.h"
#include "sim/claim_replay.h"
#include "sim/cluster_generator.h"
#include "sim/dra_nodes.h"
#include "sim/experiment.h"
#include "sim/replay.h"
#include "sim/scenario.h"
#include "sim/trace.h"
#include "sim/workload.h"
#include "sim/workload_generator.h"
#include "util/clock.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct SimulateOptions {
  std::string nodes;                 // openb node CSV
  std::string spot_nodes;            // spot-GPU node CSV
  std::string generate;              // generator mix
  std::vector<std::string> objects;  // DRA objects
  std::string pods;                  // openb pod CSV
  std::string workload;              // "generate": the built-in job generator (replay mode)
  int64_t jobs = 10000;
  double load = 0.85;
  std::string mode = "fill";
  std::vector<std::string> policies;
  std::string seeds;  // default: 42-51 in fill mode, 42 in replay mode
  double tune = 1.3;
  std::string output = "text";
  std::string report;
  bool strict = false;
  bool no_timing = false;
  int parallel = 0;  // runs at once; 0: all cores
  // Multi-tenant replay (--workload philly:FILE).
  int cluster_gpus = 512;
  std::string checkpoint_interval = "30m";
  double restore_seconds = 60;
  double high_fraction = 0.2;
  std::string guarantee_window = "1h";
  std::string min_runtime = "0s";
  std::string preemption_grace = "0s";
  std::string checkpoint_on_signal;  // a duration; empty: no job saves on the signal
  double checkpoint_on_signal_share = 1;
  std::string usage_half_life = "0s";
};

absl::StatusOr<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    size_t dash = item.find('-');
    try {
      size_t used = 0;
      if (dash == std::string::npos) {
        out.push_back(std::stoull(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      } else {
        uint64_t a = std::stoull(item.substr(0, dash)), b = std::stoull(item.substr(dash + 1));
        if (b < a || b - a > 10000) throw std::invalid_argument(item);
        for (uint64_t s = a; s <= b; ++s) out.push_back(s);
      }
    } catch (const std::exception&) {
      return absl::InvalidArgumentError(
          util::Cat("--seeds \"", text, "\": expected seeds like 42, 42-51 or 1,5,9 (bad item \"",
                    item, "\")"));
    }
    start = comma + 1;
  }
  return out;
}

absl::StatusOr<std::vector<sim::TraceNode>> GeneratedNodes(const std::string& mix) {
  absl::StatusOr<sim::ClusterSpec> spec = sim::ParseClusterMix(mix);
  if (!spec.ok()) return spec.status();
  std::vector<sim::TraceNode> out;
  for (const sim::NodeGroupSpec& g : spec->groups) {
    for (int i = 0; i < g.nodes; ++i) {
      sim::TraceNode n;
      n.name = util::Cat(g.product, g.dynamic_mig ? "-mig-" : "-", i);
      n.model = g.product;
      n.gpus = g.gpus_per_node;
      n.cpu_milli = int64_t{16000} * g.gpus_per_node;
      n.memory_mib = int64_t{65536} * g.gpus_per_node;
      n.source = util::Cat("--generate ", mix);
      out.push_back(std::move(n));
    }
  }
  return out;
}

// A progress bar on stderr, only when stderr is a terminal.
sim::Progress ProgressBar(const char* what) {
  if (isatty(fileno(stderr)) == 0) return nullptr;
  return [what](size_t done, size_t total) {
    const int width = 30;
    int filled = static_cast<int>(width * done / std::max<size_t>(1, total));
    std::fprintf(stderr, "\r%s [%-*s] %zu/%zu", what, width, std::string(filled, '#').c_str(), done,
                 total);
    if (done == total) std::fprintf(stderr, "\r%*s\r", width + 40, "");
    std::fflush(stderr);
  };
}

int SimulateFail(const absl::Status& s) { return cli::Fail("simulate", s); }

void Report(const std::vector<std::string>& problems, const char* what, bool quiet) {
  if (problems.empty()) return;
  size_t shown = quiet ? 0 : std::min<size_t>(problems.size(), 10);
  for (size_t i = 0; i < shown; ++i) std::fprintf(stderr, "%s\n", problems[i].c_str());
  std::fprintf(stderr, "gpuplane simulate: %zu %s%s\n", problems.size(), what,
               shown < problems.size() ? " (first 10 shown)" : "");
}

std::vector<std::string> Policies(const SimulateOptions& opt) {
  if (!opt.policies.empty()) return opt.policies;
  if (opt.mode == "replay") return {"k8s", "gpuplane"};
  return {"bestfit", "fgd", "gpuplane"};
}

int Jobs(const SimulateOptions& opt) {
  return opt.parallel > 0 ? opt.parallel
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Replay output: the HTML report when asked for, then the table or JSON on stdout.
int WriteReplay(const SimulateOptions& opt, const ReplayReport& report) {
  if (!opt.report.empty()) {
    absl::Status s = WriteReplayHtml(report, opt.report);
    if (!s.ok()) return SimulateFail(s);
  }
  std::string out = opt.output == "json" ? ReplayJson(report) : ReplayTable(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// Replay runs (policies x seeds), in parallel, results in policy-then-seed order.
int Replay(const SimulateOptions& opt, std::shared_ptr<const sim::SimCluster> cluster,
           const std::vector<sim::ReplayJob>& jobs, const sched::Workload& workload,
           const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
           const std::string& name, int64_t problems) {
  size_t n = policies.size() * seeds.size();
  std::vector<absl::StatusOr<sim::ReplayRun>> results(n, absl::UnknownError("not run"));
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mu;
  sim::Progress progress = ProgressBar("replay runs");
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      results[i] = sim::RunReplay(cluster, jobs, workload, policies[i / seeds.size()],
                                  sim::ReplayOptions{seeds[i % seeds.size()], 200});
      std::lock_guard<std::mutex> lock(mu);
      if (progress) progress(++done, n);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(Jobs(opt), static_cast<int>(n)); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  ReplayReport report{name, cluster->empty_view().total_milli, {}, problems};
  for (absl::StatusOr<sim::ReplayRun>& r : results) {
    if (!r.ok()) return SimulateFail(r.status());
    report.runs.push_back(std::move(*r));
  }
  return WriteReplay(opt, report);
}

int RunGeneratedReplay(const SimulateOptions& opt,
                       const std::shared_ptr<const sim::SimCluster>& cluster,
                       const std::vector<uint64_t>& seeds) {
  std::vector<sim::ReplayJob> jobs =
      sim::GenerateJobs(sim::JobMixSpec{opt.jobs, opt.load, seeds.at(0)}, cluster->empty_view());
  std::vector<sched::PodDemand> demands;
  demands.reserve(jobs.size());
  for (const sim::ReplayJob& j : jobs) demands.push_back(j.demand);
  sched::Workload workload = sched::Workload::FromPods(demands);
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].demand.type = demands[i].type;
  std::vector<std::string> policies = Policies(opt);
  for (const std::string& p : policies) {
    absl::StatusOr<std::unique_ptr<sched::Policy>> made = sched::MakePolicy(p, workload);
    if (!made.ok()) return SimulateFail(made.status());
  }
  char load[32];
  std::snprintf(load, sizeof load, "%g", opt.load);  // 0.85, not 0.850000
  return Replay(opt, cluster, jobs, workload, policies, seeds,
                util::Cat("generated ", opt.jobs, " jobs at load ", load), 0);
}

// No cluster and no workload given: the built-in scenario.
int RunDefaultScenario(const SimulateOptions& opt) {
  sim::ScenarioSpec spec;
  if (!opt.seeds.empty()) {
    absl::StatusOr<std::vector<uint64_t>> seeds = ParseSeeds(opt.seeds);
    if (!seeds.ok()) return SimulateFail(seeds.status());
    spec.seed = seeds->at(0);
  }
  absl::StatusOr<std::vector<sim::ScenarioResult>> results = sim::RunDefaultScenario(spec);
  if (!results.ok()) return SimulateFail(results.status());
  std::string description = sim::DescribeDefaultScenario(spec);
  if (!opt.report.empty()) {
    absl::Status s = WriteScenarioHtml(description, *results, opt.report);
    if (!s.ok()) return SimulateFail(s);
  }
  std::string out = opt.output == "json" ? ScenarioJson(description, *results)
                                         : ScenarioTable(description, *results);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// --workload FILE: Pods with claims, replayed on the cluster's own DRA objects.
int RunClaimReplay(const SimulateOptions& opt) {
  if (opt.mode != "replay") {
    return SimulateFail(absl::InvalidArgumentError(
        "--workload FILE (Pods with claims) replays arrivals and departures: add --mode replay"));
  }
  std::vector<api::SourcedObject> objects;
  std::vector<std::string> problems;
  if (!opt.objects.empty() && opt.generate.empty() && opt.nodes.empty() && opt.spot_nodes.empty()) {
    absl::StatusOr<api::LoadResult> read = api::LoadPaths(opt.objects);
    if (!read.ok()) return SimulateFail(read.status());
    api::LoadResult& loaded = *read;
    for (const api::Diagnostic& d : loaded.diagnostics) {
      if (d.is_error()) problems.push_back(d.ToString());
    }
    objects = std::move(loaded.objects);
  } else if (!opt.generate.empty() && opt.objects.empty() && opt.nodes.empty() &&
             opt.spot_nodes.empty()) {
    absl::StatusOr<sim::ClusterSpec> spec = sim::ParseClusterMix(opt.generate);
    if (!spec.ok()) return SimulateFail(spec.status());
    absl::StatusOr<sim::GeneratedCluster> cluster = sim::GenerateCluster(*spec);
    if (!cluster.ok()) return SimulateFail(cluster.status());
    objects = sim::ToObjects(*cluster);
  } else {
    return SimulateFail(absl::InvalidArgumentError(
        "--workload FILE (Pods with claims) needs a DRA cluster: --objects DIR or --generate MIX "
        "(trace clusters have no DRA attributes for the claims to select)"));
  }
  model::Inventory inventory = model::Inventory::Build(objects);
  absl::StatusOr<sim::ClaimWorkload> read = sim::LoadClaimWorkload({opt.workload});
  if (!read.ok()) return SimulateFail(read.status());
  sim::ClaimWorkload& workload = *read;
  problems.insert(problems.end(), workload.problems.begin(), workload.problems.end());
  std::vector<std::string> policies =
      opt.policies.empty() ? std::vector<std::string>{"k8s", "gpuplane"} : opt.policies;
  std::string name = opt.workload.substr(opt.workload.find_last_of('/') + 1);
  ReplayReport report{util::Cat(name, " (Pods with claims)"),
                      std::llround(sim::GpuCapacity(inventory) * 1000),
                      {},
                      0};
  // The first run drops the jobs no node can ever run; later runs reuse what it kept.
  std::vector<sim::ClaimJob>& jobs = workload.jobs;
  for (size_t i = 0; i < policies.size(); ++i) {
    std::vector<std::string> skipped;
    absl::StatusOr<sim::ReplayRun> r = sim::ReplayClaims(objects, jobs, policies[i], skipped);
    if (!r.ok()) return SimulateFail(r.status());
    if (i == 0) problems.insert(problems.end(), skipped.begin(), skipped.end());
    report.runs.push_back(std::move(*r));
  }
  report.input_problems = static_cast<int64_t>(problems.size());
  Report(problems, "input problems (objects or jobs skipped)", false);
  if (opt.strict && !problems.empty()) {
    std::fprintf(stderr, "gpuplane simulate: --strict: stopping on input problems\n");
    return kExitProblems;
  }
  return WriteReplay(opt, report);
}

// The cluster's nodes from the one source given (problems collected); `exit` >= 0 when the
// command must stop with that code (already reported).
struct ClusterNodes {
  std::vector<sim::TraceNode> nodes;
  int exit = -1;
};

ClusterNodes ReadCluster(const SimulateOptions& opt, std::vector<std::string>& problems) {
  ClusterNodes out;
  absl::StatusOr<sim::NodeTrace> nt = !opt.nodes.empty() ? sim::ReadOpenbNodes(opt.nodes)
                                      : !opt.spot_nodes.empty()
                                          ? sim::ReadSpotNodes(opt.spot_nodes)
                                          : absl::StatusOr<sim::NodeTrace>(sim::NodeTrace{});
  if (!nt.ok()) return {{}, SimulateFail(nt.status())};
  out.nodes = std::move(nt->nodes);
  problems = std::move(nt->problems);
  if (!opt.objects.empty()) {
    absl::StatusOr<api::LoadResult> read = api::LoadPaths(opt.objects);
    if (!read.ok()) return {{}, SimulateFail(read.status())};
    api::LoadResult& loaded = *read;
    for (const api::Diagnostic& d : loaded.diagnostics) {
      if (d.is_error()) problems.push_back(d.ToString());
    }
    if (loaded.errors() > 0 && opt.strict) {
      Report(problems, "errors in the DRA objects", false);
      return {{}, kExitProblems};
    }
    out.nodes = sim::NodesFromObjects(loaded.objects);
    if (out.nodes.empty()) {
      return {{},
              SimulateFail(absl::InvalidArgumentError(
                  "--objects: no node with GPUs among the objects (expected ResourceSlices of "
                  "GPUs)"))};
    }
  }
  if (!opt.generate.empty()) {
    absl::StatusOr<std::vector<sim::TraceNode>> g = GeneratedNodes(opt.generate);
    if (!g.ok()) return {{}, SimulateFail(g.status())};
    out.nodes = std::move(*g);
  }
  return out;
}

int RunFillMode(const SimulateOptions& opt, const std::shared_ptr<const sim::SimCluster>& cluster,
                const sim::Demands& demands, const sched::Workload& workload,
                const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
                const std::string& trace, int64_t problems) {
  absl::StatusOr<std::vector<sim::FillRun>> runs =
      sim::RunFills(cluster, demands.pods, workload, policies, seeds, opt.tune, Jobs(opt),
                    ProgressBar("fill runs"));
  if (!runs.ok()) return SimulateFail(runs.status());
  const int64_t total = cluster->empty_view().total_milli;
  FillReport report{trace, total, *runs, sim::Summarize(*runs, total), problems};
  if (!opt.report.empty()) {
    absl::Status s = WriteFillHtml(report, opt.report);
    if (!s.ok()) return SimulateFail(s);
  }
  std::string out = opt.output == "json" ? FillJson(report) : FillTable(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// Fill or replay of an openb pod trace on the cluster.
int RunPodTrace(const SimulateOptions& opt, const std::shared_ptr<const sim::SimCluster>& cluster,
                const std::vector<uint64_t>& seeds, std::vector<std::string>& problems) {
  absl::StatusOr<sim::PodTrace> pt = sim::ReadOpenbPods(opt.pods);
  if (!pt.ok()) return SimulateFail(pt.status());
  problems.insert(problems.end(), pt->problems.begin(), pt->problems.end());
  sim::Demands demands = sim::ToDemands(pt->pods, cluster->empty_view());
  problems.insert(problems.end(), demands.problems.begin(), demands.problems.end());
  Report(problems, "input problems (rows skipped or adjusted)", false);
  if (opt.strict && !problems.empty()) {
    std::fprintf(stderr, "gpuplane simulate: --strict: stopping on input problems\n");
    return kExitProblems;
  }
  sched::Workload workload = sched::Workload::FromPods(demands.pods);
  std::vector<std::string> policies = Policies(opt);
  for (const std::string& p : policies) {
    absl::StatusOr<std::unique_ptr<sched::Policy>> made = sched::MakePolicy(p, workload);
    if (!made.ok()) return SimulateFail(made.status());
  }
  std::string trace = opt.pods.substr(opt.pods.find_last_of('/') + 1);
  const auto problem_count = static_cast<int64_t>(problems.size());
  if (opt.mode != "replay") {
    return RunFillMode(opt, cluster, demands, workload, policies, seeds, trace, problem_count);
  }
  std::vector<double> creation, deletion;  // of the pods ToDemands kept
  for (size_t i : demands.trace_index) {
    creation.push_back(pt->pods[i].creation);
    deletion.push_back(pt->pods[i].deletion);
  }
  std::vector<sim::ReplayJob> jobs = sim::JobsFromTrace(demands.pods, creation, deletion);
  return Replay(opt, cluster, jobs, workload, policies, seeds, trace, problem_count);
}

// The multi-tenant replay: philly:FILE, openb:FILE or daynight[:DAYS].
int RunTenants(const SimulateOptions& opt) {
  absl::StatusOr<std::vector<uint64_t>> seeds = ParseSeeds(opt.seeds.empty() ? "42" : opt.seeds);
  if (!seeds.ok()) return SimulateFail(seeds.status());
  TenantReplayArgs args;
  if (opt.workload.starts_with("philly:")) {
    args.trace = opt.workload.substr(std::string_view("philly:").size());
  } else if (opt.workload.starts_with("openb:")) {
    args.openb = opt.workload.substr(std::string_view("openb:").size());
  } else {
    args.daynight_days = 7;
    if (opt.workload != "daynight") {
      const std::string days = opt.workload.substr(std::string_view("daynight:").size());
      int value = 0;
      const auto [end, err] = std::from_chars(days.data(), days.data() + days.size(), value);
      if (err != std::errc() || end != days.data() + days.size() || value < 1 || value > 3650) {
        return SimulateFail(absl::InvalidArgumentError(util::Cat(
            "--workload \"", opt.workload,
            "\": the day/night workload takes a number of days from 1 to 3650, as daynight:7")));
      }
      args.daynight_days = value;
    }
  }
  args.guarantee_window = opt.guarantee_window;
  args.min_runtime = opt.min_runtime;
  args.preemption_grace = opt.preemption_grace;
  args.checkpoint_on_signal = opt.checkpoint_on_signal;
  args.checkpoint_on_signal_share = opt.checkpoint_on_signal_share;
  args.usage_half_life = opt.usage_half_life;
  args.policies = opt.policies;
  args.seeds = *seeds;
  args.cluster_gpus = opt.cluster_gpus;
  args.checkpoint_interval = opt.checkpoint_interval;
  args.restore_seconds = opt.restore_seconds;
  args.high_fraction = opt.high_fraction;
  args.output = opt.output;
  args.parallel = Jobs(opt);
  args.report = opt.report;
  return RunTenantReplays(args);
}

int RunSimulate(const SimulateOptions& opt) {
  if (opt.workload.starts_with("philly:") || opt.workload.starts_with("openb:") ||
      opt.workload == "daynight" || opt.workload.starts_with("daynight:")) {
    return RunTenants(opt);
  }
  if (!opt.workload.empty() && opt.workload != "generate") return RunClaimReplay(opt);
  int sources = (opt.nodes.empty() ? 0 : 1) + (opt.spot_nodes.empty() ? 0 : 1) +
                (opt.generate.empty() ? 0 : 1) + (opt.objects.empty() ? 0 : 1);
  if (sources == 0 && opt.pods.empty() && opt.workload.empty()) return RunDefaultScenario(opt);
  if (sources != 1) {
    return SimulateFail(absl::InvalidArgumentError(
        "give exactly one cluster: --nodes FILE (openb), --spot-nodes FILE, --objects DIR or "
        "--generate MIX"));
  }
  std::vector<std::string> problems;
  ClusterNodes nodes = ReadCluster(opt, problems);
  if (nodes.exit >= 0) return nodes.exit;
  absl::StatusOr<std::shared_ptr<const sim::SimCluster>> cluster =
      sim::SimCluster::FromNodes(nodes.nodes);
  if (!cluster.ok()) return SimulateFail(cluster.status());
  absl::StatusOr<std::vector<uint64_t>> seeds =
      ParseSeeds(opt.seeds.empty() ? (opt.mode == "fill" ? "42-51" : "42") : opt.seeds);
  if (!seeds.ok()) return SimulateFail(seeds.status());
  if (opt.workload == "generate") {
    if (opt.mode != "replay") {
      return SimulateFail(absl::InvalidArgumentError("--workload generate is for --mode replay"));
    }
    return RunGeneratedReplay(opt, *cluster, *seeds);
  }
  if (opt.pods.empty()) {
    return SimulateFail(absl::InvalidArgumentError("give --pods FILE (or --workload generate)"));
  }
  return RunPodTrace(opt, *cluster, *seeds, problems);
}

// The multi-tenant replay's flags (philly, openb, daynight).
void AddTenantFlags(CLI::App& app, SimulateOptions& o) {
  CLI::App* cmd = &app;
  cmd->add_option("--cluster-gpus", o.cluster_gpus,
                  "Multi-tenant replay: GPUs, as whole 8-GPU nodes")
      ->capture_default_str()
      ->check(CLI::Range(8, 1'000'000));
  cmd->add_option("--checkpoint-interval", o.checkpoint_interval,
                  "Multi-tenant replay: how often jobs checkpoint (30m, 1h)")
      ->capture_default_str();
  cmd->add_option("--restore-seconds", o.restore_seconds,
                  "Multi-tenant replay: seconds a preempted job needs to restore")
      ->capture_default_str()
      ->check(FiniteRange(0, 1e7));
  cmd->add_option("--guarantee-window", o.guarantee_window,
                  "Multi-tenant replay: how long a started opportunistic job is protected (1h)")
      ->capture_default_str();
  cmd->add_option("--min-runtime", o.min_runtime,
                  "Multi-tenant replay: how long a started job is never a victim, under policies "
                  "with min-runtime (kai, gpuplane); 0s: none")
      ->capture_default_str();
  cmd->add_option("--preemption-grace", o.preemption_grace,
                  "Multi-tenant replay: how long a victim runs on after it is chosen, holding "
                  "its GPUs (a checkpoint due within it still lands); 0s: it stops at once")
      ->capture_default_str();
  cmd->add_option("--checkpoint-on-signal", o.checkpoint_on_signal,
                  "Multi-tenant replay: jobs save their state on the termination signal, taking "
                  "this long (2m); a victim whose --preemption-grace covers it loses only the "
                  "restore; default: no job does");
  cmd->add_option("--checkpoint-on-signal-share", o.checkpoint_on_signal_share,
                  "Multi-tenant replay: with --checkpoint-on-signal, the share of jobs that do "
                  "(a seeded draw)")
      ->capture_default_str()
      ->check(FiniteRange(0, 1));
  cmd->add_option("--usage-half-life", o.usage_half_life,
                  "Multi-tenant replay: fair shares lean against GPU use decayed with this "
                  "half-life (KAI's time-based fair share); 0s: they ignore usage")
      ->capture_default_str();
  cmd->add_option("--high-fraction", o.high_fraction,
                  "Multi-tenant replay: fraction of jobs drawn non-preemptible")
      ->capture_default_str()
      ->check(FiniteRange(0, 1));
}

}  // namespace

Command AddSimulateCommand(CLI::App& app) {
  auto opt = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Replay GPU workloads on a modelled cluster through the allocator and policies");
  cmd->add_option("--nodes", opt->nodes, "openb node CSV (sn,cpu_milli,memory_mib,gpu,model)");
  cmd->add_option("--spot-nodes", opt->spot_nodes,
                  "spot-GPU node CSV (gpu_model,gpu_capacity_num,cpu_num,node_name)");
  cmd->add_option("--generate", opt->generate,
                  "Generated cluster, e.g. h100=100,a100-80gb+mig=20x4 (see generate cluster)");
  cmd->add_option("--objects", opt->objects,
                  "Cluster from DRA objects: files or directories with ResourceSlices and Nodes");
  cmd->add_option("--pods", opt->pods, "openb pod CSV");
  cmd->add_option("--mode", opt->mode, "fill (the FGD experiment) or replay (time-driven)")
      ->check(CLI::IsMember({"fill", "replay"}));
  cmd->add_option("--policy", opt->policies,
                  "Policies to compare (repeatable or comma-separated): random, dotprod, "
                  "clustering, packing, bestfit, fgd, k8s, gpuplane; with philly: kube, kai, "
                  "volcano, kueue, yunikorn, gpuplane")
      ->delimiter(',');
  cmd->add_option("--seeds", opt->seeds,
                  "Seeds: 42, 42-51 or 1,5,9 (default 42-51 in fill mode, 42 in replay mode)");
  cmd->add_option("--workload", opt->workload,
                  "Replay mode: \"generate\" (the built-in job generator), philly:FILE (the "
                  "multi-tenant replay of a Philly job trace), openb:FILE (an openb pod list, its "
                  "best-effort pods as opportunistic work), daynight[:DAYS] (the multi-tenant "
                  "day/night workload with opportunistic work, 7 days), or a YAML/JSON/JSONL "
                  "file of Pods with claims (annotations sim.gpuplane.io/arrival and /duration, "
                  "seconds) on --objects or --generate");
  cmd->add_option("--jobs", opt->jobs, "Generated workload: number of jobs")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  cmd->add_option("--load", opt->load, "Generated workload: mean GPU load to aim for")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 10));
  cmd->add_option("--tune", opt->tune, "Fill mode: workload as a multiple of GPU capacity")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 10));
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--report", opt->report, "Also write a self-contained HTML report here");
  cmd->add_flag("--strict", opt->strict, "Stop on the first input problem instead of skipping");
  // Accepted for old scripts; stdout never has wall-clock times now (they go to stderr).
  cmd->add_flag("--no-timing", opt->no_timing)->group("");
  cmd->add_option("-j,--parallel", opt->parallel, "Runs in parallel (default: all cores)");
  AddTenantFlags(*cmd, *opt);
  return Command{cmd, [opt] {
                   util::Stopwatch watch;
                   int code = RunSimulate(*opt);
                   if (code == kExitOk || code == kExitProblems) {
                     PrintTimings(opt->output == "json", {{"seconds", watch.Elapsed()}});
                   }
                   return code;
                 }};
}

}  // namespace gpuplane::cli
