#include "sched/plugins.h"

#include <algorithm>
#include <numeric>

#include "alloc/request.h"
#include "model/node_selector.h"
#include "sched/extended_resources.h"
#include "sched/pod_volumes.h"
#include "util/strings.h"
#include "util/suggest.h"

namespace gpuplane::sched {
namespace {

class WorthOrder : public NodeOrder {
 public:
  std::vector<model::NodeId> Order(const Snapshot& s) const override {
    std::vector<model::NodeId> order(s.inventory().nodes().size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](model::NodeId a, model::NodeId b) {
      return s.node(a).worth < s.node(b).worth;
    });
    return order;
  }
};

class InventoryOrder : public NodeOrder {
 public:
  std::vector<model::NodeId> Order(const Snapshot& s) const override {
    std::vector<model::NodeId> order(s.inventory().nodes().size());
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
};

// Fullest ("pack") or least loaded ("spread") first by the load model, optionally after worth.
class LoadOrder : public NodeOrder {
 public:
  LoadOrder(bool pack, bool worth_first, LoadModel load)
      : pack_(pack), worth_first_(worth_first), load_(std::move(load)) {}

  bool dynamic() const override { return true; }

  std::vector<model::NodeId> Order(const Snapshot& s) const override {
    const model::Inventory& inv = s.inventory();
    std::vector<double> fraction = Used(s);
    for (model::NodeId n = 0; n < fraction.size(); ++n) {
      const double cap = load_.Capacity(inv, n);
      fraction[n] = cap > 0 ? fraction[n] / cap : 1;
    }
    std::vector<model::NodeId> order(inv.nodes().size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](model::NodeId a, model::NodeId b) {
      if (worth_first_ && s.node(a).worth != s.node(b).worth) {
        return s.node(a).worth < s.node(b).worth;
      }
      return pack_ ? fraction[a] > fraction[b] : fraction[a] < fraction[b];
    });
    return order;
  }

 private:
  // Units in use per node: each claim's devices summed, then added to their node.
  std::vector<double> Used(const Snapshot& s) const {
    const model::Inventory& inv = s.inventory();
    std::vector<double> used(inv.nodes().size(), 0);
    for (const auto& [key, a] : s.claims()) {
      double units = 0;
      model::NodeId node = a.node;
      auto add = [&](model::DeviceId d) {
        units += load_.Units(d);
        if (node == model::kNoId) node = inv.devices()[d].node;
      };
      for (const alloc::Choice& ch : a.choices) add(ch.device);
      if (a.choices.empty()) {  // allocated before the snapshot: its result names the devices
        for (const api::DeviceRequestAllocationResult& r : a.result.devices.results) {
          if (std::optional<model::DeviceId> d = inv.FindDevice(r.driver, r.pool, r.device))
            add(*d);
        }
      }
      if (node != model::kNoId) used[node] += units;
    }
    return used;
  }

  bool pack_, worth_first_;
  LoadModel load_;
};

}  // namespace

const std::string* OtherShort(const std::map<std::string, int64_t>& want,
                              const std::map<std::string, int64_t>& allocatable,
                              const std::map<std::string, int64_t>* requested) {
  for (const auto& [name, v] : want) {
    auto a = allocatable.find(name);
    int64_t free = a == allocatable.end() ? 0 : a->second;
    if (requested != nullptr) {
      auto r = requested->find(name);
      if (r != requested->end()) free -= r->second;
    }
    if (v > free) return &name;
  }
  return nullptr;
}

bool PriorityOrder::Less(const PodInfo& a, const PodInfo& b) const {
  if (a.priority != b.priority) return a.priority > b.priority;
  const std::string& ca = a.pod->metadata.creation_timestamp;
  const std::string& cb = b.pod->metadata.creation_timestamp;
  if (ca != cb && !ca.empty() && !cb.empty()) return ca < cb;  // RFC 3339 in UTC sorts as text
  return a.input < b.input;
}

