#include "sched/victims.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>

namespace gpuplane::sched {
namespace {

constexpr double kEps = 1e-9;
constexpr size_t kMaxPerNode = 12;     // allowed jobs considered on one node (2^12 subsets)
constexpr size_t kMaxExhaustive = 16;  // allowed jobs the exhaustive fallback enumerates

int GpusOn(const Running& r, int node) {
  int g = 0;
  for (const auto& [n, gpus] : r.placement) g += n == node ? gpus : 0;
  return g;
}

// Less lost work, then fewer GPUs, then fewer jobs.
bool Better(const Victims& a, const Victims& b) {
  if (a.lost_gpu_seconds < b.lost_gpu_seconds - kEps) return true;
  if (a.lost_gpu_seconds > b.lost_gpu_seconds + kEps) return false;
  if (a.gpus != b.gpus) return a.gpus < b.gpus;
  return a.jobs.size() < b.jobs.size();
}

Victims Make(const std::vector<Running>& running, std::vector<size_t> jobs) {
  std::sort(jobs.begin(), jobs.end());
  Victims v;
  for (size_t j : jobs) {
    v.lost_gpu_seconds += running[j].lost_gpu_seconds;
    v.gpus += running[j].Gpus();
    v.from_window = v.from_window || running[j].in_window;
  }
  v.jobs = std::move(jobs);
  return v;
}

// Free GPUs once `victims` are gone.
std::vector<int> Freed(std::vector<int> free, const std::vector<Running>& running,
                       const std::vector<size_t>& victims) {
  for (size_t j : victims) {
    for (const auto& [n, g] : running[j].placement) free[n] += g;
  }
  return free;
}

// The best addition to `chosen`, among `cands` (jobs on `node`), that frees `need` GPUs on
// `node` where `avail` are free now, keeping the queues' floors: every subset, summed with
// bit masks (no allocation per subset).
std::optional<Victims> BestOnNode(int node, int need, const std::vector<int>& avail,
                                  const std::vector<size_t>& cands,
                                  const std::vector<size_t>& chosen,
                                  const std::vector<Running>& running, const Preemptor& p,
                                  const std::vector<QueueUse>& queues) {
  const size_t k = cands.size();
  std::vector<int> gain(k), gpus(k), slot(k, -1);
  std::vector<double> cost(k);
  // Floors: how many GPUs each other queue may still lose.
  std::vector<int> floor_queue;
  std::vector<double> slack;
  auto slot_of = [&](int q) {
    for (size_t i = 0; i < floor_queue.size(); ++i) {
      if (floor_queue[i] == q) return static_cast<int>(i);
    }
    floor_queue.push_back(q);
    slack.push_back(queues[q].allocated - queues[q].fair + kEps);
    return static_cast<int>(floor_queue.size() - 1);
  };
  for (size_t i = 0; i < k; ++i) {
    const Running& r = running[cands[i]];
    gain[i] = GpusOn(r, node);
    gpus[i] = r.Gpus();
    cost[i] = r.lost_gpu_seconds;
    if (Floored(p, r)) slot[i] = slot_of(r.queue);
  }
  for (size_t j : chosen) {
    if (Floored(p, running[j])) slack[slot_of(running[j].queue)] -= running[j].Gpus();
  }
  uint32_t best = 0;
  double best_cost = 0;
  int best_gpus = 0, best_count = 0;
  std::vector<double> lost(floor_queue.size());
  for (uint32_t mask = 1; mask < (1u << k); ++mask) {
    int freed = 0, g = 0, count = 0;
    double c = 0;
    std::fill(lost.begin(), lost.end(), 0.0);
    for (size_t i = 0; i < k; ++i) {
      if (!((mask >> i) & 1u)) continue;
      freed += gain[i];
      g += gpus[i];
      c += cost[i];
      ++count;
      if (slot[i] >= 0) lost[slot[i]] += gpus[i];
    }
    if (avail[node] + freed < need) continue;
    bool floors = true;
    for (size_t q = 0; q < lost.size() && floors; ++q) floors = lost[q] <= slack[q];
    if (!floors) continue;
    const bool better =
        best == 0 || c < best_cost - kEps ||
        (c <= best_cost + kEps && (g < best_gpus || (g == best_gpus && count < best_count)));
    if (better) {
      best = mask;
      best_cost = c;
      best_gpus = g;
      best_count = count;
    }
  }
  if (best == 0) return std::nullopt;
  std::vector<size_t> add;
  for (size_t i = 0; i < k; ++i) {
    if ((best >> i) & 1u) add.push_back(cands[i]);
  }
  return Make(running, add);
}

// Allowed jobs on each node.
std::vector<std::vector<size_t>> ByNode(size_t nodes, const std::vector<size_t>& allowed,
                                        const std::vector<Running>& running) {
  std::vector<std::vector<size_t>> out(nodes);
  for (size_t j : allowed) {
    for (const auto& [n, g] : running[j].placement) {
      if (g > 0 && (out[n].empty() || out[n].back() != j)) out[n].push_back(j);
    }
  }
  return out;
}

// Of `on_node` (allowed jobs on `node`), those not chosen yet: the cheapest per GPU there, at
// most kMaxPerNode.
std::vector<size_t> OnNode(int node, const std::vector<size_t>& on_node,
                           const std::vector<size_t>& chosen, const std::vector<Running>& running) {
  std::vector<size_t> out;
  for (size_t j : on_node) {
    if (std::find(chosen.begin(), chosen.end(), j) == chosen.end()) out.push_back(j);
  }
  if (out.size() > kMaxPerNode) {
    std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
      return running[a].lost_gpu_seconds / GpusOn(running[a], node) <
             running[b].lost_gpu_seconds / GpusOn(running[b], node);
    });
    out.resize(kMaxPerNode);
  }
  return out;
}

