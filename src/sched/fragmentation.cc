#include "sched/fragmentation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace gpuplane::sched {

Workload Workload::FromPods(std::vector<PodDemand>& pods, double coverage) {
  using Key = std::tuple<int64_t, int, int, uint64_t>;
  std::map<Key, int64_t> counts;
  for (const PodDemand& p : pods) ++counts[{p.cpu_milli, p.gpu_milli, p.num_gpu, p.models}];
  std::vector<std::pair<Key, int64_t>> sorted(counts.begin(), counts.end());
  // Most frequent first; ties in key order, so the result does not depend on pod order.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Workload w;
  int64_t covered = 0, total = static_cast<int64_t>(pods.size());
  std::map<Key, int> index;
  for (const auto& [key, n] : sorted) {
    if (total == 0 || static_cast<double>(covered) >= coverage * static_cast<double>(total)) break;
    covered += n;
    index[key] = static_cast<int>(w.types_.size());
    w.types_.push_back(TaskType{std::get<0>(key), std::get<1>(key), std::get<2>(key),
                                std::get<3>(key), static_cast<double>(n)});
  }
  for (TaskType& t : w.types_) t.probability /= static_cast<double>(covered);
  for (PodDemand& p : pods) {
    auto it = index.find({p.cpu_milli, p.gpu_milli, p.num_gpu, p.models});
    p.type = it == index.end() ? -1 : it->second;
  }
  return w;
}

double Workload::NodeFragmentation(int model, int64_t cpu_free,
                                   const std::vector<int>& gpu_free) const {
  int64_t total_free = 0;
  for (int f : gpu_free) total_free += f;
  if (total_free == 0) return 0;
  double sum = 0;
  for (const TaskType& t : types_) {
    int64_t frag = total_free;
    bool allowed = model >= 0 && (t.models == 0 || (t.models >> model & 1) != 0);
    if (t.num_gpu > 0 && allowed && cpu_free >= t.cpu_milli) {
      int fitting = 0;
      int64_t below = 0;
      for (int f : gpu_free) {
        if (f >= t.gpu_milli) {
          ++fitting;
        } else {
          below += f;
        }
      }
      if (fitting >= t.num_gpu) frag = below;
    }
    sum += t.probability * static_cast<double>(frag);
  }
  return sum;
}

void GradientCache::NewPod(const ClusterView& view, const PodDemand& pod) {
  memo_.clear();
  entries_.clear();
  if (frag_.size() != view.nodes.size()) frag_.assign(view.nodes.size(), {0, 0});
  per_node_ = &by_shape_[{pod.cpu_milli, pod.num_gpu, pod.gpu_milli}];
  if (per_node_->size() != view.nodes.size()) per_node_->assign(view.nodes.size(), {0, Answer{}});
}

uint64_t GradientCache::Hash(const NodeView& n) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
  mix(static_cast<uint64_t>(n.model));
  mix(static_cast<uint64_t>(n.cpu_free));
  for (int f : n.gpu_free) mix(static_cast<uint64_t>(f));
  return h;
}

bool GradientCache::Same(const NodeView& a, const NodeView& b) {
  return a.model == b.model && a.cpu_free == b.cpu_free && a.gpu_free == b.gpu_free;
}

const GradientCache::Answer* GradientCache::Find(const ClusterView& view, uint32_t node) const {
  const NodeView& n = view.nodes[node];
  auto [lo, hi] = memo_.equal_range(Hash(n));
  for (auto it = lo; it != hi; ++it) {
    const auto& [rep, answer] = entries_[it->second];
    if (Same(view.nodes[rep], n)) return &answer;
  }
  return nullptr;
}

void GradientCache::Put(const ClusterView& view, uint32_t node, const Answer& answer) {
  memo_.emplace(Hash(view.nodes[node]), entries_.size());
  entries_.emplace_back(node, answer);
}

double GradientCache::Fragmentation(const Workload& workload, const ClusterView& view,
                                    uint32_t node) {
  const NodeView& n = view.nodes[node];
  auto& [version, value] = frag_[node];
  if (version != n.version + 1) {
    value = workload.NodeFragmentation(n.model, n.cpu_free, n.gpu_free);
    version = n.version + 1;
  }
  return value;
}

GradientCache::Answer GradientCache::Evaluate(const Workload& workload, const ClusterView& view,
                                              uint32_t n, const PodDemand& pod) {
  const NodeView& node = view.nodes[n];
  double before = Fragmentation(workload, view, n);
  scratch_ = node.gpu_free;
  int64_t cpu_after = node.cpu_free - pod.cpu_milli;
  auto score = [&] {
    double delta = before - workload.NodeFragmentation(node.model, cpu_after, scratch_);
    return std::trunc(100 / (1 + std::exp(-delta / 1000)));
  };
  Answer a;
  if (!pod.sharing()) {
    a.gpus = TightestGpus(node, pod);
    for (int g : a.gpus) scratch_[g] -= pod.gpu_milli;
    a.score = score();
    return a;
  }
  a.score = -1;
  for (int g = 0; g < node.gpus(); ++g) {
    int free = node.gpu_free[g];
    if (free < pod.gpu_milli) continue;
    bool repeat = false;  // an earlier GPU with the same free share scores the same
    for (int e = 0; e < g && !repeat; ++e) repeat = node.gpu_free[e] == free;
    if (repeat) continue;
    scratch_[g] -= pod.gpu_milli;
    double s = score();
    scratch_[g] += pod.gpu_milli;
    if (s > a.score) {
      a.score = s;
      a.gpus.assign(1, g);
    }
  }
  return a;
}

}  // namespace gpuplane::sched
