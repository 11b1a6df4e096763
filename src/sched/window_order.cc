// Where work with a guarantee window goes (declared in session.h): beside other runs still
// within their windows, so nodes whose runs are past their windows can be cleared for
// guaranteed work without evicting a protected run (the replay's young-run rule,
// docs/SCHEDULING.md "Opportunistic work").
#include <algorithm>
#include <utility>
#include <vector>

#include "sched/session.h"

namespace gpuplane::sched {

bool Session::WindowWork(size_t pod) const {
  if (!ledger_ || !options_.preemption.enabled) return false;
  const int q = queue_of_[pod].queue;
  return q >= 0 && options_.queues->queues()[q].guarantee_window_seconds > 0;
}

double Session::YoungDevices(size_t pod) const {
  if (!WindowWork(pod)) return 0;
  const PodInfo& p = pods_.pods[pod];
  // Placed in this pass, or bound and started within its queue's window.
  if (!p.bound_node.empty() && p.started >= 0 &&
      options_.preemption.now - p.started >=
          options_.queues->queues()[queue_of_[pod].queue].guarantee_window_seconds) {
    return 0;
  }
  double devices = 0;
  for (const ClaimUse& u : p.claims) {
    if (const ClaimAllocation* a = snap_.claim(u.key)) {
      devices += static_cast<double>(a->result.devices.results.size());
    }
  }
  return devices;
}

void Session::CountYoung(size_t pod, double sign) {
  if (young_.empty()) return;  // counted from the snapshot when first needed
  const PodPlacement* placed = snap_.placement(pods_.pods[pod].key);
  if (placed == nullptr || placed->node == model::kNoId) return;
  const double devices = sign * YoungDevices(pod);
  if (devices == 0) return;  // not young (or in no queue)
  young_[placed->node] += devices;
  if (options_.queues->queues()[queue_of_[pod].queue].opportunistic) {
    young_opportunistic_ += devices;
  }
}

void Session::BuildYoung() {
  if (!young_.empty()) return;
  young_.assign(snap_.inventory().nodes().size(), 0);
  for (size_t i = 0; i < pods_.pods.size(); ++i) CountYoung(i, 1);
}

void Session::PreferYoung(size_t pod, bool reorder) {
  if (!WindowWork(pod)) return;
  BuildYoung();
  if (!reorder) {  // a single pod: PlacePod looks for the best young node itself
    prefer_young_ = std::any_of(young_.begin(), young_.end(), [](double d) { return d > 0; });
    return;
  }
  std::vector<model::NodeId> first;
  for (model::NodeId n : snap_.index().order()) {
    if (young_[n] > 0) first.push_back(n);
  }
  if (first.empty()) return;
  // Most devices of young runs first; the policy's order among equals (stable).
  std::stable_sort(first.begin(), first.end(),
                   [&](model::NodeId a, model::NodeId b) { return young_[a] > young_[b]; });
  std::vector<model::NodeId> order = snap_.index().order();
  std::vector<model::NodeId> reordered = first;
  for (model::NodeId n : order) {
    if (young_[n] <= 0) reordered.push_back(n);
  }
  base_order_ = std::move(order);
  snap_.SetOrder(std::move(reordered));
}

model::NodeId Session::BestYoungNode(const std::vector<const alloc::CompiledClaim*>& claims,
                                     size_t tier, const std::vector<bool>& tried) {
  alloc::NodeIndex& index = snap_.index();
  model::NodeId best = model::kNoId;
  for (model::NodeId n = 0; n < young_.size(); ++n) {
    if (young_[n] <= 0 || tried[n]) continue;
    const bool better = best == model::kNoId || young_[n] > young_[best] ||
                        (young_[n] == young_[best] && index.PositionOf(n) < index.PositionOf(best));
    if (better && index.MayFit(claims, n, tier)) best = n;
  }
  return best;
}

void Session::RestoreOrder() {
  prefer_young_ = false;
  if (base_order_.empty()) return;
  snap_.SetOrder(std::move(base_order_));
  base_order_.clear();
}

}  // namespace gpuplane::sched
