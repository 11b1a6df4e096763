// `gpuplane simulate --workload philly:FILE` and `--workload daynight[:DAYS]`: the
// multi-tenant replay (sim/tenant_replay.h) of the Philly trace or of the built-in day/night
// workload (sim/daynight.h; also replayed without its opportunistic work, the baseline the
// opportunistic figures are read against) under the anchor-like policies and gpuplane's, runs
// in parallel, a table of means and standard deviations over seeds or JSON with a `summary`
// list, and the HTML report when asked for. The arguments are
// plain values copied by the caller; RunTenantReplays reads the trace, runs the replays on
// threads it starts and joins (each on its own copy of the state), and writes stdout; call it
// from one thread.
#ifndef GPUPLANE_CLI_SIMULATE_TENANTS_H_
#define GPUPLANE_CLI_SIMULATE_TENANTS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpuplane::cli {

struct TenantReplayArgs {
  std::string trace;      // the Philly CSV; empty with daynight_days or openb
  std::string openb;      // an openb pod CSV (openb_tenants.h), replayed with and without BE
  int daynight_days = 0;  // > 0: the day/night workload of this many days
  std::string guarantee_window = "1h";
  std::string min_runtime = "0s";       // a duration; 0s: none
  std::string preemption_grace = "0s";  // a duration; 0s: victims stop at once
  std::string checkpoint_on_signal;     // a duration; empty: no job saves on the signal
  double checkpoint_on_signal_share = 1;
  std::string usage_half_life = "0s";  // a duration; 0s: shares ignore usage
  std::vector<std::string> policies;   // empty: all six
  std::vector<uint64_t> seeds;
  int cluster_gpus = 512;
  std::string checkpoint_interval = "30m";
  double restore_seconds = 60;
  double high_fraction = 0.2;
  std::string output = "text";
  int parallel = 1;
  std::string report;  // also write the HTML report here (tenant_report.h)
};

// Exit status: 0, or 2 with a message on stderr for bad arguments or an unreadable trace.
int RunTenantReplays(const TenantReplayArgs& args);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_SIMULATE_TENANTS_H_