// Pod by pod, largest first: where it fits, the tightest node; else the node where making
// room loses least. Then victims that are not needed are dropped, most costly first.
std::optional<Victims> Greedy(const std::vector<int>& free, const std::vector<Running>& running,
                              const Preemptor& p, const std::vector<QueueUse>& queues,
                              const std::vector<size_t>& allowed) {
  std::vector<int> pods = p.pods, avail = free;
  std::sort(pods.rbegin(), pods.rend());
  const std::vector<std::vector<size_t>> by_node = ByNode(free.size(), allowed, running);
  std::vector<size_t> chosen;
  for (int size : pods) {
    int fit = -1;
    for (size_t n = 0; n < avail.size(); ++n) {
      if (avail[n] >= size && (fit < 0 || avail[n] < avail[fit])) fit = static_cast<int>(n);
    }
    if (fit < 0) {
      std::optional<Victims> best;
      for (size_t n = 0; n < avail.size(); ++n) {
        const int node = static_cast<int>(n);
        if (by_node[n].empty()) continue;
        std::optional<Victims> v =
            BestOnNode(node, size, avail, OnNode(node, by_node[n], chosen, running), chosen,
                       running, p, queues);
        if (v && (!best || Better(*v, *best))) {
          best = std::move(v);
          fit = node;
        }
      }
      if (!best) return std::nullopt;
      avail = Freed(avail, running, best->jobs);
      chosen.insert(chosen.end(), best->jobs.begin(), best->jobs.end());
    }
    avail[fit] -= size;
  }
  std::stable_sort(chosen.begin(), chosen.end(), [&](size_t a, size_t b) {
    return running[a].lost_gpu_seconds > running[b].lost_gpu_seconds;
  });
  for (size_t i = 0; i < chosen.size();) {
    std::vector<size_t> without = chosen;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (Fits(p.pods, Freed(free, running, without))) {
      chosen = std::move(without);
    } else {
      ++i;
    }
  }
  return Make(running, chosen);
}

// Every subset of the allowed jobs (at most kMaxExhaustive of them).
std::optional<Victims> Exhaustive(const std::vector<int>& free, const std::vector<Running>& running,
                                  const Preemptor& p, const std::vector<QueueUse>& queues,
                                  const std::vector<size_t>& allowed) {
  if (allowed.size() > kMaxExhaustive) return std::nullopt;
  std::optional<Victims> best;
  for (uint32_t mask = 1; mask < (1u << allowed.size()); ++mask) {
    std::vector<size_t> set;
    for (size_t i = 0; i < allowed.size(); ++i) {
      if ((mask >> i) & 1u) set.push_back(allowed[i]);
    }
    Victims v = Make(running, set);
    if (best && !Better(v, *best)) continue;
    if (!KeepsFloors(p, running, set, queues) || !Fits(p.pods, Freed(free, running, set))) continue;
    best = std::move(v);
  }
  return best;
}

