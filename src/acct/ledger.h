// The agent's ledger: cumulative per-container GPU usage and cost in SQLite (WAL mode), in
// time buckets (60 s by default) so reports can select a period. Each sampling window is
// committed in one transaction with the time it ends, so a restarted agent continues its
// counters from the ledger and a kill -9 loses at most the window in progress.
// Schema (version 1): usage(bucket, namespace, pod, container, gpu_uuid, mig_instance, model,
// sm_seconds, memory_byte_seconds, max_memory_bytes, cost_nano), devices(bucket, gpu_uuid,
// model, busy_seconds, unattributed_sm_seconds, idle_cost_nano, cost_nano),
// pod_labels(namespace, pod, labels JSON), meta(key, value).
// A Ledger owns its SQLite connection and prepared statements (closed on destruction); one
// Ledger per file and thread at a time (not thread-safe; the agent writes from its loop).
// Errors name the file: NotFound when it is missing, InvalidArgument when it is not a ledger,
// FailedPrecondition for another schema version, Internal for SQLite failures.
#ifndef GPUPLANE_ACCT_LEDGER_H_
#define GPUPLANE_ACCT_LEDGER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "acct/attribution.h"
#include "acct/sources.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gpuplane::acct {

struct ReportRow {
  std::string group;
  int64_t pods = 0;  // distinct namespace/pod
  double sm_seconds = 0, memory_byte_seconds = 0;
  int64_t max_memory_bytes = 0;
  int64_t cost_nano = 0;
};

class Ledger {
 public:
  enum class Access {
    kReadWrite,  // opened or created (the agent)
    kReadOnly,   // the file must exist (reports)
  };
  // Opens or creates the ledger.
  static absl::StatusOr<std::unique_ptr<Ledger>> Open(const std::string& path, Access access,
                                                      double bucket_seconds = 60);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Adds one window's usage, attributed to the bucket where it starts, and records `t_end`.
  absl::Status Append(const Attribution& window, double t_start, double t_end);
  // Remembers pods' labels (for --group-by label:KEY).
  absl::Status SetPodLabels(const PodIndex& pods);
  // Everything so far, per container and device and per device.
  absl::StatusOr<Attribution> Totals();
  // The end of the last committed window.
  absl::StatusOr<std::optional<double>> LastTime();
  // Usage and cost grouped by "namespace", "pod" (namespace/pod) or "label:KEY", over buckets
  // starting in [since, until); most expensive first.
  absl::StatusOr<std::vector<ReportRow>> Report(std::optional<double> since,
                                                std::optional<double> until,
                                                const std::string& group_by);

 private:
  Ledger() = default;
  absl::Status Exec(const char* sql);
  absl::Status Error(const char* what) const;
  absl::StatusOr<sqlite3_stmt*> Prepare(const char* sql);

  sqlite3* db_ = nullptr;
  std::string path_;
  double bucket_ = 60;
  sqlite3_stmt* upsert_usage_ = nullptr;
  sqlite3_stmt* upsert_device_ = nullptr;
  sqlite3_stmt* set_meta_ = nullptr;
};

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_LEDGER_H_
