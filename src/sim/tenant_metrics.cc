#include "sim/tenant_metrics.h"

#include <algorithm>
#include <cmath>

#include "sim/daynight.h"

namespace gpuplane::sim {

TenantMetrics::TenantMetrics(int tenants, double cluster_gpus, double horizon)
    : tenants_(tenants), cluster_gpus_(cluster_gpus), horizon_(horizon) {}

void TenantMetrics::Add(double from, double to, const TenantSnapshot& s) {
  if (to <= from) return;
  if (s.waiting) {
    waiting_time_ += to - from;
    alloc_while_waiting_ += s.allocated_gpus / cluster_gpus_ * (to - from);
  }
  incomplete_ += s.held_incomplete_gpus * (to - from);
  // Split at hour boundaries.
  while (from < to) {
    const double hour_end = (std::floor(from / 3600) + 1) * 3600;
    const double until = std::min(to, hour_end);
    AddWithinHour(from, until, s);
    from = until;
  }
}

void TenantMetrics::AddWithinHour(double from, double to, const TenantSnapshot& s) {
  const size_t h = static_cast<size_t>(from / 3600);
  if (hours_.size() <= h) hours_.resize(h + 1);
  Hour& hour = hours_[h];
  if (hour.allocated.empty()) {
    hour.allocated.assign(tenants_, 0);
    hour.fair.assign(tenants_, 0);
    hour.waited.assign(tenants_, 0);
  }
  const double dt = to - from;
  if (from < horizon_) {
    const double within = std::min(to, horizon_) - from;
    (IsNight(from) ? night_time_ : day_time_) += within;
    (IsNight(from) ? night_alloc_ : day_alloc_) += s.allocated_gpus / cluster_gpus_ * within;
  }
  for (int t = 0; t < tenants_; ++t) {
    hour.allocated[t] += s.tenant_allocated[t] * dt;
    hour.fair[t] += s.tenant_fair[t] * dt;
    if (s.tenant_waiting[t]) hour.waited[t] += dt;
  }
}

double TenantMetrics::AllocWhileQueued() const {
  return waiting_time_ > 0 ? alloc_while_waiting_ / waiting_time_ : 0;
}

std::vector<TenantHour> TenantMetrics::Hourly() const {
  std::vector<TenantHour> out(hours_.size());
  for (size_t h = 0; h < hours_.size(); ++h) {
    const Hour& hour = hours_[h];
    if (hour.allocated.empty()) continue;
    TenantHour& o = out[h];
    for (int t = 0; t < tenants_; ++t) {
      o.allocated.push_back(hour.allocated[t] / 3600);
      o.fair.push_back(hour.fair[t] / 3600);
      o.waited.push_back(hour.waited[t] > 0);
    }
  }
  return out;
}

std::optional<double> HourJain(const TenantHour& hour) {
  double sum = 0, squares = 0;
  int n = 0;
  for (size_t t = 0; t < hour.allocated.size(); ++t) {
    if (!hour.waited[t] || hour.fair[t] <= 0) continue;
    const double x = hour.allocated[t] / hour.fair[t];
    sum += x;
    squares += x * x;
    ++n;
  }
  if (n < 2 || squares <= 0) return std::nullopt;
  return sum * sum / (n * squares);
}

double JainMinHourly(const std::vector<TenantHour>& hours) {
  double worst = 1;
  for (const TenantHour& hour : hours) {
    if (std::optional<double> j = HourJain(hour)) worst = std::min(worst, *j);
  }
  return worst;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

}  // namespace gpuplane::sim
