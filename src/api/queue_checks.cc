#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "api/internal/queue_checks.h"
#include "util/strings.h"

namespace gpuplane::api::internal {
namespace {

struct QueueRef {
  const SourcedObject* source;
  const Queue* queue;
};

void Report(std::vector<Diagnostic>& out, const QueueRef& q, std::string field,
            std::string message) {
  out.push_back(Diagnostic{Diagnostic::Severity::kError, q.source->file, q.source->line,
                           Label(q.source->object), std::move(field), std::move(message)});
}

std::string Where(const QueueRef& q) { return util::Cat(q.source->file, ":", q.source->line); }

// Parents that exist, and no cycle through them (reported once, on the cycle's first queue
// in input order).
void CheckParents(std::vector<Diagnostic>& out, const std::map<std::string, QueueRef>& queues) {
  std::set<std::string> in_reported_cycle;
  for (const auto& [name, q] : queues) {
    const std::string& parent = q.queue->spec.parent;
    if (parent.empty()) continue;
    if (!queues.contains(parent)) {
      Report(out, q, "spec.parent",
             "queue \"" + parent + "\" is not defined in the inputs (add it, or fix the name)");
      continue;
    }
    std::vector<std::string> path = {name};
    for (std::string at = parent; !at.empty(); at = queues.at(at).queue->spec.parent) {
      if (!queues.contains(at)) break;
      path.push_back(at);
      if (at == name) {
        if (in_reported_cycle.insert(name).second) {
          for (const std::string& p : path) in_reported_cycle.insert(p);
          Report(out, q, "spec.parent",
                 "queue parents form a cycle: " + absl::StrJoin(path, " -> ") +
                     "; a queue tree needs a top (a queue without a parent)");
        }
        break;
      }
      if (path.size() > queues.size()) break;  // a cycle further up, reported there
    }
  }
}

// Namespaces on leaf queues only, each in one queue.
void CheckNamespaces(std::vector<Diagnostic>& out, const std::map<std::string, QueueRef>& queues,
                     const std::map<std::string, std::string>& some_child) {
  std::map<std::string, std::string> owner;
  for (const auto& [name, q] : queues) {
    if (q.queue->spec.namespaces.empty()) continue;
    if (auto child = some_child.find(name); child != some_child.end()) {
      Report(out, q, "spec.namespaces",
             "queue has child queues (\"" + child->second +
                 "\"), and only leaf queues run work; name the namespaces on a leaf queue");
      continue;
    }
    for (const std::string& ns : q.queue->spec.namespaces) {
      auto [it, inserted] = owner.try_emplace(ns, name);
      if (!inserted && it->second != name) {
        Report(out, q, "spec.namespaces",
               util::Cat("namespace \"", ns, "\" already defaults to queue \"", it->second, "\" (",
                         Where(queues.at(it->second)), "); a namespace has one default"));
      }
    }
  }
}

// Per resource, the children's guarantees must fit in a parent's guarantee when it has one.
void CheckGuarantees(std::vector<Diagnostic>& out, const std::map<std::string, QueueRef>& queues) {
  std::map<std::string, std::map<std::string, Quantity>> sums;  // parent -> resource -> sum
  for (const auto& [name, q] : queues) {
    if (q.queue->spec.parent.empty()) continue;
    for (const auto& [resource, rq] : q.queue->spec.resources) {
      if (!rq.guarantee) continue;
      Quantity& sum = sums[q.queue->spec.parent][resource];
      absl::StatusOr<Quantity> next = sum.Add(*rq.guarantee);
      if (next.ok()) sum = *next;
    }
  }
  for (const auto& [parent, by_resource] : sums) {
    auto p = queues.find(parent);
    if (p == queues.end()) continue;
    for (const auto& [resource, sum] : by_resource) {
      auto rq = p->second.queue->spec.resources.find(resource);
      if (rq == p->second.queue->spec.resources.end() || !rq->second.guarantee) continue;
      if (sum.Compare(*rq->second.guarantee) > 0) {
        Report(out, p->second, "spec.resources[\"" + resource + "\"].guarantee",
               util::Cat("its child queues' guarantees sum to ", sum.String(), ", more than ",
                         rq->second.guarantee->String(),
                         "; raise this guarantee or lower the children's"));
      }
    }
  }
}

}  // namespace

void CheckQueues(const ObjectRefs& objects, std::vector<Diagnostic>& out) {
  std::map<std::string, QueueRef> queues;
  std::map<std::string, std::string> some_child;  // parent -> one of its children
  for (const SourcedObject* o : objects) {
    const auto* q = std::get_if<Queue>(&o->object);
    if (q == nullptr || q->metadata.name.empty()) continue;
    queues.try_emplace(q->metadata.name, QueueRef{o, q});  // duplicates reported elsewhere
    if (!q->spec.parent.empty()) some_child.try_emplace(q->spec.parent, q->metadata.name);
  }
  CheckParents(out, queues);
  CheckNamespaces(out, queues, some_child);
  CheckGuarantees(out, queues);
}

}  // namespace gpuplane::api::internal
