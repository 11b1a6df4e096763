#include "util/clock.h"

#include <chrono>

namespace gpuplane::util {
namespace {

class SystemWallClock final : public Clock {
 public:
  double Now() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

class SteadyClock final : public Clock {
 public:
  double Now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

const Clock& WallClock() {
  static const SystemWallClock* const kClock = new SystemWallClock();
  return *kClock;
}

const Clock& MonotonicClock() {
  static const SteadyClock* const kClock = new SteadyClock();
  return *kClock;
}

}  // namespace gpuplane::util
