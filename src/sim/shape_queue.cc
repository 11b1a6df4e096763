#include "sim/shape_queue.h"

#include <algorithm>

namespace gpuplane::sim {
namespace {

// Whether `b` needs at least what `a` needs (so if `a` fits nowhere, neither does `b`).
bool NoSmaller(const sched::PodDemand& a, const sched::PodDemand& b) {
  bool models = a.models == 0 || (b.models != 0 && (b.models & ~a.models) == 0);
  return b.cpu_milli >= a.cpu_milli && b.memory_mib >= a.memory_mib && b.num_gpu == a.num_gpu &&
         b.gpu_milli >= a.gpu_milli && models;
}

}  // namespace

void ShapeQueue::Push(size_t job) {
  const sched::PodDemand& d = demand_(job);
  auto [it, fresh] = index_.try_emplace(
      std::make_tuple(d.cpu_milli, d.memory_mib, d.num_gpu, d.gpu_milli, d.models), shapes_.size());
  if (fresh) shapes_.push_back(Shape{d, {}});
  shapes_[it->second].waiting.emplace_back(order_++, job);
  ++waiting_;
}

std::vector<size_t> ShapeQueue::MayFit() const {
  std::vector<size_t> active;
  for (size_t s = 0; s < shapes_.size(); ++s) {
    if (shapes_[s].waiting.empty()) continue;
    const bool may_fit = pass_ == Pass::kFull ||
                         std::any_of(freed_.begin(), freed_.end(),
                                     [&](uint32_t n) { return fits_(n, shapes_[s].demand); });
    if (may_fit) active.push_back(s);
  }
  return active;
}

void ShapeQueue::Retry(const std::function<bool(size_t)>& try_start) {
  std::vector<size_t> active = MayFit();
  while (!active.empty()) {
    auto first = std::min_element(active.begin(), active.end(), [&](size_t a, size_t b) {
      return shapes_[a].waiting.front().first < shapes_[b].waiting.front().first;
    });
    Shape& shape = shapes_[*first];
    if (try_start(shape.waiting.front().second)) {
      shape.waiting.pop_front();
      --waiting_;
      if (shape.waiting.empty()) active.erase(first);
      continue;
    }
    // This shape fits nowhere now, and neither does any shape needing at least as much.
    const sched::PodDemand failed = shape.demand;
    active.erase(first);
    if (pass_ == Pass::kFreedNodes) {
      std::erase_if(active, [&](size_t s) { return NoSmaller(failed, shapes_[s].demand); });
    }
  }
  freed_.clear();
}

}  // namespace gpuplane::sim
