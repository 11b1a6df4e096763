// `gpuplane agent`: the node agent's loop. Every interval it takes one pass from its sampler
// (NVML, a replay recording, or the synthetic sampler), resolves processes to containers
// (cgroups under --proc-root, Pod objects), refreshes device ownership (kubelet PodResources
// over gRPC, or a JSON file), attributes the window since the previous pass, adds it to the
// running totals and the SQLite ledger, and serves /metrics, /healthz and /attribution.
// Problems never stop it: each kind is logged once as a JSON line on stderr and counted in
// gpuplane_agent_errors_total{kind}. Isolation findings are logged once each.
// Agent is one node agent without its loop or server: Init once, then Pass as often as the
// caller likes; it reads the time only from the clock it is given (a ManualClock in tests), for
// the sampler's time stamps, when ownership is due for a refresh, and when the last pass ended.
// It owns its sampler, ledger and caches; it is not thread-safe except for state(), whose
// fields others read under state().mu while passes run.
// RunAgent owns everything it starts (an Agent on the wall clock, the HTTP server) and stops it
// before it returns; it runs the sampling loop on the calling thread and serves HTTP from the
// server's threads, which read the totals under the state's mutex.
#ifndef GPUPLANE_ACCT_AGENT_AGENT_H_
#define GPUPLANE_ACCT_AGENT_AGENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "util/clock.h"

namespace gpuplane::acct {

struct AgentOptions {
  std::string sampler = "nvml";            // nvml | replay | synthetic
  std::string replay;                      // the recording, for the replay sampler
  std::string synthetic = "time-slicing";  // time-slicing | mps | mig
  int synthetic_gpus = 1, synthetic_pods = 4, synthetic_processes = 1;
  int synthetic_seconds = 3600;
  std::string genai;  // directory of the GenAI per-pod series; "" for the built-in generator
  uint64_t seed = 1;
  std::string nvml_library = "libnvidia-ml.so.1";

  double interval = 1;  // seconds between passes; 0: as fast as possible (replay, synthetic)
  std::string listen = "127.0.0.1:9464";  // host:port; port 0 picks one; "" serves nothing
  std::string ledger;                     // SQLite file; "" keeps totals in memory only
  double bucket = 60;                     // ledger bucket, seconds
  std::string record;                     // append every pass to this JSONL file

  std::string proc_root = "/proc";
  std::string pods;       // kubectl get pods -o json of the node, instead of the API server
  std::string apiserver;  // URL; "" in a cluster: the service account's
  std::string node;       // this node's name (for the API server's field selector)
  std::string podresources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string podresources_json;  // instead of the socket
  double ownership_refresh = 10;  // seconds between PodResources List / pod list calls
  std::string prices;

  bool exit_at_end = false;  // stop when the recording ends (otherwise keep serving)
  int64_t max_passes = 0;    // stop after this many passes (0: no limit)
};

struct AgentState;  // acct/agent/http.h

class Agent {
 public:
  // REQUIRES: `options` and `clock` outlive the agent.
  Agent(const AgentOptions& options, const util::Clock& clock);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Reads the inputs, opens the sampler, ledger and record file. The errors are RunAgent's.
  absl::Status Init();
  // One sampling pass; false when the recording ended and options.exit_at_end is set.
  // REQUIRES: Init() succeeded.
  bool Pass();
  // The totals and problems, shared with the HTTP server (read them under state().mu).
  AgentState& state();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs until `stop` becomes true (or the limits above); the error, also logged, when it cannot
// start: InvalidArgument/NotFound/FailedPrecondition for unusable options or inputs,
// Unavailable when a dependency is down (NVML, the API server, the listen address).
absl::Status RunAgent(const AgentOptions& options, const std::atomic<bool>& stop);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_AGENT_AGENT_H_
