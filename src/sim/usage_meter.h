// What a simulated run holds over time (GPU units, milli-GPU): samples at even steps of
// [0, span] and the integral up to a horizon, fed by the event loop's advance step. A value
// type; not thread-safe.
#ifndef GPUPLANE_SIM_USAGE_METER_H_
#define GPUPLANE_SIM_USAGE_METER_H_

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace gpuplane::sim {

class UsageMeter {
 public:
  // `samples` samples (none when <= 0) of percent of `capacity`, every span / samples from 0;
  // the integral stops at `horizon`.
  UsageMeter(double capacity, int samples, double span,
             double horizon = std::numeric_limits<double>::infinity())
      : capacity_(capacity),
        samples_(samples),
        span_(span),
        horizon_(horizon),
        every_(span > 0 ? span / std::max(1, samples) : 1) {}

  // Time moves to t (nondecreasing); `used` was held since the previous call.
  void Advance(double t, double used) {
    while (samples_ > 0 && next_sample_ <= t && next_sample_ <= span_) {
      samples_taken_.emplace_back(next_sample_, capacity_ > 0 ? used * 100 / capacity_ : 0);
      next_sample_ += every_;
    }
    const double upto = std::min(t, horizon_);
    if (upto > last_) integral_ += used * (upto - last_);
    last_ = std::max(last_, upto);
  }

  double integral() const { return integral_; }
  std::vector<std::pair<double, double>>& samples() { return samples_taken_; }

 private:
  double capacity_;
  int samples_;
  double span_, horizon_, every_;
  double next_sample_ = 0, last_ = 0, integral_ = 0;
  std::vector<std::pair<double, double>> samples_taken_;  // (time, percent of capacity)
};

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_USAGE_METER_H_
