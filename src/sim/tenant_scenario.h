// Scenario files for the tenant replay (testdata/sched/tenants/*.txt): a small cluster,
// tenants, jobs, and what each policy is expected to do with them, one statement per line.
// They pin the rules each anchor-like policy follows (tenant_policy.h) to the worked
// examples and documented behaviours of the scheduler it is named after; the file's
// `# source:` line says which. The format:
//
//   # scenario: one line on what it shows          (comments start with #)
//   nodes 2                                        (8-GPU nodes; default 1)
//   checkpoint-interval 1800                       (seconds; default 1800)
//   restore 60                                     (seconds; default 60)
//   window 3600                                    (opportunistic guarantee window; 3600)
//   min-runtime 600                                (seconds; default 0: none)
//   usage-half-life 3600                           (seconds; default 0: shares ignore usage)
//   usage-k 1                                      (how strongly usage bends them; default 1)
//   tenant a guarantee=8 [min_runtime=S] [opportunistic]
//   job A submit=0 duration=9000 gpus=8 tenant=a [min_runtime=S] [high]
//   expect kai preemptions=1 evicted=A queue_delay_p95_low_s=0
//
// `expect POLICY` takes any of the figures ExpectedFigures() lists, and `evicted=`: the jobs
// evicted, in order, by name (`evicted=` alone: none). Errors name the file, the line and the
// field. Plain values; pure functions; thread-safe.
#ifndef GPUPLANE_SIM_TENANT_SCENARIO_H_
#define GPUPLANE_SIM_TENANT_SCENARIO_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/tenant_replay.h"
#include "sim/tenant_workload.h"

namespace gpuplane::sim {

struct TenantExpectation {
  std::string policy;
  int line = 0;
  std::map<std::string, double> figures;
  bool check_evicted = false;
  std::vector<std::string> evicted;  // job names, in eviction order
};

struct TenantScenario {
  std::string file;
  std::string description;  // the `# scenario:` line
  std::string source;       // the `# source:` line
  TenantWorkload workload;
  std::vector<std::string> job_names;  // per job of the workload
  TenantRunOptions options;
  std::vector<TenantExpectation> expectations;
};

// The figures an `expect` line may name.
const std::vector<std::string>& ExpectedFigures();

// Errors: a line that is not a statement, an unknown key or tenant or policy, a number out of
// range, a duplicate name, jobs not in submission order, no expectation.
absl::StatusOr<TenantScenario> ParseTenantScenario(std::string_view text, const std::string& file);

// Runs each expectation's policy on the scenario; one message per figure that differs
// (file:line, policy, figure, expected, got); empty when all hold.
std::vector<std::string> CheckTenantScenario(const TenantScenario& scenario);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_TENANT_SCENARIO_H_
