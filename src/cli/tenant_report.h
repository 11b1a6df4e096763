// The HTML report of the multi-tenant replays (`gpuplane simulate --workload philly:FILE
// --report FILE`, and daynight): the text tables, the hourly Jain index of allocation / fair
// share per policy, each tenant's allocation against its fair share over time, queueing delay
// by priority class and the work lost per preemption. Self-contained (inline SVG, no
// scripts). Charts over time show each policy's first seed; the tables pool all seeds. A
// pure function of the runs it is given (borrowed for the call); thread-safe.
#ifndef GPUPLANE_CLI_TENANT_REPORT_H_
#define GPUPLANE_CLI_TENANT_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/tenant_replay.h"

namespace gpuplane::cli {

struct TenantReport {
  std::string title;                                  // workload, cluster, interval, seeds
  std::string note;                                   // how guarantees were set
  std::string tables;                                 // the text tables, as printed
  std::vector<std::string> tenants;                   // names, by tenant index
  std::vector<std::string> policies;                  // parallel to runs
  std::vector<std::vector<sim::TenantSummary>> runs;  // per policy, per seed
};

// The report's HTML.
std::string TenantHtml(const TenantReport& r);
// Writes TenantHtml to `path` (Unavailable, naming the path, when it cannot).
absl::Status WriteTenantHtml(const TenantReport& r, const std::string& path);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_TENANT_REPORT_H_
