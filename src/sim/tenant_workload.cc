#include "sim/tenant_workload.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "util/strings.h"

namespace gpuplane::sim {

std::vector<int> TenantJob::Pods() const {
  if (gpus <= kPodGpus) return {gpus};
  std::vector<int> out(gpus / kPodGpus, kPodGpus);
  if (gpus % kPodGpus != 0) out.push_back(gpus % kPodGpus);
  return out;
}

TenantWorkload FromPhilly(const PhillyTrace& trace, int cluster_gpus, double high_fraction,
                          uint64_t seed) {
  TenantWorkload w;
  std::map<std::string, int> id;
  for (const TenantShare& s : TenantGuarantees(trace, cluster_gpus)) {
    id[s.tenant] = static_cast<int>(w.tenants.size());
    w.tenants.push_back(s.tenant);
    w.guarantee_gpus.push_back(s.guarantee_gpus);
  }
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution high(high_fraction);
  w.jobs.reserve(trace.jobs.size());
  for (const PhillyJob& j : trace.jobs) {
    w.jobs.push_back({j.submit, j.duration, j.gpus, id.at(j.tenant), high(rng)});
  }
  char percent[32];
  std::snprintf(percent, sizeof percent, "%g", high_fraction * 100);
  w.guarantee_note =
      util::Cat("tenants' guarantees: each virtual cluster's share of the trace's GPU time x ",
                cluster_gpus, " GPUs (the trace has no quotas); ", percent,
                "% of jobs drawn non-preemptible (seeded; the trace has no priorities)");
  return w;
}

namespace {

// SplitMix64's finalizer: a well-mixed 64-bit value from any input.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void DrawSignalSavers(TenantWorkload& w, double share, uint64_t seed) {
  for (TenantJob& j : w.jobs) {
    uint64_t h = Mix(seed);
    for (uint64_t v : {std::bit_cast<uint64_t>(j.submit), std::bit_cast<uint64_t>(j.duration),
                       static_cast<uint64_t>(j.gpus), static_cast<uint64_t>(j.tenant)}) {
      h = Mix(h ^ v);
    }
    j.saves_on_signal = static_cast<double>(h >> 11) * 0x1.0p-53 < share;
  }
}

}  // namespace gpuplane::sim
