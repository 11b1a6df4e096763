#include "acct/synthetic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "util/strings.h"

namespace gpuplane::acct {

namespace {

// One GPU's pods, named with `tag` ("" for a single GPU) and PIDs from `pid_base`.
Synthetic MakeOneGpu(const SyntheticSpec& spec, uint64_t seed, const std::string& tag,
                     int64_t pid_base) {
  std::mt19937_64 rng(seed);
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  Synthetic out;
  out.gpu_uuid = util::Cat("GPU-synthetic-", spec.seed, tag);
  const int procs = std::clamp(spec.processes_per_pod, 1, 64);
  const int64_t gib = int64_t{1} << 30;
  const int64_t total_memory = 80 * gib;
  const double t0 = 1'700'000'000;  // seconds; NVML timestamps are CPU microseconds
  int pods = std::clamp(spec.pods, 1, 7);
  if (spec.sharing != Sharing::kMig) pods = std::clamp(spec.pods, 1, 8);
  struct Pod {
    double level = 0.3, memory = 0;
    const UsageProfile* profile = nullptr;  // when following a real series
    size_t offset = 0;
    double memory_scale = 1;
  };
  const bool real = spec.profiles != nullptr && !spec.profiles->empty();
  // A 1g.10gb instance, or an eighth of the 80 GB GPU: real series are scaled to fit.
  const double memory_cap = 9.5 * static_cast<double>(gib);
  std::vector<Pod> state(pods);
  for (int i = 0; i < pods; ++i) {
    SyntheticTruth t;
    t.who = ContainerRef{"team", util::Cat("pod-", i, tag), "main"};
    t.device = spec.sharing == Sharing::kMig ? util::Cat("MIG-synthetic-", spec.seed, tag, "-", i)
                                             : out.gpu_uuid;
    for (int k = 0; k < procs; ++k) {
      t.pid = pid_base + int64_t{i} * 64 + k;
      out.truth.push_back(t);
    }
    out.ownership.owners[t.device].push_back(t.who);
    state[i].level = 0.05 + 0.5 * unit();
    state[i].memory = static_cast<double>(gib) * (1 + 3 * unit());
    if (real) {
      Pod& p = state[i];
      p.profile = &(*spec.profiles)[rng() % spec.profiles->size()];
      p.offset = rng() % p.profile->duty.size();
      double peak = *std::max_element(p.profile->memory.begin(), p.profile->memory.end());
      p.memory_scale = peak > memory_cap ? memory_cap / peak : 1;
    }
  }
  const double step = std::max(1, spec.profile_step);
  // A profile's value at `s` seconds: linear between its samples, one sample per `step`.
  auto at = [&](const Pod& p, const std::vector<double>& series, int s) {
    double x = static_cast<double>(p.offset) + s / step;
    size_t n = series.size();
    auto k = static_cast<size_t>(std::floor(x));
    double frac = x - std::floor(x);
    return series[k % n] * (1 - frac) + series[(k + 1) % n] * frac;
  };
  double prev_t = t0;
  for (int s = 0; s <= spec.seconds; ++s) {
    double t = t0 + s;
    // Demands this period: a random walk with bursts.
    std::vector<double> demand(pods);
    for (int i = 0; i < pods; ++i) {
      if (real) {
        demand[i] = std::clamp(at(state[i], state[i].profile->duty, s), 0.0, 1.0);
        state[i].memory =
            std::max(0.25 * static_cast<double>(gib),
                     at(state[i], state[i].profile->memory, s) * state[i].memory_scale);
        continue;
      }
      state[i].level = std::clamp(state[i].level + (unit() - 0.5) * 0.2, 0.0, 0.9);
      demand[i] = unit() < 0.1 ? std::min(1.0, state[i].level * 2) : state[i].level;
      state[i].memory = std::clamp(state[i].memory + (unit() - 0.45) * 0.05 * gib, 0.5 * gib,
                                   (spec.sharing == Sharing::kMig ? 9.0 : 9.5) * gib);
    }
    double sum = 0, idle = 1;
    for (double d : demand) sum += d, idle *= 1 - d;
    double scale = spec.sharing == Sharing::kTimeSlicing && sum > 1 ? 1 / sum : 1;
    double busy = spec.sharing == Sharing::kTimeSlicing ? std::min(1.0, sum)
                  : spec.sharing == Sharing::kMps       ? 1 - idle
                                                        : 0;  // no utilization under MIG
    int64_t used_total = 0;
    for (int i = 0; i < pods; ++i) used_total += static_cast<int64_t>(state[i].memory);
    out.recording.devices.push_back(
        DeviceSample{t, out.gpu_uuid, 0, "NVIDIA H100 80GB HBM3", total_memory, used_total,
                     static_cast<int>(std::lround(100 * busy)), spec.sharing == Sharing::kMig});
    if (spec.sharing == Sharing::kMig) {  // every pass lists the instances, as NVML does
      for (int i = 0; i < pods; ++i) {
        out.recording.migs.push_back(MigSample{t, out.gpu_uuid, out.truth[size_t(i) * procs].device,
                                               i + 1, "1g.10gb", 10 * gib,
                                               static_cast<int64_t>(state[i].memory)});
      }
    }
    for (size_t n = 0; n < out.truth.size(); ++n) {
      const size_t i = n / procs;
      SyntheticTruth& truth = out.truth[n];
      auto memory = static_cast<int64_t>(state[i].memory) / procs;
      if (s > 0) {
        // The period (prev_t, t] ran at this period's demand; memory held its previous value.
        // The truth is exact; NVML reports whole percents.
        double share = demand[i] * scale / procs;
        int sm = static_cast<int>(std::lround(100 * share));
        if (spec.sharing != Sharing::kMig) {
          truth.sm_seconds += share * (t - prev_t);
          out.recording.process_utils.push_back(
              ProcessUtilSample{t, out.gpu_uuid, truth.pid, std::llround(t * 1e6), sm, 0});
        }
      }
      std::optional<int> gi;
      if (spec.sharing == Sharing::kMig) gi = static_cast<int>(i) + 1;
      out.recording.processes.push_back(ProcessSample{t, out.gpu_uuid, truth.pid, memory, gi});
    }
    prev_t = t;
  }
  // Memory truth: each process's used memory holds until its next sample.
  std::map<int64_t, std::pair<SyntheticTruth*, const ProcessSample*>> by_pid;
  for (SyntheticTruth& truth : out.truth) by_pid[truth.pid] = {&truth, nullptr};
  for (const ProcessSample& p : out.recording.processes) {
    auto& [truth, last] = by_pid[p.pid];
    if (last != nullptr)
      truth->memory_byte_seconds += static_cast<double>(last->used_memory) * (p.t - last->t);
    last = &p;
  }
  out.recording.first_t = t0;
  out.recording.last_t = t0 + spec.seconds;
  return out;
}

template <class T>
void Move(std::vector<T>& into, std::vector<T>& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()),
              std::make_move_iterator(from.end()));
}

}  // namespace

Synthetic MakeSynthetic(const SyntheticSpec& spec) {
  const int gpus = std::clamp(spec.gpus, 1, 64);
  if (gpus == 1) return MakeOneGpu(spec, spec.seed, "", 1000);
  Synthetic out;
  for (int g = 0; g < gpus; ++g) {
    Synthetic one = MakeOneGpu(spec, spec.seed * 1000 + g, util::Cat("-", g), 1000 + g * 1000);
    for (DeviceSample& d : one.recording.devices) d.index = g;
    if (g == 0) {
      out.gpu_uuid = one.gpu_uuid;
      out.recording.first_t = one.recording.first_t;
      out.recording.last_t = one.recording.last_t;
    }
    Move(out.recording.devices, one.recording.devices);
    Move(out.recording.migs, one.recording.migs);
    Move(out.recording.processes, one.recording.processes);
    Move(out.recording.process_utils, one.recording.process_utils);
    Move(out.truth, one.truth);
    for (auto& [device, owners] : one.ownership.owners)
      out.ownership.owners[device] = std::move(owners);
  }
  return out;
}

}  // namespace gpuplane::acct
