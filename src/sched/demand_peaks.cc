#include "sched/demand_peaks.h"

#include <algorithm>
#include <cmath>

namespace gpuplane::sched {
namespace {

constexpr double kHour = 3600;
constexpr int64_t kHoursADay = 24;

int64_t HourOf(double t) { return static_cast<int64_t>(std::floor(t / kHour)); }

}  // namespace

void DemandPeaks::Note(double t, double demand) {
  auto [it, fresh] = peaks_.try_emplace(HourOf(t), demand);
  if (!fresh) it->second = std::max(it->second, demand);
}

double DemandPeaks::Peak(int64_t hour) const {
  auto it = peaks_.find(hour);
  return it == peaks_.end() ? 0 : it->second;
}

double DemandPeaks::Rise(double t, double window, int days) const {
  const int64_t now = HourOf(t);
  const int64_t today = now >= 0 ? now / kHoursADay : (now - kHoursADay + 1) / kHoursADay;
  double rise = 0;
  for (int64_t k = 1; k <= days; ++k) {
    const int64_t base = now - k * kHoursADay;
    if (base < 0) break;  // before the epoch: nothing was seen
    const double from = Peak(base);
    for (int64_t h = now + 1; static_cast<double>(h) * kHour <= t + window; ++h) {
      const int64_t then = h - k * kHoursADay;
      if (then >= today * kHoursADay) continue;  // that day's hour is today's: not seen yet
      rise = std::max(rise, Peak(then) - from);
    }
  }
  return rise;
}

void DemandPeaks::Prune(double t, int days) {
  const int64_t first = (HourOf(t) / kHoursADay - days) * kHoursADay;
  peaks_.erase(peaks_.begin(), peaks_.lower_bound(first));
}

}  // namespace gpuplane::sched
