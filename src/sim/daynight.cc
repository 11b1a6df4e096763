#include "sim/daynight.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "util/strings.h"

namespace gpuplane::sim {
namespace {

constexpr double kDay = 86400;
constexpr double kHour = 3600;

// Inference occupancy as a fraction of the cluster: 12% at 03:00, 60% at 15:00, a cosine in
// between.
double InferenceLoad(double t) {
  const double phase = 2 * std::numbers::pi * (HourOfDay(t) - 3) / 24;
  return 0.12 + 0.48 * 0.5 * (1 - std::cos(phase));
}

struct Sizes {
  std::vector<int> gpus;
  std::vector<double> weights;
  double Mean() const {
    double sum = 0, w = 0;
    for (size_t i = 0; i < gpus.size(); ++i) {
      sum += gpus[i] * weights[i];
      w += weights[i];
    }
    return sum / w;
  }
};

const Sizes kInference{{1, 2, 4, 8}, {0.4, 0.3, 0.2, 0.1}};
const Sizes kTraining{{8, 16, 32}, {0.5, 0.3, 0.2}};
const Sizes kOpportunistic{{1, 2, 4, 8}, {0.3, 0.2, 0.25, 0.25}};

// Jobs of one class arriving as a Poisson process whose rate keeps `load(t)` of the cluster
// busy on average (Little's law: rate = load x GPUs / (mean size x mean duration)); `peak` is
// load's maximum (thinning).
template <typename Load, typename Duration>
void AddArrivals(std::mt19937_64& rng, double horizon, double cluster, const Sizes& sizes,
                 double mean_duration, double peak, Load load, Duration duration, int tenant,
                 bool high, std::vector<TenantJob>& out) {
  const double max_rate = peak * cluster / (sizes.Mean() * mean_duration);
  std::exponential_distribution<double> gap(max_rate);
  std::uniform_real_distribution<double> accept(0, 1);
  std::discrete_distribution<size_t> size(sizes.weights.begin(), sizes.weights.end());
  for (double t = gap(rng); t < horizon; t += gap(rng)) {
    if (accept(rng) * peak > load(t)) continue;
    TenantJob j;
    j.submit = t;
    j.gpus = sizes.gpus[size(rng)];
    j.duration = std::max(60.0, duration(rng));
    j.tenant = tenant;
    j.high = high;
    out.push_back(j);
  }
}

}  // namespace

double HourOfDay(double t) {
  const double s = std::fmod(t, kDay);
  return (s < 0 ? s + kDay : s) / kHour;
}

bool IsNight(double t) {
  const double h = HourOfDay(t);
  return h >= 22 || h < 6;
}

TenantWorkload DayNight(const DayNightOptions& options, uint64_t seed) {
  TenantWorkload w;
  const int c = options.cluster_gpus;
  const double horizon = options.days * kDay;
  // Guarantees: inference its peak and a little more, the teams the rest, half each.
  const int inference = (c * 5 / 8) / kPodGpus * kPodGpus;
  w.tenants = {"inference", "research", "product", "opportunistic"};
  w.guarantee_gpus = {inference, (c - inference) / 2, c - inference - (c - inference) / 2, 0};
  w.opportunistic = {false, false, false, true};
  std::seed_seq seq{seed, uint64_t{0x64a7}};
  std::vector<uint64_t> streams(4);
  seq.generate(streams.begin(), streams.end());
  // Inference: exponential run times, mean 1 h.
  std::mt19937_64 rng_inference(streams[0]);
  std::exponential_distribution<double> serve(1 / kHour);
  AddArrivals(
      rng_inference, horizon, c, kInference, kHour, 0.60, InferenceLoad,
      [&](std::mt19937_64& r) { return serve(r); }, 0, true, w.jobs);
  // Training: gangs of 8-32 GPUs, log-normal run times (median 3 h), 13% of the cluster each.
  std::lognormal_distribution<double> train(std::log(3 * kHour), 0.8);
  const double train_mean = 3 * kHour * std::exp(0.8 * 0.8 / 2);
  for (int team : {1, 2}) {
    std::mt19937_64 rng(streams[team]);
    AddArrivals(
        rng, horizon, c, kTraining, train_mean, 0.13, [](double) { return 0.13; },
        [&](std::mt19937_64& r) { return train(r); }, team, false, w.jobs);
  }
  // Opportunistic: fine-tuning and batch training of 1-8 GPUs (median 1.5 h), submitted
  // around the clock, as much as 35% of the cluster.
  if (options.opportunistic) {
    std::mt19937_64 rng(streams[3]);
    std::lognormal_distribution<double> tune(std::log(1.5 * kHour), 0.7);
    const double tune_mean = 1.5 * kHour * std::exp(0.7 * 0.7 / 2);
    AddArrivals(
        rng, horizon, c, kOpportunistic, tune_mean, 0.35, [](double) { return 0.35; },
        [&](std::mt19937_64& r) { return tune(r); }, 3, false, w.jobs);
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const TenantJob& a, const TenantJob& b) { return a.submit < b.submit; });
  w.guarantee_note = util::Cat(
      "day/night workload, ", options.days, " days on ", c,
      " GPUs: inference (non-preemptible, 1-8 GPUs, mean 1 h) keeps 12% of the cluster busy at "
      "03:00 and 60% at 15:00 (guarantee ",
      inference,
      " GPUs); teams research and product (preemptible gangs of 8-32 GPUs, median "
      "3 h) 13% each (guarantees ",
      w.guarantee_gpus[1], " and ", w.guarantee_gpus[2], " GPUs); ",
      options.opportunistic
          ? "opportunistic fine-tuning and batch (1-8 GPUs, median 1.5 h, no guarantee) as "
            "much as 35% more"
          : "no opportunistic work");
  return w;
}

}  // namespace gpuplane::sim
