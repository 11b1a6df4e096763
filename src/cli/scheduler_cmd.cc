// `gpuplane scheduler`: the live scheduler (kube/scheduler.h) with leader election
// (kube/leader.h) and its HTTP endpoints (kube/scheduler_server.h).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "kube/leader.h"
#include "kube/rest_config.h"
#include "kube/scheduler.h"
#include "kube/scheduler_server.h"
#include "sched/plugins.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct SchedulerFlags {
  std::string kubeconfig;
  std::string context;
  kube::SchedulerOptions options;
  std::string metrics_addr = "0.0.0.0:10259";
  bool leader_elect = false;
  std::string lease_namespace = "kube-system";
  std::string lease_name = "gpuplane-scheduler";
  std::string identity;
  double lease_seconds = 15;
  double renew_deadline = 10;
  double retry_seconds = 2;
  std::string usage_half_life = "0s";
};

std::atomic<kube::Scheduler*> g_scheduler{nullptr};
extern "C" void OnStopSignal(int /*signal*/) {
  kube::Scheduler* s = g_scheduler.load();
  if (s != nullptr) s->Stop();
}

std::string DefaultIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  return util::Cat(host, "_", rd() % 1000000);
}

int Run(SchedulerFlags f) {
  absl::StatusOr<double> half_life =
      DurationSeconds("--usage-half-life", f.usage_half_life, /*zero_ok=*/true);
  if (!half_life.ok()) return Fail("scheduler", half_life.status());
  f.options.usage_half_life = *half_life;
  f.options.state_namespace = f.lease_namespace;
  absl::StatusOr<kube::RestConfig> cfg = absl::InvalidArgumentError("unset");
  std::string path = f.kubeconfig;
  if (path.empty() && std::getenv("KUBECONFIG") != nullptr) path = std::getenv("KUBECONFIG");
  cfg = path.empty() ? kube::InClusterConfig() : kube::LoadKubeconfig(path, f.context);
  if (!cfg.ok()) return Fail("scheduler", cfg.status());
  kube::Client client(*cfg);
  kube::Scheduler scheduler(client, f.options);
  std::unique_ptr<kube::SchedulerServer> server;
  if (!f.metrics_addr.empty()) {
    server = std::make_unique<kube::SchedulerServer>(scheduler);
    absl::StatusOr<std::string> addr = server->Start(f.metrics_addr);
    if (!addr.ok()) return Fail("scheduler", addr.status());
    std::fprintf(stderr, "gpuplane scheduler: /metrics, /healthz, /readyz on %s\n", addr->c_str());
  }
  std::unique_ptr<kube::LeaderElector> elector;
  std::thread election;
  if (f.leader_elect) {
    kube::LeaderOptions lo;
    lo.lease_namespace = f.lease_namespace;
    lo.lease_name = f.lease_name;
    lo.identity = f.identity.empty() ? DefaultIdentity() : f.identity;
    lo.lease_seconds = f.lease_seconds;
    lo.renew_deadline = f.renew_deadline;
    lo.retry_seconds = f.retry_seconds;
    std::string id = lo.identity;
    lo.on_started_leading = [id] {
      std::fprintf(stderr, "gpuplane scheduler: %s leads\n", id.c_str());
    };
    lo.on_stopped_leading = [id] {
      std::fprintf(stderr, "gpuplane scheduler: %s stopped leading\n", id.c_str());
    };
    elector = std::make_unique<kube::LeaderElector>(client, lo);
    election = std::thread([&] { elector->Run(); });
  }
  g_scheduler = &scheduler;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  std::fprintf(stderr, "gpuplane scheduler: scheduling pods of schedulerName %s against %s\n",
               f.options.name.c_str(), cfg->server.c_str());
  const kube::LeaderElector* e = elector.get();
  absl::Status s = scheduler.Run([e] { return e == nullptr || e->IsLeader(); });
  g_scheduler = nullptr;
  if (elector) {
    elector->Stop();  // releases the Lease: the standby takes over at once
    election.join();
  }
  if (!s.ok()) return Fail("scheduler", s);
  return kExitOk;
}

}  // namespace

Command AddSchedulerCommand(CLI::App& app) {
  auto f = std::make_shared<SchedulerFlags>();
  CLI::App* cmd = app.add_subcommand(
      "scheduler",
      "The live scheduler: allocates DRA claims and binds pods of its schedulerName in a "
      "cluster, gangs whole, with leader election and /metrics");
  cmd->add_option("--kubeconfig", f->kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, else the in-cluster service account)");
  cmd->add_option("--context", f->context, "kubeconfig context (default: its current-context)");
  cmd->add_option("--scheduler-name", f->options.name, "spec.schedulerName of the pods to schedule")
      ->capture_default_str();
  cmd->add_option("--policy", f->options.policy, "Node order of the scheduling pass")
      ->check(CLI::IsMember(sched::NodeOrderNames()))
      ->capture_default_str();
  cmd->add_option("--writers", f->options.writers, "Concurrent API writes")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("!--no-preemption", f->options.preemption,
                "Never evict running pods of lower priority to make room");
  cmd->add_option("--usage-half-life", f->usage_half_life,
                  "With Queues: fair shares lean against each queue's GPU use decayed with "
                  "this half-life (KAI's time-based fair share); 0s: they ignore past use")
      ->capture_default_str();
  cmd->add_option("--usage-k", f->options.usage_k,
                  "How strongly past use bends the queues' weights (with --usage-half-life)")
      ->check(FiniteRange(0, 1e6))
      ->capture_default_str();
  cmd->add_option("--metrics-addr", f->metrics_addr,
                  "HOST:PORT for /metrics, /healthz, /readyz (\"\": none; port 0: any)")
      ->capture_default_str();
  cmd->add_flag("--leader-elect", f->leader_elect,
                "Take part in leader election; only the leader writes");
  cmd->add_option("--lease-namespace", f->lease_namespace,
                  "Namespace of the Lease, and of the ConfigMap NAME-queue-usage that keeps "
                  "the queues' past use for the next leader (with --usage-half-life)")
      ->capture_default_str();
  cmd->add_option("--lease-name", f->lease_name, "Name of the Lease")->capture_default_str();
  cmd->add_option("--identity", f->identity, "This replica's holder identity (default: host_N)");
  cmd->add_option("--lease-duration", f->lease_seconds, "Seconds a Lease holds without renewal")
      ->check(FiniteRange(1, 600))
      ->capture_default_str();
  cmd->add_option("--renew-deadline", f->renew_deadline,
                  "Seconds a leader may fail to renew before it stops")
      ->check(FiniteRange(0.5, 600))
      ->capture_default_str();
  cmd->add_option("--retry-period", f->retry_seconds, "Seconds between tries to acquire or renew")
      ->check(FiniteRange(0.1, 60))
      ->capture_default_str();
  return Command{cmd, [f] {
                   if (f->renew_deadline >= f->lease_seconds) {
                     return Fail("scheduler",
                                 absl::InvalidArgumentError(
                                     "--renew-deadline must be below --lease-duration"));
                   }
                   return Run(*f);
                 }};
}

}  // namespace gpuplane::cli
