#include "sim/engine.h"

#include <algorithm>
#include <memory>

#include "sim/usage_meter.h"
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
        attempts_(jobs.size()),
        meter_(Capacity(snapshot.inventory(), config.load), config.samples, config.sample_span,
               config.horizon) {
    out_.capacity = Capacity(snap_.inventory(), config_.load);
  }

  absl::StatusOr<EngineRun> Go() {
    JobEnds ends;
    FifoQueue queue;
    RunEvents(
        jobs_.size(), [&](size_t j) { return jobs_[j].arrival; }, ends, config_.arrivals, queue,
        [&](double t) { Advance(t); }, [&](size_t j) { return TryStart(j, ends); },
        [&](size_t j) { return Depart(j); });
    if (!error_.ok()) return error_;
    out_.never_started = queue.size();
    out_.end_time = std::max(config_.sample_span, now_);
    Advance(out_.end_time);
    out_.unit_time = meter_.integral();
    out_.samples = std::move(meter_.samples());
    return std::move(out_);
  }

 private:
  struct Attempt {
    double started = 0;
    double units = 0;
  };

  static double Capacity(const model::Inventory& inv, const sched::LoadModel& load) {
    double capacity = 0;
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) capacity += load.Capacity(inv, n);
    return capacity;
  }

  void Advance(double t) {
    now_ = t;
    meter_.Advance(t, used_);
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
  UsageMeter meter_;
  EngineRun out_;
  absl::Status error_;
  double now_ = 0, used_ = 0;
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
