// A deterministic random source: std::mt19937_64 (whose output the standard specifies) with
// our own bounded draws and shuffle, so a seed gives the same stream on every platform and
// standard library (std::uniform_int_distribution and std::shuffle are not portable).
// A plain value owned by one run; not thread-safe.
#ifndef GPUPLANE_SCHED_RNG_H_
#define GPUPLANE_SCHED_RNG_H_

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace gpuplane::sched {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n); n > 0. Rejection sampling, no modulo bias.
  uint64_t Below(uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
      x = engine_();
    } while (x >= limit);
    return x % n;
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  template <class T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_RNG_H_
