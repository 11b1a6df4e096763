// Pieces of the agent loop (agent.h), kept apart so each stays small: JSON log lines, error
// counting by kind (each kind logged once), and the cached PID resolver. Not thread-safe: the
// agent calls them under its state mutex.
// Each piece owns its own state (the resolver its PID cache).
#ifndef GPUPLANE_ACCT_AGENT_SUPPORT_H_
#define GPUPLANE_ACCT_AGENT_SUPPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "acct/attribution.h"
#include "acct/recording.h"
#include "acct/samplers.h"
#include "nlohmann/json.hpp"

namespace gpuplane::acct {

double ThreadCpuSeconds();

// One JSON object per line on stderr, with "time" and "component" added.
void LogLine(const nlohmann::ordered_json& fields);

// Counts problems by kind and logs the first of each kind.
class Problems {
 public:
  void Report(const std::string& kind, const std::string& message, int64_t n = 1);
  // Counts kept by a sampler (cumulative): adds what is new, logging kinds not seen before.
  void Merge(const ErrorCounts& from);
  const ErrorCounts& counts() const { return counts_; }

 private:
  ErrorCounts counts_, seen_;
  std::set<std::string> logged_;
};

// PID -> container, cached while the PID keeps appearing in passes; an unreadable PID is
// counted as unknown_pid.
class CachedResolver {
 public:
  CachedResolver(PidResolver inner, Problems& problems)
      : inner_(std::move(inner)), problems_(problems) {}
  std::optional<ProcessOwner> operator()(int64_t pid);
  // New pod information: forget what was resolved with the old.
  void SetInner(PidResolver inner);
  // Drops PIDs absent from `pass` (they may be reused by another process later).
  void Keep(const Recording& pass);

 private:
  PidResolver inner_;
  Problems& problems_;
  std::map<int64_t, std::optional<ProcessOwner>> cache_;
};

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_AGENT_SUPPORT_H_
