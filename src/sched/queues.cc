#include "sched/queues.h"

#include <algorithm>
#include <variant>

#include "util/strings.h"

namespace gpuplane::sched {
namespace {

// Whether the queue takes no fair share of GPUs: its `gpu` weight is 0 and it has no
// guarantee.
bool Opportunistic(const api::QueueSpec& spec) {
  auto gpu = spec.resources.find("gpu");
  if (gpu == spec.resources.end() || !gpu->second.weight || gpu->second.weight->Sign() != 0) {
    return false;
  }
  return !gpu->second.guarantee || gpu->second.guarantee->Sign() == 0;
}

// The node's durations: its own, else `fallback`.
absl::Status ResolveDurations(const api::Queue& q, const QueueNode* parent, QueueNode& n) {
  auto seconds = [&](const std::optional<std::string>& text, std::string_view field,
                     double fallback, double& out) {
    out = fallback;
    if (!text) return absl::OkStatus();
    std::variant<double, std::string> s = api::QueueDurationSeconds(*text);
    if (const auto* problem = std::get_if<std::string>(&s)) {
      return absl::InvalidArgumentError(
          util::Cat("Queue ", q.metadata.name, ": spec.", field, ": ", *problem));
    }
    out = std::get<double>(s);
    return absl::OkStatus();
  };
  const double window = Opportunistic(q.spec) ? kDefaultGuaranteeWindowSeconds
                        : parent != nullptr   ? parent->guarantee_window_seconds
                                              : 0;
  absl::Status s =
      seconds(q.spec.min_runtime, "minRuntime", parent != nullptr ? parent->min_runtime_seconds : 0,
              n.min_runtime_seconds);
  if (!s.ok()) return s;
  return seconds(q.spec.guarantee_window, "guaranteeWindow", window, n.guarantee_window_seconds);
}

}  // namespace

absl::StatusOr<QueueTree> QueueTree::Build(const std::vector<api::SourcedObject>& objects) {
  std::map<std::string, const api::Queue*, std::less<>> named;
  std::vector<const api::Queue*> order;
  for (const api::SourcedObject& o : objects) {
    if (const auto* q = std::get_if<api::Queue>(&o.object)) {
      if (named.try_emplace(q->metadata.name, q).second) order.push_back(q);
    }
  }
  // Depth by walking up; a walk longer than the number of queues is a cycle.
  std::map<std::string, int, std::less<>> depth;
  for (const api::Queue* q : order) {
    int d = 0;
    for (const api::Queue* at = q; !at->spec.parent.empty(); ++d) {
      auto p = named.find(at->spec.parent);
      if (p == named.end()) {
        return absl::InvalidArgumentError(util::Cat("Queue ", at->metadata.name,
                                                    ": spec.parent: queue \"", at->spec.parent,
                                                    "\" is not defined"));
      }
      if (d > static_cast<int>(order.size())) {
        return absl::InvalidArgumentError(
            util::Cat("Queue ", q->metadata.name, ": spec.parent: queue parents form a cycle"));
      }
      at = p->second;
    }
    depth[q->metadata.name] = d;
  }
  std::stable_sort(order.begin(), order.end(), [&](const api::Queue* a, const api::Queue* b) {
    return depth[a->metadata.name] < depth[b->metadata.name];
  });
  QueueTree t;
  for (const api::Queue* q : order) {
    const int id = static_cast<int>(t.queues_.size());
    QueueNode n{q->metadata.name, -1,   depth[q->metadata.name],
                q->spec.priority, true, q->spec.resources};
    if (!q->spec.parent.empty()) {
      n.parent = t.by_name_.at(q->spec.parent);
      t.queues_[n.parent].leaf = false;
    }
    n.opportunistic = Opportunistic(q->spec);
    absl::Status s = ResolveDurations(*q, n.parent >= 0 ? &t.queues_[n.parent] : nullptr, n);
    if (!s.ok()) return s;
    t.by_name_[n.name] = id;
    for (const std::string& ns : q->spec.namespaces) t.by_namespace_.try_emplace(ns, id);
    t.queues_.push_back(std::move(n));
  }
  return t;
}

std::optional<int> QueueTree::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

QueueChoice QueueTree::QueueOf(const api::ObjectMeta& meta) const {
  auto label = meta.labels.find(std::string(api::kQueueLabel));
  if (label != meta.labels.end()) {
    std::optional<int> q = Find(label->second);
    if (!q) {
      return {-1, util::Cat("label ", api::kQueueLabel, " names queue \"", label->second,
                            "\", which is not defined (add the Queue, or fix the label)")};
    }
    if (!queues_[*q].leaf) {
      return {-1, util::Cat("label ", api::kQueueLabel, " names queue \"", label->second,
                            "\", which has child queues; work runs in leaf queues")};
    }
    return {*q, ""};
  }
  auto ns = by_namespace_.find(meta.namespace_name);
  if (ns != by_namespace_.end()) return {ns->second, ""};
  return {-1, util::Cat("no queue: label it ", api::kQueueLabel, ", or list namespace \"",
                        meta.namespace_name, "\" in a leaf Queue's spec.namespaces")};
}

std::vector<ShareQueue> QueueTree::ShareInputs(std::string_view resource,
                                               const std::vector<double>& demand,
                                               const std::vector<double>& usage) const {
  std::vector<ShareQueue> out;
  out.reserve(queues_.size());
  for (size_t i = 0; i < queues_.size(); ++i) {
    ShareQueue s;
    s.parent = queues_[i].parent;
    s.demand = i < demand.size() ? demand[i] : 0;
    s.usage = i < usage.size() ? usage[i] : 0;
    auto r = queues_[i].resources.find(std::string(resource));
    if (r != queues_[i].resources.end()) {
      if (r->second.guarantee) s.guarantee = r->second.guarantee->AsApproximateFloat();
      if (r->second.limit) s.limit = r->second.limit->AsApproximateFloat();
      if (r->second.weight) s.weight = r->second.weight->AsApproximateFloat();
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace gpuplane::sched
