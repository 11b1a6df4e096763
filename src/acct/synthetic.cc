#include "acct/synthetic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "util/strings.h"

namespace gpuplane::acct {

namespace {

constexpr int64_t kGib = int64_t{1} << 30;
constexpr int64_t kTotalMemory = 80 * kGib;
constexpr double kT0 = 1'700'000'000;  // seconds; NVML timestamps are CPU microseconds
// A 1g.10gb instance, or an eighth of the 80 GB GPU: real series are scaled to fit.
constexpr double kMemoryCap = 9.5 * static_cast<double>(kGib);

// One GPU's pods, named with `tag` ("" for a single GPU) and PIDs from `pid_base`: each
// second, every pod's demand (a random walk with bursts, or a real series) becomes device,
// MIG, process and process-utilization samples, and the exact truth beside them.
class OneGpu {
 public:
  OneGpu(const SyntheticSpec& spec, uint64_t seed, const std::string& tag)
      : spec_(spec),
        rng_(seed),
        tag_(tag),
        procs_(std::clamp(spec.processes_per_pod, 1, 64)),
        pods_(spec.sharing == Sharing::kMig ? std::clamp(spec.pods, 1, 7)
                                            : std::clamp(spec.pods, 1, 8)),
        real_(spec.profiles != nullptr && !spec.profiles->empty()),
        step_(std::max(1, spec.profile_step)),
        state_(pods_) {
    out_.gpu_uuid = util::Cat("GPU-synthetic-", spec.seed, tag);
  }

  Synthetic Make(int64_t pid_base) && {
    Pods(pid_base);
    double prev_t = kT0;
    for (int s = 0; s <= spec_.seconds; ++s) {
      const double t = kT0 + s;
      const std::vector<double> demand = Demands(s);
      DeviceSamples(t, demand);
      ProcessSamples(s, t, prev_t, demand);
      prev_t = t;
    }
    MemoryTruth();
    out_.recording.first_t = kT0;
    out_.recording.last_t = kT0 + spec_.seconds;
    return std::move(out_);
  }

 private:
  struct Pod {
    double level = 0.3, memory = 0;
    const UsageProfile* profile = nullptr;  // when following a real series
    size_t offset = 0;
    double memory_scale = 1;
  };

  double Unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  // The pods, their processes' truth, ownership and starting state.
  void Pods(int64_t pid_base) {
    for (int i = 0; i < pods_; ++i) {
      SyntheticTruth t;
      t.who = ContainerRef{"team", util::Cat("pod-", i, tag_), "main"};
      t.device = spec_.sharing == Sharing::kMig
                     ? util::Cat("MIG-synthetic-", spec_.seed, tag_, "-", i)
                     : out_.gpu_uuid;
      for (int k = 0; k < procs_; ++k) {
        t.pid = pid_base + int64_t{i} * 64 + k;
        out_.truth.push_back(t);
      }
      out_.ownership.owners[t.device].push_back(t.who);
      state_[i].level = 0.05 + 0.5 * Unit();
      state_[i].memory = static_cast<double>(kGib) * (1 + 3 * Unit());
      if (real_) {
        Pod& p = state_[i];
        p.profile = &(*spec_.profiles)[rng_() % spec_.profiles->size()];
        p.offset = rng_() % p.profile->duty.size();
        double peak = *std::max_element(p.profile->memory.begin(), p.profile->memory.end());
        p.memory_scale = peak > kMemoryCap ? kMemoryCap / peak : 1;
      }
    }
  }

  // A profile's value at `s` seconds: linear between its samples, one sample per step.
  double At(const Pod& p, const std::vector<double>& series, int s) const {
    double x = static_cast<double>(p.offset) + s / step_;
    size_t n = series.size();
    auto k = static_cast<size_t>(std::floor(x));
    double frac = x - std::floor(x);
    return series[k % n] * (1 - frac) + series[(k + 1) % n] * frac;
  }

