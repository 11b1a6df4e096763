// `gpuplane agent`: the per-node GPU accounting agent (acct/agent.h).
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <memory>

#include "acct/agent/agent.h"
#include "cli/commands.h"
#include "cli/flags.h"

namespace gpuplane::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void OnSignal(int /*signal*/) { g_stop.store(true); }

}  // namespace

Command AddAgentCommand(CLI::App& app) {
  auto opt = std::make_shared<acct::AgentOptions>();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "Per-pod GPU accounting agent: samples GPUs, attributes usage and cost to pods, "
      "serves /metrics, keeps a ledger");
  cmd->add_option("--sampler", opt->sampler, "Where samples come from")
      ->check(CLI::IsMember({"nvml", "replay", "synthetic"}))
      ->capture_default_str();
  cmd->add_option("--replay", opt->replay, "Recording (JSONL) for --sampler replay");
  cmd->add_option("--synthetic", opt->synthetic, "Sharing mode of the synthetic sampler")
      ->check(CLI::IsMember({"time-slicing", "mps", "mig"}))
      ->capture_default_str();
  cmd->add_option("--synthetic-gpus", opt->synthetic_gpus, "Synthetic GPUs")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--synthetic-pods", opt->synthetic_pods, "Synthetic pods per GPU")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  cmd->add_option("--synthetic-processes", opt->synthetic_processes, "Synthetic processes per pod")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--synthetic-seconds", opt->synthetic_seconds, "Length of the synthetic run")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  cmd->add_option("--genai", opt->genai,
                  "Synthetic pods follow the GenAI per-pod series in this directory "
                  "(../shared/data/genai)");
  cmd->add_option("--seed", opt->seed, "Seed of the synthetic sampler")->capture_default_str();
  cmd->add_option("--nvml-library", opt->nvml_library, "NVML library to dlopen")
      ->capture_default_str();
  cmd->add_option("--interval", opt->interval,
                  "Seconds between sampling passes (0: as fast as possible, for replays)")
      ->check(FiniteRange(0, 3600))
      ->capture_default_str();
  cmd->add_option("--listen", opt->listen,
                  "HOST:PORT for /metrics, /healthz, /attribution (port 0: any; \"\": none)")
      ->capture_default_str();
  cmd->add_option("--ledger", opt->ledger, "SQLite ledger of cumulative per-pod usage and cost");
  cmd->add_option("--ledger-bucket", opt->bucket, "Ledger time resolution in seconds")
      ->check(FiniteRange(1, 86400))
      ->capture_default_str();
  cmd->add_option("--record", opt->record, "Append every sampling pass to this JSONL file");
  cmd->add_option("--proc-root", opt->proc_root, "Host /proc (mounted elsewhere in a pod)")
      ->capture_default_str();
  cmd->add_option("--pods", opt->pods,
                  "kubectl get pods -o json of the node (instead of the API server)");
  cmd->add_option("--apiserver", opt->apiserver,
                  "Kubernetes API server URL (default in a cluster: the service account's)");
  cmd->add_option("--node", opt->node, "This node's name (default: $NODE_NAME)");
  cmd->add_option("--podresources-socket", opt->podresources_socket,
                  "kubelet PodResources gRPC socket")
      ->capture_default_str();
  cmd->add_option("--podresources-json", opt->podresources_json,
                  "PodResources List response in JSON, instead of the socket");
  cmd->add_option("--ownership-refresh", opt->ownership_refresh,
                  "Seconds between PodResources List calls")
      ->check(FiniteRange(0, 3600))
      ->capture_default_str();
  cmd->add_option("--prices", opt->prices, "YAML/JSON map of GPU model to price per GPU-hour");
  cmd->add_flag("--exit-at-end", opt->exit_at_end, "Stop when the recording ends");
  cmd->add_option("--max-passes", opt->max_passes, "Stop after this many passes (0: never)")
      ->check(CLI::NonNegativeNumber);
  return Command{cmd, [opt] {
                   if (opt->node.empty()) {
                     const char* node = std::getenv("NODE_NAME");
                     if (node != nullptr) opt->node = node;
                   }
                   std::signal(SIGINT, OnSignal);
                   std::signal(SIGTERM, OnSignal);
                   absl::Status s = acct::RunAgent(*opt, g_stop);
                   return s.ok() ? kExitOk : ExitFor(s);  // the agent logged the error
                 }};
}

}  // namespace gpuplane::cli
