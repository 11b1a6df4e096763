// The built-in day/night workload for the tenant replay (tenant_replay.h): inference that
// peaks by day and ebbs at night (non-preemptible, its own tenant), two training teams with
// steady gang jobs (preemptible, guaranteed), and training and fine-tuning submitted as
// opportunistic work (a tenant with no guarantee and no over-guarantee weight, which may use
// idle GPUs and is evicted first). The shapes are stated in `note` for every report and in
// docs/SCHEDULING.md. The opportunistic jobs are drawn from their own random stream, so the
// workload without them (`opportunistic = false`) is exactly the rest. Plain values; pure
// functions; thread-safe.
#ifndef GPUPLANE_SIM_DAYNIGHT_H_
#define GPUPLANE_SIM_DAYNIGHT_H_

#include <cstdint>

#include "sim/tenant_workload.h"

namespace gpuplane::sim {

struct DayNightOptions {
  int days = 7;
  int cluster_gpus = 512;
  bool opportunistic = true;  // false: the same workload without its opportunistic jobs
};

// REQUIRES: days >= 1; cluster_gpus a positive multiple of kPodGpus.
TenantWorkload DayNight(const DayNightOptions& options, uint64_t seed);

// Hour of the day (0 <= h < 24) of `t` seconds after the workload's first midnight.
double HourOfDay(double t);
// Night: 22:00 to 06:00.
bool IsNight(double t);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_DAYNIGHT_H_
