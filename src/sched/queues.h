// The queue tree of a scheduling cycle, from the Queue objects (api/queue_types.h): dense
// ids with parents before children, the leaf queue each piece of work belongs to (the
// `gpuplane.io/queue` label, else its namespace's default queue), and the inputs of fair
// share (fair_share.h) for one resource. Immutable after Build; copyable; thread-compatible.
#ifndef GPUPLANE_SCHED_QUEUES_H_
#define GPUPLANE_SCHED_QUEUES_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "sched/fair_share.h"

namespace gpuplane::sched {

struct QueueNode {
  std::string name;
  int parent = -1;  // id of the parent; -1 at the top
  int depth = 0;
  int32_t priority = 0;
  bool leaf = true;
  std::map<std::string, api::QueueResource> resources;
  // Resolved from spec.minRuntime and spec.guaranteeWindow (api/queue_types.h): the queue's
  // own, else the default or the nearest ancestor's; 0: none.
  double min_runtime_seconds = 0;
  double guarantee_window_seconds = 0;
  // Takes no fair share of GPUs (`gpu` weight 0, no guarantee): its work is opportunistic.
  bool opportunistic = false;
};

// The guarantee window of a queue that sets none and takes no fair share of GPUs (`gpu`
// weight 0, no guarantee): opportunistic work's hour (docs/SCHEDULING.md).
inline constexpr double kDefaultGuaranteeWindowSeconds = 3600;

// Which leaf queue a piece of work runs in, or why none.
struct QueueChoice {
  int queue = -1;
  std::string problem;  // set when queue is -1
};

class QueueTree {
 public:
  // The Queue objects among `objects` (others are ignored). Errors: a queue's parent is not
  // among them, parents form a cycle, or a duration is malformed (the loader reports all
  // with file:line first).
  static absl::StatusOr<QueueTree> Build(const std::vector<api::SourcedObject>& objects);

  const std::vector<QueueNode>& queues() const { return queues_; }
  bool empty() const { return queues_.empty(); }
  std::optional<int> Find(std::string_view name) const;

  // The label names a leaf queue; else the namespace's default queue.
  QueueChoice QueueOf(const api::ObjectMeta& meta) const;

  // Fair-share inputs for `resource` (a Queue resource key): guarantee, limit and weight as
  // numbers (cores for cpu, bytes for memory, devices otherwise), with `demand` and `usage`
  // per queue id (leaves' values count; an empty `usage` is all zero).
  std::vector<ShareQueue> ShareInputs(std::string_view resource, const std::vector<double>& demand,
                                      const std::vector<double>& usage = {}) const;

 private:
  std::vector<QueueNode> queues_;
  std::map<std::string, int, std::less<>> by_name_;
  std::map<std::string, int, std::less<>> by_namespace_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_QUEUES_H_