std::optional<Rule> KubeNodeFilter::Filter(const Snapshot& s, const PodInfo& pod,
                                           model::NodeId node, std::string& taint) const {
  const NodeFacts& f = s.node(node);
  if (f.unschedulable) return Rule::kNodeUnschedulable;
  for (const api::Taint& t : f.taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (!alloc::Tolerates(pod.pod->spec.tolerations, t)) {
      if (taint.empty())
        taint = util::Cat(t.key, t.value.empty() ? "" : "=" + t.value, ":", t.effect);
      return Rule::kNodeTaint;
    }
  }
  const model::NodeInfo& info = s.inventory().nodes()[node];
  for (const auto& [key, value] : pod.pod->spec.node_selector) {
    auto it = info.labels.find(key);
    if (it == info.labels.end() || it->second != value) return Rule::kNodeSelector;
  }
  const std::optional<api::Affinity>& affinity = pod.pod->spec.affinity;
  if (affinity && affinity->node_affinity && affinity->node_affinity->required &&
      !model::MatchesNodeSelector(*affinity->node_affinity->required, info.name, info.labels)) {
    return Rule::kNodeAffinity;
  }
  if (!pod.volume_node.empty() && pod.volume_node != info.name) return Rule::kVolumeNode;
  for (const api::NodeSelector& volumes : pod.volume_selectors) {
    if (!model::MatchesNodeSelector(volumes, info.name, info.labels)) return Rule::kVolumeNode;
  }
  if (!pod.volumes_to_bind.empty()) {
    if (std::optional<Rule> r = ChooseVolumes({&pod}, info.name, info.labels, s.volumes_taken())) {
      return *r;
    }
  }
  for (const std::string& c : pod.rwop_claims) {
    if (s.ReadWriteOncePodUser(c) != nullptr) return Rule::kVolumeInUse;
  }
  if (!pod.host_ports.empty() && AnyConflict(pod.host_ports, f.host_ports)) {
    return Rule::kNodePorts;
  }
  if (!pod.inline_disks.empty() && AnyDiskConflict(pod.inline_disks, f.inline_disks)) {
    return Rule::kDiskConflict;
  }
  if (!pod.csi_volumes.empty() &&
      OverVolumeLimits(pod.csi_volumes, f.csi_volumes, f.volume_limits)) {
    return Rule::kVolumeLimits;
  }
  bool cpu_known = f.cpu_allocatable >= 0, mem_known = f.memory_allocatable >= 0;
  const std::map<std::string, int64_t>& other = OtherOn(pod, f);
  if ((cpu_known && pod.cpu_milli > f.cpu_allocatable) ||
      (mem_known && pod.memory_bytes > f.memory_allocatable) ||
      (f.has_node && OtherShort(other, f.other_allocatable, nullptr) != nullptr)) {
    return Rule::kNodeTooSmall;
  }
  if ((cpu_known && pod.cpu_milli > f.cpu_allocatable - f.cpu_requested) ||
      (mem_known && pod.memory_bytes > f.memory_allocatable - f.memory_requested) ||
      (f.pods_allocatable >= 0 && f.pods_placed >= f.pods_allocatable) ||
      (f.has_node && OtherShort(other, f.other_allocatable, &f.other_requested))) {
    return Rule::kNodeResources;
  }
  if (Asks(s, pod)) return TopologyOf(s, pod).Check(s, node, {});
  return std::nullopt;
}

std::optional<Rule> KubeNodeFilter::FilterBeside(const Snapshot& s, const PodInfo& pod,
                                                 model::NodeId node,
                                                 const std::vector<const PodInfo*>& also) const {
  if (!pod.labels || (also.empty() && !Asks(s, pod))) return std::nullopt;
  return TopologyOf(s, pod).Check(s, node, also);
}

bool KubeNodeFilter::Asks(const Snapshot& s, const PodInfo& pod) {
  return pod.labels && (s.anti_affinity_pods() > 0 || AsksPodTopology(pod.pod->spec));
}

const PodTopology& KubeNodeFilter::TopologyOf(const Snapshot& s, const PodInfo& pod) const {
  if (memo_.snapshot != &s || memo_.version != s.version() || memo_.pod != &pod ||
      !memo_.topology) {
    memo_.topology.emplace(s, pod, &domains_);
    memo_.snapshot = &s;
    memo_.version = s.version();
    memo_.pod = &pod;
  }
  return *memo_.topology;
}

const std::vector<std::string>& NodeOrderNames() {
  static const std::vector<std::string> kNames = {"gpuplane", "first-fit", "pack", "spread",
                                                  "worth-pack"};
  return kNames;
}

absl::StatusOr<std::unique_ptr<NodeOrder>> MakeNodeOrder(std::string_view name, LoadModel load) {
  if (name == "gpuplane") return std::make_unique<WorthOrder>();
  if (name == "first-fit") return std::make_unique<InventoryOrder>();
  if (name == "pack") return std::make_unique<LoadOrder>(true, false, std::move(load));
  if (name == "spread") return std::make_unique<LoadOrder>(false, false, std::move(load));
  if (name == "worth-pack") return std::make_unique<LoadOrder>(true, true, std::move(load));
  std::string names;
  for (const std::string& n : NodeOrderNames()) util::Append(names, names.empty() ? "" : ", ", n);
  return absl::InvalidArgumentError(util::Cat("unknown policy \"", name, "\": use one of ", names,
                                              util::DidYouMean(name, NodeOrderNames())));
}

}  // namespace gpuplane::sched
