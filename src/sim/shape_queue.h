// The trace replay's queue strategy: waiting jobs grouped by shape (equal PodDemand), one FIFO
// per shape with arrival order numbers, so a retry pass walks shapes rather than jobs and the
// queue's length costs nothing. A pass starts jobs in queue order among the shapes that may
// fit, exactly as walking the whole queue would, given two facts the caller guarantees: every
// waiting job fitted nowhere as of the previous pass (arrivals are tried first, then queued),
// and since then only the nodes reported by NodeFreed gained room. So a pass tries only
// shapes that fit one of those nodes (`fits`), and once a shape fails it skips every shape
// needing at least as much. Borrows the callbacks' state; not thread-safe.
#ifndef GPUPLANE_SIM_SHAPE_QUEUE_H_
#define GPUPLANE_SIM_SHAPE_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sched/fragmentation.h"
#include "sim/events.h"

namespace gpuplane::sim {

class ShapeQueue final : public WaitQueue {
 public:
  enum class Pass {
    kFreedNodes,  // only shapes that fit a freed node; prune shapes no smaller than a failure
    kFull,        // every shape, every pass (the reference the shortcut is tested against)
  };
  // demand(j): job j's shape; fits(node, shape): whether the shape fits the node now.
  ShapeQueue(std::function<const sched::PodDemand&(size_t)> demand,
             std::function<bool(uint32_t, const sched::PodDemand&)> fits, Pass pass)
      : demand_(std::move(demand)), fits_(std::move(fits)), pass_(pass) {}

  void Push(size_t job) override;
  size_t size() const override { return waiting_; }
  void Retry(const std::function<bool(size_t)>& try_start) override;
  // A node gained room since the last pass.
  void NodeFreed(uint32_t node) { freed_.push_back(node); }

 private:
  struct Shape {
    sched::PodDemand demand;
    std::deque<std::pair<uint64_t, size_t>> waiting;  // (order, job)
  };
  // The shapes with waiting jobs that fit a freed node (every waiting shape for kFull).
  std::vector<size_t> MayFit() const;

  std::function<const sched::PodDemand&(size_t)> demand_;
  std::function<bool(uint32_t, const sched::PodDemand&)> fits_;
  Pass pass_;
  std::vector<Shape> shapes_;
  std::map<std::tuple<int64_t, int64_t, int, int, uint64_t>, size_t> index_;
  uint64_t order_ = 0;
  size_t waiting_ = 0;
  std::vector<uint32_t> freed_;
};

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_SHAPE_QUEUE_H_
