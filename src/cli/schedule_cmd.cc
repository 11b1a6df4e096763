// `gpuplane schedule` and `gpuplane explain`: one scheduling pass (sched/pass.h) over cluster
// objects and workload objects; decisions per pod, or why one pod or its gang is pending.
// `explain --kubeconfig` runs the pass on a live cluster as `gpuplane scheduler` would
// (kube/scheduler.h), writing nothing.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "acct/sources.h"
#include "api/loader.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/timings.h"
#include "kube/rest_config.h"
#include "kube/scheduler.h"
#include "nlohmann/json.hpp"
#include "sched/checkpoints.h"
#include "sched/pass.h"
#include "util/clock.h"
#include "util/strings.h"
#include "util/suggest.h"

namespace gpuplane::cli {
namespace {

struct ScheduleOptions {
  std::vector<std::string> objects;
  std::vector<std::string> workload;
  std::string policy = "gpuplane";
  std::string output = "text";
  std::string prices;
  bool preempt = false;
  std::string now;  // RFC 3339; "" = the current time
  std::string pod;  // explain only
  // explain on a live cluster: the options of the `gpuplane scheduler` it stands in for
  std::string kubeconfig, context;
  std::string scheduler_name = "gpuplane";
  bool no_preemption = false;
  std::string usage_half_life = "0s";
  std::string lease_namespace = "kube-system";
};

struct Loaded {
  api::LoadResult cluster, work;
  std::map<std::string, double> prices;
};

// Loads every input; on failure prints why (with file and line) and returns the exit code.
int Load(const char* command, const ScheduleOptions& opt, Loaded& out) {
  for (auto [paths, result] : {std::pair{&opt.objects, &out.cluster}, {&opt.workload, &out.work}}) {
    absl::StatusOr<api::LoadResult> read = api::LoadPaths(*paths);
    if (!read.ok()) return Fail(command, read.status());
    *result = std::move(*read);
    for (const api::Diagnostic& d : result->diagnostics) {
      if (d.is_error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    }
    if (result->errors() > 0) return kExitUsage;
  }
  if (!opt.prices.empty()) {
    std::ifstream in(opt.prices);
    if (!in) {
      std::fprintf(stderr, "gpuplane %s: cannot read --prices %s\n", command, opt.prices.c_str());
      return kExitUsage;
    }
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<acct::Prices> p = acct::ParsePrices(text.str(), opt.prices);
    if (!p.ok()) return Fail(command, p.status());
    out.prices = p->per_gpu_hour;
    if (p->default_price) out.prices["default"] = *p->default_price;
  }
  return kExitOk;
}

// `watch`, when given, restarts once the objects are loaded.
int Pass(const char* command, const ScheduleOptions& opt, Loaded& in, sched::PassResult& out,
         util::Stopwatch* watch = nullptr) {
  if (int code = Load(command, opt, in); code != kExitOk) return code;
  sched::SessionOptions options{.policy = opt.policy, .clock = &util::MonotonicClock()};
  if (opt.preempt) {
    std::optional<double> now = opt.now.empty()
                                    ? absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch())
                                    : sched::UnixSeconds(opt.now);
    if (!now) {
      std::fprintf(stderr,
                   "gpuplane %s: --now \"%s\" is not an RFC 3339 time such as "
                   "2026-12-01T12:00:00Z\n",
                   command, opt.now.c_str());
      return kExitUsage;
    }
    options.preemption = {.enabled = true, .now = *now};
  }
  if (watch != nullptr) watch->Restart();
  absl::StatusOr<sched::PassResult> r =
      sched::RunPass(std::move(in.cluster.objects), in.work.objects, options, in.prices);
  if (!r.ok()) return Fail(command, r.status());
  for (const std::string& w : r->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  out = std::move(*r);
  return kExitOk;
}

nlohmann::ordered_json DecisionJson(const sched::PassResult& r, size_t i, bool preempt) {
  const sched::PodInfo& p = r.pods.pods[i];
  const sched::Decision& d = r.decisions[i];
  nlohmann::ordered_json j = {{"pod", p.key}};
  j["gang"] = p.gang >= 0 && r.pods.gangs[p.gang].kind != "Pod"
                  ? nlohmann::ordered_json(r.pods.gangs[p.gang].key)
                  : nlohmann::ordered_json(nullptr);
  j["status"] = std::string(sched::CodeName(d.status.code));
  j["node"] = d.node != model::kNoId
                  ? nlohmann::ordered_json(r.snapshot->inventory().nodes()[d.node].name)
                  : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json claims = nlohmann::ordered_json::array();
  for (const auto& [key, result] : d.claims) {
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (const api::DeviceRequestAllocationResult& x : result.devices.results) {
      results.push_back(
          {{"request", x.request}, {"driver", x.driver}, {"pool", x.pool}, {"device", x.device}});
    }
    claims.push_back({{"name", key}, {"results", results}});
  }
  j["claims"] = claims;
  if (!d.volumes.empty()) {  // unbound WaitForFirstConsumer claims: a volume, or null to provision
    nlohmann::ordered_json volumes = nlohmann::ordered_json::array();
    for (const sched::VolumeChoice& v : d.volumes) {
      volumes.push_back({{"claim", v.claim},
                         {"volume", v.volume.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(v.volume)}});
    }
    j["volumes"] = volumes;
  }
  j["reason"] = d.status.ok() ? nlohmann::ordered_json(nullptr)
                              : nlohmann::ordered_json(sched::Render(d.status));
  if (preempt) {
    nlohmann::ordered_json victims = nlohmann::ordered_json::array();
    for (size_t v : d.victims) victims.push_back(r.pods.pods[v].key);
    j["preemption"] =
        d.nominated == model::kNoId
            ? nlohmann::ordered_json(nullptr)
            : nlohmann::ordered_json{{"node", r.snapshot->inventory().nodes()[d.nominated].name},
                                     {"victims", victims},
                                     {"lost_gpu_seconds", d.lost_gpu_seconds}};
  }
  return j;
}

// What a pod's preemption does, for text output ("" when it does not preempt).
std::string PreemptionText(const sched::PassResult& r, size_t i) {
  const sched::Decision& d = r.decisions[i];
  if (d.nominated == model::kNoId) return "";
  const std::string& node = r.snapshot->inventory().nodes()[d.nominated].name;
  if (d.victims.empty()) return util::Cat("waits on node ", node, " for its victims to leave");
  std::string names;
  for (size_t v : d.victims) names += (names.empty() ? "" : ", ") + r.pods.pods[v].key;
  return util::Cat("preempts ", names, " to run on node ", node, " (",
                   static_cast<int64_t>(d.lost_gpu_seconds), " GPU-seconds of work lost)");
}

// The whole pass, building the snapshot, and one decision's time (a gang's members share their
// gang's).
nlohmann::ordered_json ScheduleTimings(const sched::PassResult& r, double seconds) {
  std::vector<double> times;
  for (const sched::Decision& d : r.decisions) times.push_back(d.seconds);
  std::sort(times.begin(), times.end());
  auto at = [&](double q) {
    return times.empty() ? 0.0
                         : times[std::min(times.size() - 1, static_cast<size_t>(q * times.size()))];
  };
  return {{"seconds", seconds},
          {"snapshot_seconds", r.snapshot_seconds},
          {"decision_seconds", {{"p50", at(0.5)}, {"p99", at(0.99)}, {"max", at(1.0)}}}};
}

int RunSchedule(const ScheduleOptions& opt) {
  Loaded in;
  sched::PassResult r;
  util::Stopwatch watch;  // from the loaded objects to the decisions
  if (int code = Pass("schedule", opt, in, r, &watch); code != kExitOk) return code;
  const double seconds = watch.Elapsed();
  size_t scheduled = 0, gangs_scheduled = 0;
  for (const sched::Decision& d : r.decisions) scheduled += d.status.ok() ? 1 : 0;
  size_t gangs = 0;
  for (const sched::Gang& g : r.pods.gangs) {
    if (g.kind == "Pod") continue;
    ++gangs;
    bool all = !g.members.empty();
    for (size_t m : g.members) all = all && r.decisions[m].status.ok();
    gangs_scheduled += all ? 1 : 0;
  }
  size_t preempting = 0;
  for (size_t i = 0; i < r.pods.pods.size(); ++i) {
    preempting += r.decisions[i].victims.empty() ? 0 : 1;
    if (opt.output == "json") {
      std::printf("%s\n", DecisionJson(r, i, opt.preempt).dump().c_str());
      continue;
    }
    const sched::Decision& d = r.decisions[i];
    std::string node = d.node != model::kNoId ? r.snapshot->inventory().nodes()[d.node].name : "-";
    std::string preemption = PreemptionText(r, i);
    std::printf("%-40s %-13s %-20s %s%s\n", r.pods.pods[i].key.c_str(),
                std::string(sched::CodeName(d.status.code)).c_str(), node.c_str(),
                sched::Render(d.status).c_str(),
                preemption.empty() ? "" : (" It " + preemption + ".").c_str());
  }
  nlohmann::ordered_json summary = {{"summary",
                                     {{"pods", r.pods.pods.size()},
                                      {"scheduled", scheduled},
                                      {"gangs", gangs},
                                      {"gangs_scheduled", gangs_scheduled}}}};
  if (opt.preempt) summary["summary"]["preempting"] = preempting;
  if (opt.output == "json") {
    std::printf("%s\n", summary.dump().c_str());
  } else {
    std::printf("%zu of %zu pods scheduled, %zu of %zu gangs\n", scheduled, r.pods.pods.size(),
                gangs_scheduled, gangs);
  }
  PrintTimings(opt.output == "json", ScheduleTimings(r, seconds));
  return scheduled == r.pods.pods.size() ? kExitOk : kExitProblems;
}

void ExplainOne(const sched::PassResult& r, size_t i) {
  const sched::PodInfo& p = r.pods.pods[i];
  const sched::Decision& d = r.decisions[i];
  std::printf("pod %s: %s", p.key.c_str(), std::string(sched::CodeName(d.status.code)).c_str());
  if (d.status.ok()) {
    std::printf(" on node %s\n", r.snapshot->inventory().nodes()[d.node].name.c_str());
    return;
  }
  std::string stage(sched::StageName(d.status.stage));
  std::printf("%s\n  why: %s\n  what would unblock it: %s\n",
              stage.empty() ? "" : (" (" + stage + ")").c_str(), sched::Render(d.status).c_str(),
              sched::Hint(d.status).c_str());
  if (std::string preemption = PreemptionText(r, i); !preemption.empty()) {
    std::printf("  preemption: it %s\n", preemption.c_str());
  }
}

// Why pod `i` (and its gang) is pending, or where it goes.
int PrintExplanation(const sched::PassResult& r, size_t i) {
  ExplainOne(r, i);
  int gang = r.pods.pods[i].gang;
  if (gang >= 0 && r.pods.gangs[gang].kind != "Pod") {
    const sched::Gang& g = r.pods.gangs[gang];
    std::printf("gang %s (%s, %d of %zu members needed):\n", g.key.c_str(), g.kind.c_str(), g.min,
                g.members.size());
    for (size_t m : g.members) {
      std::printf("  %s: %s\n", r.pods.pods[m].key.c_str(),
                  std::string(sched::CodeName(r.decisions[m].status.code)).c_str());
    }
  }
  return r.decisions[i].status.ok() ? kExitOk : kExitProblems;
}

// The cluster's API has at most this long to list every kind.
constexpr double kLiveSyncSeconds = 60;

int RunLiveExplain(const ScheduleOptions& opt) {
  absl::StatusOr<double> half_life =
      DurationSeconds("--usage-half-life", opt.usage_half_life, /*zero_ok=*/true);
  if (!half_life.ok()) return Fail("explain", half_life.status());
  absl::StatusOr<kube::RestConfig> cfg = kube::LoadKubeconfig(opt.kubeconfig, opt.context);
  if (!cfg.ok()) return Fail("explain", cfg.status());
  kube::Client client(*cfg);
  kube::SchedulerOptions options{.name = opt.scheduler_name,
                                 .policy = opt.policy,
                                 .preemption = !opt.no_preemption,
                                 .usage_half_life = *half_life,
                                 .state_namespace = opt.lease_namespace};
  kube::Scheduler scheduler(client, options);
  absl::StatusOr<kube::Scheduler::Explained> e = scheduler.Explain(opt.pod, kLiveSyncSeconds);
  if (!e.ok()) return Fail("explain", e.status());
  for (const std::string& p : e->problems) std::fprintf(stderr, "problem: %s\n", p.c_str());
  if (e->index >= 0) return PrintExplanation(*e->pass, static_cast<size_t>(e->index));
  std::printf("pod %s: %s\n", opt.pod.c_str(), e->outside.c_str());
  return e->settled ? kExitOk : kExitProblems;
}

int RunExplain(const ScheduleOptions& opt) {
  if (!opt.kubeconfig.empty()) return RunLiveExplain(opt);
  if (opt.objects.empty() || opt.workload.empty()) {
    std::fprintf(stderr,
                 "gpuplane explain: give --objects and --workload (files), or --kubeconfig FILE "
                 "(a live cluster)\n");
    return kExitUsage;
  }
  Loaded in;
  sched::PassResult r;
  if (int code = Pass("explain", opt, in, r); code != kExitOk) return code;
  std::vector<std::string> keys;
  for (size_t i = 0; i < r.pods.pods.size(); ++i) {
    if (r.pods.pods[i].key == opt.pod) return PrintExplanation(r, i);
    keys.push_back(r.pods.pods[i].key);
  }
  // A name without its namespace matches the pods of that name in any namespace.
  std::string hint;
  for (const std::string& k : keys) {
    if (opt.pod.find('/') == std::string::npos && k.ends_with("/" + opt.pod)) {
      util::Append(hint, hint.empty() ? "; give it as namespace/name: " : ", ", k);
    }
  }
  if (hint.empty()) hint = util::DidYouMean(opt.pod, keys);
  std::fprintf(stderr, "gpuplane explain: pod %s is not among the workload's %zu Pods%s\n",
               opt.pod.c_str(), keys.size(), hint.c_str());
  return kExitUsage;
}

// `files_required`: false where --kubeconfig may stand in for the files.
CLI::App* AddInputs(CLI::App* cmd, ScheduleOptions& opt, bool files_required) {
  cmd->add_option("--objects", opt.objects,
                  "Files or directories with DeviceClasses, ResourceSlices, Nodes and allocated "
                  "ResourceClaims")
      ->required(files_required);
  cmd->add_option("--workload", opt.workload,
                  "Files or directories with Pods, ResourceClaims, ResourceClaimTemplates, "
                  "PodGroups and Workloads")
      ->required(files_required);
  cmd->add_option("--policy", opt.policy,
                  "Node order: gpuplane (least worth first), first-fit, pack, spread or "
                  "worth-pack");
  cmd->add_option("--prices", opt.prices,
                  "Dollars per GPU-hour by product name (YAML or JSON), for the worth of models");
  cmd->add_flag("--preempt", opt.preempt,
                "Let pods that fit nowhere preempt running pods of lower priority (whole jobs, "
                "least lost work), as gpuplane scheduler does");
  cmd->add_option("--now", opt.now,
                  "With --preempt: the time lost work is counted to (RFC 3339; default: now)");
  return cmd;
}

}  // namespace

Command AddScheduleCommand(CLI::App& app) {
  auto opt = std::make_shared<ScheduleOptions>();
  CLI::App* cmd = AddInputs(
      app.add_subcommand("schedule", "Schedule Pods and gangs on a cluster in one pass"), *opt,
      /*files_required=*/true);
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  return Command{cmd, [opt] { return RunSchedule(*opt); }};
}

Command AddExplainCommand(CLI::App& app) {
  auto opt = std::make_shared<ScheduleOptions>();
  CLI::App* cmd =
      AddInputs(app.add_subcommand("explain", "Explain why a Pod (or its gang) is pending"), *opt,
                /*files_required=*/false);
  cmd->add_option("--pod", opt->pod, "The Pod, as namespace/name")->required();
  CLI::Option* live =
      cmd->add_option("--kubeconfig", opt->kubeconfig,
                      "Explain a pod of a live cluster (instead of --objects and --workload): one "
                      "pass as gpuplane scheduler would run it now, nothing written");
  // The files' options have no meaning on a live cluster, and the scheduler's none on files.
  for (const char* name : {"--objects", "--workload", "--prices", "--preempt", "--now"}) {
    live->excludes(cmd->get_option(name));
  }
  cmd->add_option("--context", opt->context, "kubeconfig context (default: its current-context)")
      ->needs(live);
  cmd->add_option("--scheduler-name", opt->scheduler_name,
                  "With --kubeconfig: the spec.schedulerName the scheduler serves")
      ->capture_default_str()
      ->needs(live);
  cmd->add_flag("--no-preemption", opt->no_preemption,
                "With --kubeconfig: as a scheduler started with --no-preemption (it preempts by "
                "default)")
      ->needs(live);
  cmd->add_option("--usage-half-life", opt->usage_half_life,
                  "With --kubeconfig: as the scheduler's --usage-half-life (queues' past use)")
      ->capture_default_str()
      ->needs(live);
  cmd->add_option("--lease-namespace", opt->lease_namespace,
                  "With --kubeconfig: the scheduler's --lease-namespace, where it keeps the "
                  "queues' past use")
      ->capture_default_str()
      ->needs(live);
  return Command{cmd, [opt] { return RunExplain(*opt); }};
}

}  // namespace gpuplane::cli