  // Demands this period (and each pod's memory now).
  std::vector<double> Demands(int s) {
    std::vector<double> demand(pods_);
    for (int i = 0; i < pods_; ++i) {
      Pod& p = state_[i];
      if (real_) {
        demand[i] = std::clamp(At(p, p.profile->duty, s), 0.0, 1.0);
        p.memory = std::max(0.25 * static_cast<double>(kGib),
                            At(p, p.profile->memory, s) * p.memory_scale);
        continue;
      }
      p.level = std::clamp(p.level + (Unit() - 0.5) * 0.2, 0.0, 0.9);
      demand[i] = Unit() < 0.1 ? std::min(1.0, p.level * 2) : p.level;
      p.memory = std::clamp(p.memory + (Unit() - 0.45) * 0.05 * kGib, 0.5 * kGib,
                            (spec_.sharing == Sharing::kMig ? 9.0 : 9.5) * kGib);
    }
    return demand;
  }

  // Under time-slicing, demands above the whole GPU are scaled down to fit.
  double Scale(const std::vector<double>& demand) const {
    double sum = 0;
    for (double d : demand) sum += d;
    return spec_.sharing == Sharing::kTimeSlicing && sum > 1 ? 1 / sum : 1;
  }

  void DeviceSamples(double t, const std::vector<double>& demand) {
    double sum = 0, idle = 1;
    for (double d : demand) sum += d, idle *= 1 - d;
    double busy = spec_.sharing == Sharing::kTimeSlicing ? std::min(1.0, sum)
                  : spec_.sharing == Sharing::kMps       ? 1 - idle
                                                         : 0;  // no utilization under MIG
    int64_t used_total = 0;
    for (int i = 0; i < pods_; ++i) used_total += static_cast<int64_t>(state_[i].memory);
    out_.recording.devices.push_back(
        DeviceSample{t, out_.gpu_uuid, 0, "NVIDIA H100 80GB HBM3", kTotalMemory, used_total,
                     static_cast<int>(std::lround(100 * busy)), spec_.sharing == Sharing::kMig});
    if (spec_.sharing != Sharing::kMig) return;
    for (int i = 0; i < pods_; ++i) {  // every pass lists the instances, as NVML does
      out_.recording.migs.push_back(
          MigSample{t, out_.gpu_uuid, out_.truth[size_t(i) * procs_].device, i + 1, "1g.10gb",
                    10 * kGib, static_cast<int64_t>(state_[i].memory)});
    }
  }

  void ProcessSamples(int s, double t, double prev_t, const std::vector<double>& demand) {
    const double scale = Scale(demand);
    for (size_t n = 0; n < out_.truth.size(); ++n) {
      const size_t i = n / procs_;
      SyntheticTruth& truth = out_.truth[n];
      auto memory = static_cast<int64_t>(state_[i].memory) / procs_;
      if (s > 0 && spec_.sharing != Sharing::kMig) {
        // The period (prev_t, t] ran at this period's demand; memory held its previous value.
        // The truth is exact; NVML reports whole percents.
        double share = demand[i] * scale / procs_;
        int sm = static_cast<int>(std::lround(100 * share));
        truth.sm_seconds += share * (t - prev_t);
        out_.recording.process_utils.push_back(
            ProcessUtilSample{t, out_.gpu_uuid, truth.pid, std::llround(t * 1e6), sm, 0});
      }
      std::optional<int> gi;
      if (spec_.sharing == Sharing::kMig) gi = static_cast<int>(i) + 1;
      out_.recording.processes.push_back(ProcessSample{t, out_.gpu_uuid, truth.pid, memory, gi});
    }
  }

  // Memory truth: each process's used memory holds until its next sample.
  void MemoryTruth() {
    std::map<int64_t, std::pair<SyntheticTruth*, const ProcessSample*>> by_pid;
    for (SyntheticTruth& truth : out_.truth) by_pid[truth.pid] = {&truth, nullptr};
    for (const ProcessSample& p : out_.recording.processes) {
      auto& [truth, last] = by_pid[p.pid];
      if (last != nullptr) {
        truth->memory_byte_seconds += static_cast<double>(last->used_memory) * (p.t - last->t);
      }
      last = &p;
    }
  }

  const SyntheticSpec& spec_;
  std::mt19937_64 rng_;
  std::string tag_;
  int procs_, pods_;
  bool real_;
  double step_;
  std::vector<Pod> state_;
  Synthetic out_;
};

Synthetic MakeOneGpu(const SyntheticSpec& spec, uint64_t seed, const std::string& tag,
                     int64_t pid_base) {
  return OneGpu(spec, seed, tag).Make(pid_base);
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
