#include "acct/samplers.h"

#include <algorithm>

namespace gpuplane::acct {
namespace {

template <class T>
void SortByTime(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.t < b.t; });
}

// Copies the records of `from` stamped `t`, starting at `cursor` (sorted by time).
template <class T>
void Take(const std::vector<T>& from, size_t& cursor, double t, std::vector<T>& into) {
  while (cursor < from.size() && from[cursor].t < t) ++cursor;
  while (cursor < from.size() && from[cursor].t == t) into.push_back(from[cursor++]);
}

void Clear(Recording& r) {
  r.devices.clear();
  r.migs.clear();
  r.processes.clear();
  r.process_utils.clear();
  r.problems.clear();
  r.first_t = r.last_t = 0;
}

}  // namespace

NvmlSource::NvmlSource(const std::string& library) {
  absl::StatusOr<std::unique_ptr<NvmlSampler>> nvml = NvmlSampler::Open(library);
  if (nvml.ok()) {
    nvml_ = std::move(*nvml);
  } else {
    why_not_ = std::string(nvml.status().message());
  }
}

bool NvmlSource::Next(double now, Recording& pass, ErrorCounts& errors) {
  Clear(pass);
  if (nvml_ == nullptr) return true;  // the caller reports why_not() once
  nvml_->Sample(now, pass, errors);
  pass.first_t = pass.last_t = now;
  return true;
}

ReplaySource::ReplaySource(Recording recording) : rec_(std::move(recording)) {
  SortByTime(rec_.devices);
  SortByTime(rec_.migs);
  SortByTime(rec_.processes);
  SortByTime(rec_.process_utils);
  auto add = [&](const auto& v) {
    for (const auto& r : v) times_.push_back(r.t);
  };
  add(rec_.devices);
  add(rec_.migs);
  add(rec_.processes);
  add(rec_.process_utils);
  std::sort(times_.begin(), times_.end());
  times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
}

bool ReplaySource::Next(double /*now*/, Recording& pass, ErrorCounts& /*errors*/) {
  Clear(pass);
  if (next_ >= times_.size()) return false;
  double t = times_[next_++];
  Take(rec_.devices, cursor_[0], t, pass.devices);
  Take(rec_.migs, cursor_[1], t, pass.migs);
  Take(rec_.processes, cursor_[2], t, pass.processes);
  Take(rec_.process_utils, cursor_[3], t, pass.process_utils);
  pass.first_t = pass.last_t = t;
  return true;
}

void ReplaySource::SkipBefore(double t) {
  while (next_ < times_.size() && times_[next_] < t) ++next_;
}

}  // namespace gpuplane::acct
