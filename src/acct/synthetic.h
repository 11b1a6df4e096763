// The synthetic sampler: 2-8 pods sharing each of one or more GPUs under time-slicing, MPS or MIG,
// with demand series from real per-pod traces (genai.h) or a built-in generator (bursty duty cycles
// and growing memory), written in the recording format together with the exact ground truth per
// pod. Deterministic per seed.
// A pure function of the spec (the profiles it points to are borrowed for the call) returning
// values; thread-safe.
#ifndef GPUPLANE_ACCT_SYNTHETIC_H_
#define GPUPLANE_ACCT_SYNTHETIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "acct/attribution.h"
#include "acct/genai.h"
#include "acct/recording.h"

namespace gpuplane::acct {

enum class Sharing { kTimeSlicing, kMps, kMig };

struct SyntheticSpec {
  Sharing sharing = Sharing::kTimeSlicing;
  int pods = 4;       // per GPU: 1-8 (1-7 under MIG)
  int seconds = 600;  // one sample per second
  uint64_t seed = 1;
  int gpus = 1;               // 1-64, each with its own pods
  int processes_per_pod = 1;  // 1-64; a pod's demand is spread evenly over them
  // Real per-pod series (genai.h) instead of the built-in generator: each pod follows one,
  // from a random point, one trace sample per `profile_step` seconds (linear in between),
  // memory scaled down to fit its share of the GPU.
  const std::vector<UsageProfile>* profiles = nullptr;
  int profile_step = 5;
};

// One entry per process (a pod with several processes has several entries).
struct SyntheticTruth {
  ContainerRef who;
  int64_t pid = 0;
  std::string device;  // GPU UUID, or the MIG UUID of its instance
  double sm_seconds = 0;
  double memory_byte_seconds = 0;
};

struct Synthetic {
  Recording recording;
  std::vector<SyntheticTruth> truth;
  Ownership ownership;
  std::string gpu_uuid;  // the first GPU's
};

Synthetic MakeSynthetic(const SyntheticSpec& spec);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_SYNTHETIC_H_
