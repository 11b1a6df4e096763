// `gpuplane agent`: the node agent's loop. Every interval it takes one pass from its sampler
// (NVML, a replay recording, or the synthetic sampler), resolves processes to containers
// (cgroups under --proc-root, Pod objects), refreshes device ownership (kubelet PodResources
// over gRPC, or a JSON file), attributes the window since the previous pass, adds it to the
// running totals and the SQLite ledger, and serves /metrics, /healthz and /attribution.
// Problems never stop it: each kind is logged once as a JSON line on stderr and counted in
// gpuplane_agent_errors_total{kind}. Isolation findings are logged once each.
// RunAgent owns everything it starts (sampler, HTTP server, ledger) and stops it before it
// returns; it runs the sampling loop on the calling thread and serves HTTP from the server's
// threads, which read the totals under the state's mutex.
#ifndef GPUPLANE_ACCT_AGENT_AGENT_H_
#define GPUPLANE_ACCT_AGENT_AGENT_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

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

// Runs until `stop` becomes true (or the limits above); the error, also logged, when it cannot
// start: InvalidArgument/NotFound/FailedPrecondition for unusable options or inputs,
// Unavailable when a dependency is down (NVML, the API server, the listen address).
absl::Status RunAgent(const AgentOptions& options, const std::atomic<bool>& stop);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_AGENT_AGENT_H_
