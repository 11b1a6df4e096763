// What the tenant replay measures, integrated over time as the replay advances: allocation
// while work waits, per-tenant allocation against fair share per hour (Jain's index over
// contended tenants), GPU-seconds held by incomplete gangs. Percentiles of the per-job
// figures at the end. Copyable value class; not synchronized (one per replay thread).
#ifndef GPUPLANE_SIM_TENANT_METRICS_H_
#define GPUPLANE_SIM_TENANT_METRICS_H_

#include <optional>
#include <vector>

namespace gpuplane::sim {

// The cluster between two events.
struct TenantSnapshot {
  double allocated_gpus = 0;             // running and held
  double held_incomplete_gpus = 0;       // members of gangs not all placed
  bool waiting = false;                  // some job is pending
  std::vector<double> tenant_allocated;  // GPUs per tenant
  std::vector<double> tenant_fair;       // fair share per tenant
  std::vector<bool> tenant_waiting;      // the tenant has pending work
};

// One hour of the replay per tenant: mean GPUs allocated and mean fair share over the hour,
// and whether the tenant had work waiting at some point in it.
struct TenantHour {
  std::vector<double> allocated, fair;
  std::vector<bool> waited;
};

// Jain's index of allocation / fair share over the tenants that waited in `hour` and had a
// fair share; nullopt with fewer than two such tenants.
std::optional<double> HourJain(const TenantHour& hour);
// The lowest hourly Jain index (`jain_min_hourly`): the lowest HourJain over `hours` (hours
// without one left out); 1 when none has one.
double JainMinHourly(const std::vector<TenantHour>& hours);

class TenantMetrics {
 public:
  // Night and day allocation count time before `horizon` seconds only.
  TenantMetrics(int tenants, double cluster_gpus, double horizon);
  // The cluster looked like `s` from `from` to `to` seconds.
  void Add(double from, double to, const TenantSnapshot& s);

  // Mean allocated fraction over the time some job waited; 0 when none waited.
  double AllocWhileQueued() const;
  // Every hour from the first to the last one the replay reached (hours with no time in them
  // have empty vectors).
  std::vector<TenantHour> Hourly() const;
  double IncompleteGangGpuSeconds() const { return incomplete_; }
  // Mean allocated fraction at night (22:00-06:00 of the replay's clock, 0 at midnight) and
  // by day, before the horizon; 0 when no such time passed.
  double NightAlloc() const { return night_time_ > 0 ? night_alloc_ / night_time_ : 0; }
  double DayAlloc() const { return day_time_ > 0 ? day_alloc_ / day_time_ : 0; }

 private:
  void AddWithinHour(double from, double to, const TenantSnapshot& s);
  struct Hour {
    std::vector<double> allocated, fair, waited;
  };
  int tenants_;
  double cluster_gpus_;
  double horizon_;
  double night_time_ = 0, night_alloc_ = 0, day_time_ = 0, day_alloc_ = 0;
  double waiting_time_ = 0, alloc_while_waiting_ = 0, incomplete_ = 0;
  std::vector<Hour> hours_;
};

// The p-th percentile (0..100, nearest rank) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_TENANT_METRICS_H_
