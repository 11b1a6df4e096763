// Queue limits in a scheduling pass: what each queue of a QueueTree uses per resource key
// (`cpu` in cores, `memory` in bytes, `gpu`, `gpu/<model>`, `deviceclass/<name>` in devices),
// counted from the pods placed and the devices their claims hold, and the check that placing
// more work keeps its leaf queue and every ancestor within their limits. Only keys some queue
// limits are counted. A claim counts once, for the queue of the first placed pod that uses
// it; a shareable device counts once per claim that holds part of it; admin-access results
// count for nothing. A device is a GPU when its `type` attribute is "gpu", or when it has no
// `type` but a `productName`; `gpu/<model>` matches a GPU whose productName is the model or
// has it as one word ("H100" matches "NVIDIA H100 80GB HBM3"), ignoring case.
//
// Ownership: borrows the tree and the inventory, which must outlive it. Not thread-safe.
#ifndef GPUPLANE_SCHED_QUEUE_LEDGER_H_
#define GPUPLANE_SCHED_QUEUE_LEDGER_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/inventory.h"
#include "sched/pod_set.h"
#include "sched/queues.h"
#include "sched/snapshot.h"
#include "sched/status.h"

namespace gpuplane::sched {

// What some pods add to their queues: amounts per queue id and key, devices of any kind per
// queue id (what reclaim across queues counts), and the claims charged.
struct QueueCharge {
  std::map<int, std::map<std::string, double>> amounts;
  std::map<int, double> devices;
  std::set<std::string> claims;
};

class QueueLedger {
 public:
  QueueLedger(const QueueTree& tree, const model::Inventory& inventory);

  // False when no queue limits anything: every check passes.
  bool limits() const { return !limited_.empty(); }

  // What placing `pods` (each with its leaf queue; -1 counts nothing) adds now, from the
  // snapshot's allocations of their claims; claims already charged count nothing.
  QueueCharge ChargeOf(const std::vector<std::pair<const PodInfo*, int>>& pods,
                       const Snapshot& snap) const;
  // What the pods need at least before they are placed: CPU, memory, and the devices of
  // ExactCount requests of their claims not allocated yet, per DeviceClass.
  QueueCharge DemandOf(const std::vector<std::pair<const PodInfo*, int>>& pods,
                       const Snapshot& snap) const;

  // Unschedulable (stage queue) naming the first queue on a path that `add` takes over its
  // limit, with the resource, what is in use, what is asked and the limit; nullopt within.
  std::optional<Status> OverLimit(const QueueCharge& add) const;

  void Charge(const QueueCharge& c);
  void Refund(const QueueCharge& c);

  // Devices of any kind the placed work of leaf queue `queue` holds.
  double devices(int queue) const { return devices_[queue]; }

 private:
  void AddDevice(const std::string& device_class, model::DeviceId d,
                 std::map<std::string, double>& into) const;
  void Apply(const QueueCharge& c, double sign);
  // Each pod's CPU and memory requests where limited, then `per_claim` for each claim it
  // uses (with the pod's queue and that queue's amounts).
  using PerClaim =
      std::function<void(const ClaimUse&, int, std::map<std::string, double>&, QueueCharge&)>;
  QueueCharge Sum(const std::vector<std::pair<const PodInfo*, int>>& pods,
                  const PerClaim& per_claim) const;

  const QueueTree& tree_;
  const model::Inventory& inv_;
  std::set<std::string, std::less<>> limited_;       // keys with a limit in some queue
  std::vector<std::string> models_;                  // the <model> of limited gpu/<model> keys
  std::vector<std::map<std::string, double>> used_;  // per queue id, key -> amount
  std::vector<double> devices_;                      // per leaf queue id
  std::set<std::string> charged_claims_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_QUEUE_LEDGER_H_
