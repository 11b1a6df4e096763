#include "acct/agent/support.h"

#include <time.h>

#include <cstdio>

#include "util/clock.h"
#include "util/strings.h"

namespace gpuplane::acct {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void LogLine(const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json line = {{"time", util::WallClock().Now()},
                                 {"component", "gpuplane-agent"}};
  line.update(fields);
  std::string s = line.dump() + "\n";
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}

void Problems::Report(const std::string& kind, const std::string& message, int64_t n) {
  counts_[kind] += n;
  if (logged_.insert(kind).second) {
    LogLine({{"level", "warn"}, {"kind", kind}, {"message", message}});
  }
}

void Problems::Merge(const ErrorCounts& from) {
  for (const auto& [kind, n] : from) {
    int64_t delta = n - seen_[kind];
    if (delta > 0) Report(kind, util::Cat("sampler error: ", kind), delta);
    seen_[kind] = n;
  }
}

std::optional<ProcessOwner> CachedResolver::operator()(int64_t pid) {
  auto it = cache_.find(pid);
  if (it != cache_.end()) return it->second;
  std::optional<ProcessOwner> o = inner_(pid);
  if (o && o->unknown) {
    problems_.Report("unknown_pid", util::Cat("process ", pid,
                                              " has no readable cgroup file (it exited, or "
                                              "--proc-root does not show host processes); "
                                              "its usage stays unattributed"));
  }
  cache_.emplace(pid, o);
  return o;
}

void CachedResolver::SetInner(PidResolver inner) {
  inner_ = std::move(inner);
  cache_.clear();
}

void CachedResolver::Keep(const Recording& pass) {
  std::set<int64_t> live;
  for (const ProcessSample& p : pass.processes) live.insert(p.pid);
  for (const ProcessUtilSample& p : pass.process_utils) live.insert(p.pid);
  std::erase_if(cache_, [&](const auto& kv) { return !live.contains(kv.first); });
}

}  // namespace gpuplane::acct
