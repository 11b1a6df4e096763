#include "sched/plugins.h"

#include <algorithm>
#include <numeric>

#include "alloc/request.h"
#include "util/strings.h"

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

}  // namespace

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
  const std::map<std::string, std::string>& labels = s.inventory().nodes()[node].labels;
  for (const auto& [key, value] : pod.pod->spec.node_selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return Rule::kNodeSelector;
  }
  bool cpu_known = f.cpu_allocatable >= 0, mem_known = f.memory_allocatable >= 0;
  if ((cpu_known && pod.cpu_milli > f.cpu_allocatable) ||
      (mem_known && pod.memory_bytes > f.memory_allocatable)) {
    return Rule::kNodeTooSmall;
  }
  if ((cpu_known && pod.cpu_milli > f.cpu_allocatable - f.cpu_requested) ||
      (mem_known && pod.memory_bytes > f.memory_allocatable - f.memory_requested)) {
    return Rule::kNodeResources;
  }
  return std::nullopt;
}

const std::vector<std::string>& NodeOrderNames() {
  static const std::vector<std::string> kNames = {"gpuplane", "first-fit"};
  return kNames;
}

absl::StatusOr<std::unique_ptr<NodeOrder>> MakeNodeOrder(std::string_view name) {
  if (name == "gpuplane") return std::make_unique<WorthOrder>();
  if (name == "first-fit") return std::make_unique<InventoryOrder>();
  std::string names;
  for (const std::string& n : NodeOrderNames()) util::Append(names, names.empty() ? "" : ", ", n);
  return absl::InvalidArgumentError(
      util::Cat("unknown policy \"", name, "\" for schedule: use one of ", names));
}

}  // namespace gpuplane::sched
