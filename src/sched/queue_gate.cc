// Session's queues (declared in session.h): which leaf queue each pod is in, the limit gate
// before and after placing a job, what placed pods hold against their queues, and the fair
// shares reclaim across queues keeps.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sched/fair_share.h"
#include "sched/session.h"
#include "util/strings.h"

namespace gpuplane::sched {

void Session::SetUpQueues() {
  if (options_.queues == nullptr || options_.queues->empty()) return;
  ledger_ = std::make_unique<QueueLedger>(*options_.queues, snap_.inventory());
  queue_of_.reserve(pods_.pods.size());
  for (const PodInfo& p : pods_.pods)
    queue_of_.push_back(options_.queues->QueueOf(p.pod->metadata));
}

std::optional<Status> Session::QueueGate(const std::vector<size_t>& pods, bool placed) {
  if (!ledger_) return std::nullopt;
  std::vector<std::pair<const PodInfo*, int>> work;
  for (size_t p : pods) {
    const QueueChoice& q = queue_of_[p];
    if (q.queue < 0) {
      Status s = Status::Of(Code::kUnresolvable, Stage::kQueue, q.problem);
      if (pods.size() > 1) s.subject = pods_.pods[p].key;
      return s;
    }
    work.emplace_back(&pods_.pods[p], q.queue);
  }
  if (ledger_->limits()) {
    std::optional<Status> over = ledger_->OverLimit(placed ? ledger_->ChargeOf(work, snap_)
                                                           : ledger_->DemandOf(work, snap_));
    if (over) return over;
  }
  return placed ? std::nullopt : HeadroomGate(pods);
}

void Session::ChargeQueues(const std::vector<size_t>& pods) {
  if (!ledger_) return;
  for (size_t p : pods) {
    if (queue_of_[p].queue < 0) continue;
    QueueCharge c = ledger_->ChargeOf({{&pods_.pods[p], queue_of_[p].queue}}, snap_);
    ledger_->Charge(c);
    charges_[p] = std::move(c);
    CountYoung(p, 1);
  }
}

void Session::RefundQueue(size_t pod) {
  auto it = charges_.find(pod);
  if (it == charges_.end()) return;
  ledger_->Refund(it->second);
  charges_.erase(it);
}

namespace {

// Devices a waiting pod needs at least: its unallocated claims' ExactCount requests, and one
// per firstAvailable request (its smallest alternative).
int MinDevices(const PodInfo& p, const Snapshot& snap) {
  int n = 0;
  for (const ClaimUse& u : p.claims) {
    if (snap.claim(u.key) != nullptr) continue;
    for (const api::DeviceRequest& r : u.claim->spec.devices.requests) {
      if (r.exactly) {
        const bool all = r.exactly->allocation_mode == "All";
        if (!all && !r.exactly->admin_access.value_or(false)) {
          n += static_cast<int>(std::max<int64_t>(1, r.exactly->count.value_or(1)));
        }
      } else if (!r.first_available.empty()) {
        int64_t least = INT64_MAX;
        for (const api::DeviceSubRequest& s : r.first_available) {
          least = std::min<int64_t>(least, std::max<int64_t>(1, s.count.value_or(1)));
        }
        n += static_cast<int>(least);
      }
    }
  }
  return n;
}

}  // namespace

Preemptor Session::PreemptorOf(const std::vector<size_t>& pods, int32_t priority) const {
  Preemptor pre;
  pre.priority = priority;
  pre.queue = ledger_ && !pods.empty() ? queue_of_[pods.front()].queue : -1;
  for (size_t p : pods) pre.pods.push_back(MinDevices(pods_.pods[p], snap_));
  return pre;
}

std::vector<QueueUse> Session::QueueUses() {
  if (!ledger_) return {};
  const std::vector<QueueNode>& queues = options_.queues->queues();
  if (fair_devices_.empty()) {
    std::vector<double> demand(queues.size(), 0);
    for (size_t q = 0; q < queues.size(); ++q) demand[q] = ledger_->devices(static_cast<int>(q));
    for (size_t p = 0; p < pods_.pods.size(); ++p) {
      if (queue_of_[p].queue < 0 || snap_.placement(pods_.pods[p].key) != nullptr) continue;
      demand[queue_of_[p].queue] += MinDevices(pods_.pods[p], snap_);
    }
    const double capacity = DeviceCapacity();
    std::vector<double> usage(queues.size(), 0);
    for (size_t q = 0; q < queues.size(); ++q) {
      auto u = options_.queue_usage.find(queues[q].name);
      if (u != options_.queue_usage.end()) usage[q] = u->second;
    }
    fair_devices_ = FairShare(options_.queues->ShareInputs("gpu", demand, usage), capacity,
                              {.usage_k = options_.usage_k});
    reclaimed_.assign(queues.size(), 0);
  }
  std::vector<QueueUse> out(queues.size());
  for (size_t q = 0; q < queues.size(); ++q) {
    out[q] = {ledger_->devices(static_cast<int>(q)) + reclaimed_[q], fair_devices_[q]};
  }
  return out;
}

double Session::OtherDemand() const {
  if (!ledger_) return -1;
  const std::vector<QueueNode>& queues = options_.queues->queues();
  if (std::none_of(queues.begin(), queues.end(),
                   [](const QueueNode& q) { return q.opportunistic; })) {
    return -1;
  }
  double demand = 0;
  for (size_t q = 0; q < queues.size(); ++q) {
    if (!queues[q].opportunistic) demand += ledger_->devices(static_cast<int>(q));
  }
  for (size_t p = 0; p < pods_.pods.size(); ++p) {
    const int q = queue_of_[p].queue;
    if (q < 0 || queues[q].opportunistic || snap_.placement(pods_.pods[p].key) != nullptr) {
      continue;
    }
    demand += MinDevices(pods_.pods[p], snap_);
  }
  return demand;
}

double Session::DeviceCapacity() {
  if (capacity_ >= 0) return capacity_;  // the inventory never changes in a Session
  capacity_ = static_cast<double>(snap_.inventory().counter_sets().size());
  for (const model::DeviceInfo& d : snap_.inventory().devices()) {
    if (d.consumes.empty()) capacity_ += 1;
  }
  return capacity_;
}

std::optional<Status> Session::HeadroomGate(const std::vector<size_t>& pods) {
  if (!ledger_ || !options_.preemption.enabled || pods.empty()) return std::nullopt;
  const int queue = queue_of_[pods.front()].queue;
  const std::vector<QueueNode>& queues = options_.queues->queues();
  if (queue < 0 || !queues[queue].opportunistic) return std::nullopt;
  BuildYoung();
  if (other_demand_ < 0) other_demand_ = OtherDemand();
  double need = 0;
  for (size_t p : pods) need += MinDevices(pods_.pods[p], snap_);
  const double capacity = DeviceCapacity();
  const double rise = options_.opportunistic_rise;
  if (young_opportunistic_ + need + other_demand_ + rise <= capacity + 1e-9) return std::nullopt;
  Status s = Status::Of(
      Code::kUnschedulable, Stage::kQueue,
      util::Cat("Opportunistic queue ", queues[queue].name,
                " waits for headroom: the other queues' work holds or waits for ",
                util::Fixed(other_demand_, 0), rise > 0 ? " (and may want " : "",
                rise > 0 ? util::Fixed(rise, 0) : "",
                rise > 0 ? " more within the guarantee window)" : "", " of the cluster's ",
                util::Fixed(capacity, 0), " devices, opportunistic runs within their windows hold ",
                util::Fixed(young_opportunistic_, 0), ", and this job needs ", util::Fixed(need, 0),
                "; it starts when that fits, so that it is not evicted within its window."));
  s.hint = "the other queues' waiting work starting, or work ending";
  return s;
}

std::vector<double> Session::QueueDevices() const {
  if (!ledger_) return {};
  std::vector<double> out(options_.queues->queues().size());
  for (size_t q = 0; q < out.size(); ++q) out[q] = ledger_->devices(static_cast<int>(q));
  return out;
}

bool Session::KeepsQueueFloors(const Preemptor& pre, const std::vector<size_t>& jobs) {
  if (!ledger_ || pre.queue < 0) return true;
  std::vector<Running> running(jobs.size());
  std::vector<size_t> all(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    running[i].placement = {{0, jobs_[jobs[i]].devices}};
    running[i].queue = jobs_[jobs[i]].queue;
    running[i].priority = jobs_[jobs[i]].priority;
    all[i] = i;
  }
  return KeepsFloors(pre, running, all, QueueUses());
}

void Session::NoteFairShare(const Preemptor& pre, Status& status) {
  if (!ledger_ || pre.queue < 0) return;
  const QueueUse use = QueueUses()[pre.queue];
  if (use.allocated + pre.Gpus() <= use.fair + 1e-9) return;
  bool others = false;  // work of other queues runs: reclaim is what the share forbids
  for (const Job& job : RunningJobs())
    others = others || (job.queue >= 0 && job.queue != pre.queue);
  if (!others) return;
  util::Append(status.message, status.message.empty() ? "" : " ", "Queue ",
               options_.queues->queues()[pre.queue].name, " is at its fair share (",
               util::Fixed(use.allocated, 0), " of ", util::Fixed(use.fair, 1),
               " devices) and may not reclaim from other queues for ", pre.Gpus(),
               " more; it waits for its share to grow or its own work to end.");
}

void Session::NoteReclaim(const Preemptor& pre, const std::vector<size_t>& jobs) {
  if (!ledger_ || pre.queue < 0) return;
  (void)QueueUses();  // the shares are fixed before the first change
  for (size_t j : jobs) {
    if (jobs_[j].queue >= 0) reclaimed_[jobs_[j].queue] -= jobs_[j].devices;
  }
  reclaimed_[pre.queue] += pre.Gpus();
}

}  // namespace gpuplane::sched
