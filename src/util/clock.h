// Time as a dependency: code that needs the time takes a `const Clock&` instead of reading the
// system's clocks, so tests drive it with a ManualClock and outputs that must not depend on
// timing never see it. Two real clocks: WallClock() (seconds since the Unix epoch, for time
// stamps and schedules) and MonotonicClock() (seconds from an arbitrary start, never going
// back, for durations). A Stopwatch measures elapsed seconds on either and borrows its clock,
// which must outlive it. All are thread-safe; the real clocks are process-wide singletons that
// live forever.
#ifndef GPUPLANE_UTIL_CLOCK_H_
#define GPUPLANE_UTIL_CLOCK_H_

#include <atomic>

namespace gpuplane::util {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds; what they count from depends on the clock.
  virtual double Now() const = 0;
};

const Clock& WallClock();
const Clock& MonotonicClock();

// A clock that moves only when told to. Starts at `start`.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double start = 0) : now_(start) {}
  double Now() const override { return now_.load(); }
  void Set(double t) { now_.store(t); }
  void Advance(double seconds) { now_.store(now_.load() + seconds); }

 private:
  std::atomic<double> now_;
};

// Seconds since construction (or the last Restart) on `clock`, which must outlive it.
class Stopwatch {
 public:
  explicit Stopwatch(const Clock& clock = MonotonicClock()) : clock_(clock), start_(clock.Now()) {}
  double Elapsed() const { return clock_.Now() - start_; }
  void Restart() { start_ = clock_.Now(); }

 private:
  const Clock& clock_;
  double start_;
};

}  // namespace gpuplane::util

#endif  // GPUPLANE_UTIL_CLOCK_H_
