#include "sched/fair_share.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpuplane::sched {

std::vector<double> WaterFill(double amount, const std::vector<double>& base,
                              const std::vector<double>& cap, const std::vector<double>& weight) {
  const size_t n = base.size();
  const double base_sum = std::accumulate(base.begin(), base.end(), 0.0);
  if (base_sum >= amount) {
    std::vector<double> out(n, 0.0);
    if (base_sum > 0) {
      for (size_t i = 0; i < n; ++i) out[i] = base[i] * (amount / base_sum);
    }
    return out;
  }
  std::vector<double> out = base;
  double rest = amount - base_sum;
  // Queues that can take more, by the water level at which they fill up (room / weight).
  std::vector<size_t> open;
  double weights = 0;
  for (size_t i = 0; i < n; ++i) {
    if (weight[i] > 0 && cap[i] > base[i]) {
      open.push_back(i);
      weights += weight[i];
    }
  }
  auto level = [&](size_t i) { return (cap[i] - base[i]) / weight[i]; };
  std::sort(open.begin(), open.end(), [&](size_t a, size_t b) { return level(a) < level(b); });
  size_t k = 0;
  // Fill the queues whose room runs out below the common level; the rest share what is left.
  for (; k < open.size() && weights > 0 && level(open[k]) * weights <= rest; ++k) {
    const size_t i = open[k];
    out[i] = cap[i];
    rest -= cap[i] - base[i];
    weights -= weight[i];
  }
  if (k < open.size() && weights > 0) {
    const double water = rest / weights;
    for (; k < open.size(); ++k) out[open[k]] += water * weight[open[k]];
  }
  return out;
}

std::vector<double> CappedDemand(const std::vector<ShareQueue>& queues) {
  const size_t n = queues.size();
  std::vector<bool> leaf(n, true);
  for (const ShareQueue& q : queues) {
    if (q.parent >= 0) leaf[q.parent] = false;
  }
  std::vector<double> children(n, 0.0), out(n, 0.0);
  // Children come after their parents: walking backwards sums every subtree before its root.
  for (size_t i = n; i-- > 0;) {
    out[i] = std::min(queues[i].limit, leaf[i] ? queues[i].demand : children[i]);
    if (queues[i].parent >= 0) children[queues[i].parent] += out[i];
  }
  return out;
}

namespace {

// Siblings' weights bent by their past usage: P = max(W + k (W - U), 0), W and U normalized
// over the siblings.
std::vector<double> UsageWeights(const std::vector<ShareQueue>& queues,
                                 const std::vector<size_t>& siblings, double k) {
  std::vector<double> out;
  double weights = 0, usages = 0;
  for (size_t i : siblings) {
    weights += queues[i].weight;
    usages += queues[i].usage;
  }
  for (size_t i : siblings) {
    if (k == 0 || weights == 0) {
      out.push_back(queues[i].weight);
      continue;
    }
    const double w = queues[i].weight / weights;
    const double u = usages > 0 ? queues[i].usage / usages : 0;
    out.push_back(queues[i].weight > 0 ? std::max(w + k * (w - u), 0.0) : 0.0);
  }
  return out;
}

}  // namespace

std::vector<double> FairShare(const std::vector<ShareQueue>& queues, double capacity,
                              const FairShareOptions& options) {
  const size_t n = queues.size();
  const std::vector<double> demand = CappedDemand(queues);
  // children[p + 1]: the queues under p, children[0] the top level.
  std::vector<std::vector<size_t>> children(n + 1);
  for (size_t i = 0; i < n; ++i) children[queues[i].parent + 1].push_back(i);
  std::vector<double> share(n, 0.0);
  for (size_t p = 0; p <= n; ++p) {
    const std::vector<size_t>& kids = children[p];
    if (kids.empty()) continue;
    std::vector<double> base, cap;
    for (size_t i : kids) {
      base.push_back(std::min(queues[i].guarantee, demand[i]));
      cap.push_back(demand[i]);
    }
    const double amount = p == 0 ? capacity : share[p - 1];
    std::vector<double> got =
        WaterFill(amount, base, cap, UsageWeights(queues, kids, options.usage_k));
    for (size_t j = 0; j < kids.size(); ++j) share[kids[j]] = got[j];
  }
  return share;
}

double DominantShare(const std::vector<double>& allocated, const std::vector<double>& fair) {
  double out = 0;
  for (size_t r = 0; r < allocated.size(); ++r) {
    if (allocated[r] <= 0) continue;
    out = std::max(out,
                   fair[r] > 0 ? allocated[r] / fair[r] : std::numeric_limits<double>::infinity());
  }
  return out;
}

DecayedUsage::DecayedUsage(int queues, double half_life_seconds)
    : half_life_(half_life_seconds), usage_(queues, 0.0) {}

double DecayedUsage::Decay(double usage, double allocated, double seconds,
                           double half_life_seconds) {
  const double keep = std::exp2(-seconds / half_life_seconds);
  // The integral of a constant a decaying since it was used: a h / ln 2 (1 - 2^(-t/h)).
  const double gained = half_life_seconds / std::log(2.0) * (1 - keep);
  return usage * keep + allocated * gained;
}

void DecayedUsage::AdvanceByName(std::map<std::string, double, std::less<>>& usage,
                                 const std::map<std::string, double>& held, double seconds,
                                 double half_life_seconds) {
  for (const auto& [name, devices] : held) usage.try_emplace(name, 0.0);
  for (auto& [name, used] : usage) {
    auto h = held.find(name);
    used = Decay(used, h == held.end() ? 0 : h->second, seconds, half_life_seconds);
  }
}

void DecayedUsage::Advance(double seconds, const std::vector<double>& allocated) {
  for (size_t q = 0; q < usage_.size(); ++q) {
    usage_[q] = Decay(usage_[q], allocated[q], seconds, half_life_);
  }
}

}  // namespace gpuplane::sched
