// Session's queue limits (declared in session.h): which leaf queue each pod is in, the gate
// before and after placing a job, and what placed pods hold against their queues.
#include <utility>
#include <vector>

#include "sched/session.h"

namespace gpuplane::sched {

void Session::SetUpQueues() {
  if (options_.queues == nullptr || options_.queues->empty()) return;
  ledger_ = std::make_unique<QueueLedger>(*options_.queues, snap_.inventory());
  queue_of_.reserve(pods_.pods.size());
  for (const PodInfo& p : pods_.pods)
    queue_of_.push_back(options_.queues->QueueOf(p.pod->metadata));
}

std::optional<Status> Session::QueueGate(const std::vector<size_t>& pods, bool placed) const {
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
  if (!ledger_->limits()) return std::nullopt;
  return ledger_->OverLimit(placed ? ledger_->ChargeOf(work, snap_)
                                   : ledger_->DemandOf(work, snap_));
}

void Session::ChargeQueues(const std::vector<size_t>& pods) {
  if (!ledger_) return;
  for (size_t p : pods) {
    if (queue_of_[p].queue < 0) continue;
    QueueCharge c = ledger_->ChargeOf({{&pods_.pods[p], queue_of_[p].queue}}, snap_);
    ledger_->Charge(c);
    charges_[p] = std::move(c);
  }
}

void Session::RefundQueue(size_t pod) {
  auto it = charges_.find(pod);
  if (it == charges_.end()) return;
  ledger_->Refund(it->second);
  charges_.erase(it);
}

}  // namespace gpuplane::sched