std::optional<Victims> Search(const std::vector<int>& free, const std::vector<Running>& running,
                              const Preemptor& p, const std::vector<QueueUse>& queues,
                              const std::vector<size_t>& allowed) {
  if (p.pods.size() == 1) {
    const std::vector<std::vector<size_t>> by_node = ByNode(free.size(), allowed, running);
    std::optional<Victims> best;
    for (size_t n = 0; n < free.size(); ++n) {
      const int node = static_cast<int>(n);
      if (by_node[n].empty()) continue;
      std::optional<Victims> v = BestOnNode(
          node, p.pods[0], free, OnNode(node, by_node[n], {}, running), {}, running, p, queues);
      if (v && (!best || Better(*v, *best))) best = std::move(v);
    }
    return best;
  }
  std::optional<Victims> v = Greedy(free, running, p, queues, allowed);
  return v ? v : Exhaustive(free, running, p, queues, allowed);
}

}  // namespace

int Running::Gpus() const {
  int g = 0;
  for (const auto& [n, gpus] : placement) g += gpus;
  return g;
}

int Preemptor::Gpus() const { return std::accumulate(pods.begin(), pods.end(), 0); }

bool MayEvict(const Preemptor& p, const Running& r, const std::vector<QueueUse>& queues) {
  if (r.min_runtime) return false;
  if (p.queue < 0 || r.queue < 0 || p.queue == r.queue) return r.priority < p.priority;
  if (p.priority_across_queues && r.priority < p.priority) return true;
  const QueueUse& mine = queues[p.queue];
  const QueueUse& theirs = queues[r.queue];
  return mine.allocated + p.Gpus() <= mine.fair + kEps &&
         theirs.allocated - r.Gpus() >= theirs.fair - kEps;
}

bool Floored(const Preemptor& p, const Running& r) {
  return r.queue >= 0 && p.queue >= 0 && r.queue != p.queue &&
         !(p.priority_across_queues && r.priority < p.priority);
}

bool KeepsFloors(const Preemptor& p, const std::vector<Running>& running,
                 const std::vector<size_t>& victims, const std::vector<QueueUse>& queues) {
  std::map<int, int> lost;
  for (size_t j : victims) {
    if (Floored(p, running[j])) {
      lost[running[j].queue] += running[j].Gpus();
    }
  }
  for (const auto& [q, g] : lost) {
    if (queues[q].allocated - g < queues[q].fair - kEps) return false;
  }
  return true;
}

bool Fits(const std::vector<int>& pod_sizes, const std::vector<int>& free_gpus) {
  if (pod_sizes.empty()) return true;
  if (pod_sizes.size() == 1) {
    return std::any_of(free_gpus.begin(), free_gpus.end(),
                       [&](int f) { return f >= pod_sizes[0]; });
  }
  std::vector<int> pods = pod_sizes, free = free_gpus;
  std::sort(pods.rbegin(), pods.rend());
  std::function<bool(size_t)> place = [&](size_t i) {
    if (i == pods.size()) return true;
    std::vector<int> tried;
    for (int& f : free) {
      if (f < pods[i] || std::find(tried.begin(), tried.end(), f) != tried.end()) continue;
      tried.push_back(f);
      f -= pods[i];
      const bool ok = place(i + 1);
      f += pods[i];
      if (ok) return true;
    }
    return false;
  };
  return place(0);
}

std::optional<Victims> ChooseVictims(const std::vector<int>& free,
                                     const std::vector<Running>& running, const Preemptor& p,
                                     const std::vector<QueueUse>& queues) {
  if (Fits(p.pods, free)) return Victims{};
  std::vector<size_t> allowed, with_window;
  for (size_t j = 0; j < running.size(); ++j) {
    if (!MayEvict(p, running[j], queues)) continue;
    with_window.push_back(j);
    if (!running[j].in_window) allowed.push_back(j);
  }
  if (std::optional<Victims> v = Search(free, running, p, queues, allowed)) return v;
  if (with_window.size() == allowed.size()) return std::nullopt;
  return Search(free, running, p, queues, with_window);
}

}  // namespace gpuplane::sched
