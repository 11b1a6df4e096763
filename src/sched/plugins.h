// The extension points of a Session, shaped like the Kubernetes scheduling framework's and
// KAI's: queue order (which pod or gang goes first), node filters (which nodes a pod may use
// at all, before any device is looked at), node order (the policy's preference among nodes
// that fit: the Session takes the first node, in this order, on which the allocator succeeds)
// and the device scorer (alloc::Scorer: which devices on the chosen node). Gangs and topology
// domains are the Session's own stages (gang.h, topology.h). A Placer replaces node order and
// device scoring for single pods: it names the node and devices itself (the simulator's FGD
// family of policies, which decide on their own view of the cluster; policy_placer.h).
//
// Plugins hold no cluster state; they read the Snapshot they are given, except a Placer,
// which keeps its own view and is told of every placement and removal (Reserve, Unreserve).
// Implementations must be deterministic. Not thread-safe unless stated.
#ifndef GPUPLANE_SCHED_PLUGINS_H_
#define GPUPLANE_SCHED_PLUGINS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "alloc/request.h"
#include "sched/pod_set.h"
#include "sched/pod_topology.h"
#include "sched/snapshot.h"
#include "sched/status.h"

namespace gpuplane::sched {

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  // Whether `a` goes before `b`.
  virtual bool Less(const PodInfo& a, const PodInfo& b) const = 0;
};

// Higher spec.priority first, then earlier creationTimestamp, then input order.
class PriorityOrder : public QueueOrder {
 public:
  bool Less(const PodInfo& a, const PodInfo& b) const override;
};

// The first resource in `want` (other than CPU and memory, in thousandths) that `allocatable`
// minus `requested` (when given) cannot hold, a resource it does not list holding none; null
// when all fit.
const std::string* OtherShort(const std::map<std::string, int64_t>& want,
                              const std::map<std::string, int64_t>& allocatable,
                              const std::map<std::string, int64_t>* requested);

class NodeFilter {
 public:
  virtual ~NodeFilter() = default;
  // The rule that rejects `node` for `pod`, or nullopt when it passes. `taint` receives the
  // first untolerated taint ("key=value:Effect") where the rule is kNodeTaint.
  virtual std::optional<Rule> Filter(const Snapshot& s, const PodInfo& pod, model::NodeId node,
                                     std::string& taint) const = 0;
};

// Kubernetes' node filters that apply before devices: NodeUnschedulable, TaintToleration
// (NoSchedule and NoExecute), NodeSelector (spec.nodeSelector), NodeAffinity (its required
// terms; preferred ones are not scored), VolumeBinding's node checks (the node affinity of the
// pod's volumes, sched/pod_volumes.h), NodePorts (host ports taken by placed pods,
// sched/host_ports.h), NodeResourcesFit (CPU and memory requests against
// allocatable, minus what placed pods request; the same for every other resource requested,
// such as ephemeral-storage or a device plugin's nvidia.com/gpu, one a Node does not list
// holding none; and allocatable pods, minus the placed ones), PodTopologySpread and
// InterPodAffinity (sched/pod_topology.h; their counts are kept for the last pod and snapshot
// version asked about, so one instance serves one session).
class KubeNodeFilter : public NodeFilter {
 public:
  std::optional<Rule> Filter(const Snapshot& s, const PodInfo& pod, model::NodeId node,
                             std::string& taint) const override;
  // The inter-pod rules alone for `pod` on `node`, with `also` going there with it (a gang's
  // members placed together).
  std::optional<Rule> FilterBeside(const Snapshot& s, const PodInfo& pod, model::NodeId node,
                                   const std::vector<const PodInfo*>& also) const;

 private:
  // Whether `pod` has inter-pod rules to check against `s`.
  static bool Asks(const Snapshot& s, const PodInfo& pod);
  const PodTopology& TopologyOf(const Snapshot& s, const PodInfo& pod) const;

  struct Memo {
    const Snapshot* snapshot = nullptr;
    uint64_t version = 0;
    const PodInfo* pod = nullptr;
    std::optional<PodTopology> topology;
  };
  mutable Memo memo_;
  mutable SpreadDomainCache domains_;
};

class NodeOrder {
 public:
  virtual ~NodeOrder() = default;
  // The nodes, most preferred first (a permutation of the inventory's node ids).
  virtual std::vector<model::NodeId> Order(const Snapshot& s) const = 0;
  // Whether the order depends on what is placed: the Session asks again before each decision.
  virtual bool dynamic() const { return false; }
};

// A node and the devices on it a Placer chose (empty: the allocator's first fit).
struct Pick {
  model::NodeId node = model::kNoId;
  std::vector<model::DeviceId> devices;
};

class Placer {
 public:
  virtual ~Placer() = default;
  // Where `pod` goes, or nullopt when the placer finds no node (the pod is Unschedulable).
  // The Session then allocates the pod's claims on that node, preferring those devices.
  virtual std::optional<Pick> Choose(const Snapshot& s, const PodInfo& pod) = 0;
  // The pod was placed on `node`, its claims allocated as `choices` (what the allocator took,
  // which may differ from the pick).
  virtual void Reserve(const PodInfo& pod, model::NodeId node,
                       const std::vector<alloc::Choice>& choices) = 0;
  // The pod placed by a Reserve left (evicted or ended).
  virtual void Unreserve(const PodInfo& pod, model::NodeId node,
                         const std::vector<alloc::Choice>& choices) = 0;
};

// What the load orders count as a node's use and size: per device its units (a simulator's
// GPUs' worth: 1 for a whole GPU, a MIG slice its memory share) and per node its capacity in
// those units. Empty: 1 per device, and a node's capacity is its number of devices.
struct LoadModel {
  std::vector<double> device_units;   // by DeviceId
  std::vector<double> node_capacity;  // by NodeId

  double Units(model::DeviceId d) const { return device_units.empty() ? 1.0 : device_units[d]; }
  double Capacity(const model::Inventory& inv, model::NodeId n) const {
    return node_capacity.empty() ? static_cast<double>(inv.nodes()[n].devices.size())
                                 : node_capacity[n];
  }
};

// The policy names MakeNodeOrder accepts, each one algorithm:
//   "gpuplane"   least worth first, then inventory order: a job takes the cheapest model that
//                fits, and nodes fill one after another, so big devices and whole nodes stay
//                free (a static order: right for one pass);
//   "first-fit"  inventory order, what `gpuplane allocate` does;
//   "pack"       fullest first by the load model (ties in inventory order), recomputed before
//                each decision: best fit, keeping whole nodes free;
//   "spread"     least loaded first, recomputed likewise (Kubernetes' LeastAllocated);
//   "worth-pack" least worth first, then fullest first.
// Nodes with no capacity count as full. Claims count toward the node of their devices.
const std::vector<std::string>& NodeOrderNames();
absl::StatusOr<std::unique_ptr<NodeOrder>> MakeNodeOrder(std::string_view name,
                                                         LoadModel load = {});

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_PLUGINS_H_
