#include "sim/openb_tenants.h"

#include <algorithm>

#include "util/strings.h"

namespace gpuplane::sim {

TenantWorkload FromOpenb(const PodTrace& pods, int cluster_gpus, bool with_best_effort) {
  TenantWorkload w;
  w.tenants = {"production", "best-effort"};
  w.guarantee_gpus = {cluster_gpus, 0};
  w.opportunistic = {false, true};
  double first = -1, end = 0;
  for (const TracePod& p : pods.pods) {
    if (p.num_gpu == 0) continue;
    first = first < 0 ? p.creation : std::min(first, p.creation);
    end = std::max({end, p.creation, p.deletion});
  }
  int shared = 0, best_effort = 0, production = 0;
  for (const TracePod& p : pods.pods) {
    if (p.num_gpu == 0) continue;
    const bool be = p.qos == "BE";
    if (be && !with_best_effort) continue;
    TenantJob j;
    j.submit = p.creation - first;
    j.duration = std::max(0.0, (p.deletion >= 0 ? p.deletion : end) - p.creation);
    j.gpus = p.num_gpu;
    j.tenant = be ? 1 : 0;
    j.high = !be;
    w.jobs.push_back(j);
    shared += p.gpu_milli < 1000 ? 1 : 0;
    (be ? best_effort : production) += 1;
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const TenantJob& a, const TenantJob& b) { return a.submit < b.submit; });
  w.guarantee_note = util::Cat(
      "openb: ", production,
      " non-preemptible GPU pods (LS, Guaranteed, Burstable) of tenant "
      "production, guaranteed all ",
      cluster_gpus, " GPUs; ", best_effort, " best-effort (BE) pods as opportunistic work; ",
      shared,
      " pods asking for part of a GPU count as one whole GPU (the replay counts whole GPUs)");
  return w;
}

}  // namespace gpuplane::sim
