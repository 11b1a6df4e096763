// The Philly multi-tenant job trace (../shared/data/philly/README.md): one row per GPU job
// with its submission time, run time, GPU count and virtual cluster (the tenant). Bad rows
// are reported as "file:line: message" problems and skipped; only an unreadable file or a
// missing required column is an error. The trace carries no quotas: TenantGuarantees derives
// them from each tenant's share of the trace's GPU time. Pure functions; thread-safe.
#ifndef GPUPLANE_SIM_PHILLY_H_
#define GPUPLANE_SIM_PHILLY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::sim {

struct PhillyJob {
  double submit = 0;    // seconds after the trace's first submission
  double duration = 0;  // seconds it ran in production
  int gpus = 0;         // 1..1024
  std::string tenant;   // the virtual cluster id
  std::string source;   // "file:line"
};

struct PhillyTrace {
  std::vector<PhillyJob> jobs;    // by submission time (stable for equal times)
  double first_submit_epoch = 0;  // the first submission, seconds since 1970 (UTC as recorded)
  std::vector<std::string> problems;
};

// Columns: timestamp (YYYY-MM-DD HH:MM:SS), duration (seconds), num_gpus, cluster; other
// columns (gpu_time) are ignored.
absl::StatusOr<PhillyTrace> ReadPhilly(const std::string& path);
absl::StatusOr<PhillyTrace> ParsePhilly(const std::string& text, const std::string& name);

struct TenantShare {
  std::string tenant;
  double gpu_seconds = 0;  // duration x GPUs over the trace
  double share = 0;        // of all tenants' GPU time
  int guarantee_gpus = 0;  // share x cluster GPUs, whole GPUs summing to the cluster
};

// Tenants by decreasing GPU time; guarantees rounded by largest remainder so they add up to
// `cluster_gpus` exactly.
std::vector<TenantShare> TenantGuarantees(const PhillyTrace& trace, int cluster_gpus);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_PHILLY_H_
