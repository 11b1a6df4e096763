// The packing program against references: every pattern enumerated by brute force (the dual
// prices must price each one at least at its volume, which with equal primal and dual values
// proves the optimum), exhaustive integer packings of tiny instances (never above the
// program), and hand-solved cases. Also the gap values built on it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "sched/gap_values.h"
#include "sched/packing_lp.h"

namespace gpuplane::sched {
namespace {

// Every multiset of the items' kinds that fits one GPU, as counts per kind.
std::vector<std::vector<int>> AllPatterns(const std::vector<PackingItem>& items) {
  std::vector<std::vector<int>> out;
  std::vector<int> counts(items.size(), 0);
  std::function<void(size_t, int)> walk = [&](size_t i, int room) {
    if (i == items.size()) {
      out.push_back(counts);
      return;
    }
    for (int k = 0; k * items[i].milli <= room; ++k) {
      counts[i] = k;
      walk(i + 1, room - k * items[i].milli);
    }
    counts[i] = 0;
  };
  walk(0, kMilli);
  return out;
}

// Checks primal feasibility, dual feasibility over all patterns, and equal objectives.
void ExpectOptimal(const std::vector<PackingItem>& items, double gpus, const PackingSolution& s) {
  double demand = 0;
  for (const PackingItem& i : items) demand += i.count * i.milli;
  // The solver perturbs the right-hand side by about 1e-7 relative.
  const double tol = 1e-6 * (1 + gpus * kMilli + demand);
  double used = 0, volume = 0;
  std::vector<double> taken(items.size(), 0.0);
  for (const PackingPattern& p : s.patterns) {
    int milli = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      milli += p.counts[i] * items[i].milli;
      taken[i] += p.counts[i] * p.gpus;
    }
    EXPECT_LE(milli, kMilli);
    EXPECT_GT(p.gpus, 0);
    used += p.gpus;
    volume += milli * p.gpus;
  }
  EXPECT_LE(used, gpus + tol);
  for (size_t i = 0; i < items.size(); ++i) EXPECT_LE(taken[i], items[i].count + tol);
  EXPECT_NEAR(volume, s.packed_milli, tol);

  EXPECT_GE(s.gpu_price, -1e-9);
  double dual = gpus * s.gpu_price;
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_GE(s.item_prices[i], -1e-9);
    dual += items[i].count * s.item_prices[i];
  }
  for (const std::vector<int>& p : AllPatterns(items)) {
    double price = s.gpu_price, milli = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      price += p[i] * s.item_prices[i];
      milli += p[i] * items[i].milli;
    }
    EXPECT_GE(price, milli - 1e-6) << "a pattern the prices undervalue";
  }
  EXPECT_NEAR(dual, s.packed_milli, tol) << "primal and dual differ: not optimal";
  EXPECT_NEAR(s.bound_milli, s.packed_milli, tol);
}

// The best integer packing of `sizes` (each item once) into `gpus` GPUs, by trying every
// assignment (each item to a GPU or left out).
int BestIntegerPacking(const std::vector<int>& sizes, int gpus) {
  std::vector<int> free(gpus, kMilli);
  int best = 0;
  std::function<void(size_t, int)> walk = [&](size_t i, int packed) {
    best = std::max(best, packed);
    if (i == sizes.size()) return;
    walk(i + 1, packed);
    for (int g = 0; g < gpus; ++g) {
      if (free[g] < sizes[i]) continue;
      free[g] -= sizes[i];
      walk(i + 1, packed + sizes[i]);
      free[g] += sizes[i];
    }
  };
  walk(0, 0);
  return best;
}

TEST(PackingLp, HandSolvedCases) {
  // Two 600s cannot share a GPU: 2 GPUs hold two of three.
  EXPECT_NEAR(SolvePackingLp({{600, 3}}, 2).bound_milli, 1200, 1e-6);
  EXPECT_NEAR(SolvePackingLp({{600, 3}}, 2).packed_milli, 1200, 1e-3);
  // 400 + 400 on one GPU.
  EXPECT_NEAR(SolvePackingLp({{400, 3}}, 1).bound_milli, 800, 1e-6);
  // 810 + 190 pairs fill ten GPUs exactly.
  PackingSolution pairs = SolvePackingLp({{190, 10}, {810, 10}}, 10);
  EXPECT_NEAR(pairs.bound_milli, 10000, 1e-6);
  ASSERT_EQ(pairs.patterns.size(), 1u);
  EXPECT_EQ(pairs.patterns[0].counts, (std::vector<int>{1, 1}));
  // More demand than GPUs: whole GPUs first; 810s strand 190 each.
  PackingSolution tight = SolvePackingLp({{810, 10}, {1000, 10}}, 10);
  EXPECT_NEAR(tight.bound_milli, 10000, 1e-6);
  EXPECT_NEAR(tight.gpu_price, 1000, 1e-6);
  // Nothing to pack, or nowhere to pack it.
  EXPECT_EQ(SolvePackingLp({}, 5).bound_milli, 0);
  EXPECT_EQ(SolvePackingLp({{500, 4}}, 0).bound_milli, 0);
  // A size outside 1..1000 is never packed (and does not hang the knapsack).
  EXPECT_NEAR(SolvePackingLp({{0, 3}, {1500, 2}, {300, 1}}, 2).bound_milli, 300, 1e-6);
  EXPECT_TRUE(GroupBySize({{0, 5}}, 10).items.empty());
}

