// gpuplane.io/v1alpha1 Queue: a tenant's place in the cluster's share of resources. Queues
// form a tree by `spec.parent`; work runs in leaf queues, reached by the pod label
// `gpuplane.io/queue` or by a queue's `spec.namespaces` (the default for pods of those
// namespaces). Per resource a queue has a guarantee (what it gets whenever it asks), a limit
// (what it never exceeds) and an over-guarantee weight (how what is left is split among
// siblings; see sched/fair_share.h). The same shape is meant to be a CRD in the cluster.
// Plain value types; copyable; not synchronized.
#ifndef GPUPLANE_API_QUEUE_TYPES_H_
#define GPUPLANE_API_QUEUE_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/meta.h"
#include "api/quantity.h"

namespace gpuplane::api {

inline constexpr std::string_view kQueueApiVersion = "gpuplane.io/v1alpha1";
// The pod (or PodGroup) label naming its leaf queue.
inline constexpr std::string_view kQueueLabel = "gpuplane.io/queue";

struct QueueResource {
  std::optional<Quantity> guarantee;  // absent: 0
  std::optional<Quantity> limit;      // absent: unlimited
  std::optional<Quantity> weight;     // absent: 1
  bool operator==(const QueueResource&) const = default;
};

struct QueueSpec {
  std::string parent;  // "" at the top of the tree
  int32_t priority = 0;
  // Keys: `cpu`, `memory`, `gpu` (whole GPUs of any model), `gpu/<model>` (of one product,
  // e.g. `gpu/H100`), `deviceclass/<name>` (devices of one DeviceClass).
  std::map<std::string, QueueResource> resources;
  std::vector<std::string> namespaces;  // leaf queues only; a namespace in one queue at most
  // Durations ("30m", "1h30m"; absl/Go form, not negative). `min_runtime`: a run of this
  // queue's work is never a victim within that long of its start (a pod's
  // gpuplane.io/min-runtime annotation wins); absent: the nearest ancestor's, else none.
  // `guarantee_window`: a run within that long of its start is a victim only when no other
  // set of victims makes room; absent: 1h for an opportunistic queue (its `gpu` resource has
  // weight 0 and no guarantee), else the nearest ancestor's, else none.
  std::optional<std::string> min_runtime;
  std::optional<std::string> guarantee_window;
  bool operator==(const QueueSpec&) const = default;
};

struct Queue {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  QueueSpec spec;
  Passthrough status;
  bool operator==(const Queue&) const = default;
};

// "" when `key` is a resource a Queue may name, else what is wrong with it.
std::string CheckQueueResourceKey(std::string_view key);

// A Queue duration (spec.minRuntime, spec.guaranteeWindow) in seconds, or what is wrong with
// `text` (its value and the form it takes).
std::variant<double, std::string> QueueDurationSeconds(std::string_view text);

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_QUEUE_TYPES_H_
