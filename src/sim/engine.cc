#include "sim/engine.h"

#include <algorithm>
#include <memory>

#include "util/strings.h"

namespace gpuplane::sim {
namespace {

// The state of one run: the session, units in use, and the integral and samples over time.
class Run {
 public:
  Run(sched::Snapshot& snapshot, const sched::PodSet& pods, const std::vector<EngineJob>& jobs,
      const EngineConfig& config, const EngineHooks& hooks, sched::Session& session)
      : snap_(snapshot),
        pods_(pods),
        jobs_(jobs),
        config_(config),
        hooks_(hooks),
        session_(session),
        attempts_(jobs.size()) {
    const model::Inventory& inv = snap_.inventory();
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
      out_.capacity += config_.load.Capacity(inv, n);
    }
    const double span = config_.sample_span;
    every_ = span > 0 ? span / std::max(1, config_.samples) : 1;
  }

  absl::StatusOr<EngineRun> Go() {
    JobEnds ends;
    const std::list<size_t> queue = RunFifoEvents(
        jobs_.size(), [&](size_t j) { return jobs_[j].arrival; }, ends, config_.arrivals,
        [&](double t) { Advance(t); }, [&](size_t j) { return TryStart(j, ends); },
        [&](size_t j) { return Depart(j); });
    if (!error_.ok()) return error_;
    out_.never_started = queue.size();
    out_.end_time = std::max(config_.sample_span, now_);
    Advance(out_.end_time);
    return std::move(out_);
  }

 private:
  struct Attempt {
    double started = 0;
    double units = 0;
  };

  // Samples up to t, then integrates the units in use up to min(t, horizon).
  void Advance(double t) {
    now_ = t;
    while (config_.samples > 0 && next_sample_ <= t && next_sample_ <= config_.sample_span) {
      out_.samples.emplace_back(next_sample_, out_.capacity > 0 ? used_ * 100 / out_.capacity : 0);
      next_sample_ += every_;
    }
    const double upto = std::min(t, config_.horizon);
    if (upto > last_) out_.unit_time += used_ * (upto - last_);
    last_ = std::max(last_, upto);
  }

  bool TryStart(size_t j, JobEnds& ends) {
    if (!error_.ok()) return false;
    sched::Decision d = session_.Decide(j);
    if (!d.status.ok()) return false;
    std::vector<model::DeviceId> devices;
    for (const sched::ClaimUse& use : pods_.pods[j].claims) {
      const sched::ClaimAllocation* a = snap_.claim(use.key);
      if (a == nullptr) continue;
      for (const alloc::Choice& ch : a->choices) devices.push_back(ch.device);
    }
    Attempt& at = attempts_[j];
    at.started = now_;
    at.units = 0;
    for (model::DeviceId dev : devices) at.units += config_.load.Units(dev);
    used_ += at.units;
    out_.waits.push_back(now_ - jobs_[j].arrival);
    const double length = hooks_.run_time ? hooks_.run_time(j, devices) : jobs_[j].duration;
    ends.push({now_ + length, j});
    return true;
  }

  bool Depart(size_t j) {
    absl::Status st = session_.Evict(j);
    if (!st.ok() && error_.ok()) {
      error_ = absl::InternalError(
          util::Cat("ending ", pods_.pods[j].key, ": ", std::string(st.message())));
    }
    used_ -= attempts_[j].units;
    return hooks_.ended ? hooks_.ended(j, attempts_[j].started, attempts_[j].units) : false;
  }

  sched::Snapshot& snap_;
  const sched::PodSet& pods_;
  const std::vector<EngineJob>& jobs_;
  const EngineConfig& config_;
  const EngineHooks& hooks_;
  sched::Session& session_;
  std::vector<Attempt> attempts_;
  EngineRun out_;
  absl::Status error_;
  double now_ = 0, last_ = 0, used_ = 0, next_sample_ = 0, every_ = 1;
};

}  // namespace

absl::StatusOr<EngineRun> RunEngine(sched::Snapshot& snapshot, const sched::PodSet& pods,
                                    const std::vector<EngineJob>& jobs, const EngineConfig& config,
                                    const EngineHooks& hooks) {
  sched::SessionOptions options;
  options.policy = config.policy;
  options.load = config.load;
  options.devices = config.devices;
  options.explain = false;
  absl::StatusOr<std::unique_ptr<sched::Session>> session =
      sched::Session::Make(snapshot, pods, std::move(options));
  if (!session.ok()) return session.status();
  return Run(snapshot, pods, jobs, config, hooks, **session).Go();
}

}  // namespace gpuplane::sim