// Every size from 8 to 992 milli in steps of 8, ten of each, on as many GPUs as they request:
// they pair up exactly (m with 1000 - m), so everything packs. 124 kinds used to stall a
// simplex without the perturbation for minutes.
TEST(PackingLp, ManyKindsSolveExactlyAndQuickly) {
  std::vector<PackingItem> items;
  double demand = 0;
  for (int milli = 8; milli < kMilli; milli += 8) {
    items.push_back({milli, 10});
    demand += 10.0 * milli;
  }
  PackingSolution s = SolvePackingLp(items, demand / kMilli);
  EXPECT_NEAR(s.bound_milli, demand, 1e-6);
  EXPECT_NEAR(s.packed_milli, demand, 1e-6 * demand);
}

TEST(PackingLp, OptimalOnRandomInstancesByDuality) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int kinds = 1 + static_cast<int>(rng() % 5);
    std::vector<PackingItem> items;
    for (int k = 0; k < kinds; ++k) {
      const int milli = 50 * (1 + static_cast<int>(rng() % 20));  // 50..1000
      const double count = static_cast<double>(rng() % 40) + (trial % 3 == 0 ? 0.37 : 0);
      items.push_back({milli, count});
    }
    const double gpus = static_cast<double>(rng() % 30);
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    ExpectOptimal(items, gpus, SolvePackingLp(items, gpus));
  }
}

TEST(PackingLp, NeverBelowTheBestIntegerPacking) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 7);
    const int gpus = 1 + static_cast<int>(rng() % 3);
    std::vector<int> sizes;
    std::vector<PackingItem> items;
    for (int k = 0; k < n; ++k) {
      const int milli = 10 * (1 + static_cast<int>(rng() % 100));
      sizes.push_back(milli);
      auto same = std::find_if(items.begin(), items.end(),
                               [&](const PackingItem& i) { return i.milli == milli; });
      if (same == items.end()) {
        items.push_back({milli, 1});
      } else {
        same->count += 1;
      }
    }
    const PackingSolution lp = SolvePackingLp(items, gpus);
    const int integer = BestIntegerPacking(sizes, gpus);
    EXPECT_GE(lp.bound_milli, integer - 1e-9) << "trial " << trial;
    EXPECT_GE(lp.packed_milli, integer - 1e-3) << "trial " << trial;
    EXPECT_LE(lp.bound_milli,
              std::min<double>(gpus * kMilli, std::accumulate(sizes.begin(), sizes.end(), 0)));
  }
}

TEST(PackingLp, GroupsBoundEveryPackingOfTheirMembers) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    std::map<int, double> count_by_milli;
    std::vector<int> sizes;
    const int n = 1 + static_cast<int>(rng() % 7);
    for (int k = 0; k < n; ++k) {
      const int milli = 1 + static_cast<int>(rng() % 1000);
      sizes.push_back(milli);
      count_by_milli[milli] += 1;
    }
    const int gpus = 1 + static_cast<int>(rng() % 3);
    const GroupedItems grouped = GroupBySize(count_by_milli, 50);
    EXPECT_LE(grouped.items.size(), 21u);
    for (const auto& [milli, item] : grouped.item_of_milli) {
      EXPECT_LE(grouped.items[item].milli, milli);
      EXPECT_GE(grouped.items[item].packed(), milli);
    }
    EXPECT_GE(SolvePackingLp(grouped.items, gpus).bound_milli,
              BestIntegerPacking(sizes, gpus) - 1e-9)
        << "trial " << trial;
  }
  // Whole GPUs stay alone; equal sizes share one item.
  const GroupedItems g = GroupBySize({{41, 2}, {50, 3}, {51, 1}, {1000, 4}}, 10);
  ASSERT_EQ(g.items.size(), 3u);
  EXPECT_EQ(g.items[0].milli, 41);
  EXPECT_EQ(g.items[0].packed(), 50);
  EXPECT_EQ(g.items[0].count, 5);
  EXPECT_EQ(g.items[1].milli, 51);
  EXPECT_EQ(g.items[2].milli, 1000);
  EXPECT_EQ(g.item_of_milli.at(50), 0u);
}

Workload TwoShareTypes() {
  // Half the pods want 810 milli, half 190 milli; the 190s need more CPU.
  std::vector<PodDemand> pods;
  for (int i = 0; i < 10; ++i) {
    pods.push_back({.cpu_milli = 2000, .num_gpu = 1, .gpu_milli = 810});
    pods.push_back({.cpu_milli = 8000, .num_gpu = 1, .gpu_milli = 190});
  }
  return Workload::FromPods(pods, 1.0);
}

TEST(GapValues, ValuesSpaceByWhatTheWorkloadCanPutThere) {
  Workload workload = TwoShareTypes();
  GapValues values(workload, 10);
  // 810 + 190 fill a GPU exactly, so the program packs everything.
  EXPECT_NEAR(values.solution().bound_milli, 10000, 1e-6);
  const double v810 = values.NetValue(810), v190 = values.NetValue(190);
  EXPECT_NEAR(values.Value(1000, 8000), v810 + v190, 1e-9);
  EXPECT_NEAR(values.Value(190, 8000), v190, 1e-9);
  EXPECT_NEAR(values.Value(189, 8000), 0, 1e-9);  // nothing fits
  // With 2 cores free only the 810 type fits.
  EXPECT_NEAR(values.Value(1000, 2000), v810, 1e-9);
  EXPECT_NEAR(values.Value(190, 2000), 0, 1e-9);
  EXPECT_EQ(values.ValuesFor(1999), nullptr);
  // A share no type has is worth what its space is worth.
  EXPECT_NEAR(values.NetValue(200), values.Value(200, 8000), 1e-9);
}

}  // namespace
}  // namespace gpuplane::sched
