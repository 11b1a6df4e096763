// Fair share: worked examples, and a property test of the exact water-filling (sorting by
// the level at which each queue fills up) against the plainest search for the same level:
// bisection on the water level until what it hands out equals what there is.
#include "sched/fair_share.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "gtest/gtest.h"

namespace gpuplane::sched {
namespace {

std::vector<double> BisectFill(double amount, const std::vector<double>& base,
                               const std::vector<double>& cap, const std::vector<double>& weight) {
  const size_t n = base.size();
  const double base_sum = std::accumulate(base.begin(), base.end(), 0.0);
  std::vector<double> out(n, 0.0);
  if (base_sum >= amount) {
    for (size_t i = 0; i < n; ++i) out[i] = base_sum > 0 ? base[i] * amount / base_sum : 0;
    return out;
  }
  auto at = [&](double level) {
    for (size_t i = 0; i < n; ++i) out[i] = base[i] + std::min(cap[i] - base[i], level * weight[i]);
    return std::accumulate(out.begin(), out.end(), 0.0);
  };
  double lo = 0, hi = 1;
  while (hi < 1e12 && at(hi) < amount) hi *= 2;
  for (int step = 0; step < 200; ++step) {
    const double mid = (lo + hi) / 2;
    (at(mid) < amount ? lo : hi) = mid;
  }
  at(hi);
  return out;
}

TEST(WaterFill, MatchesBisectionOnTheWaterLevel) {
  std::mt19937 rng(7);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 5000; ++trial) {
    const int n = uniform(1, 7);
    std::vector<double> base(n), cap(n), weight(n);
    for (int i = 0; i < n; ++i) {
      cap[i] = uniform(0, 4) == 0 ? kUnlimited : uniform(0, 60);
      base[i] = uniform(0, std::min(60, static_cast<int>(std::min(cap[i], 60.0))));
      weight[i] = uniform(0, 4) / 2.0;
    }
    const double amount = uniform(0, 400) / 2.0;
    std::vector<double> exact = WaterFill(amount, base, cap, weight);
    std::vector<double> reference = BisectFill(amount, base, cap, weight);
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(exact[i], reference[i], 1e-6) << "trial " << trial << " queue " << i;
      EXPECT_LE(exact[i], cap[i] + 1e-9) << "trial " << trial << " queue " << i;
    }
    EXPECT_LE(std::accumulate(exact.begin(), exact.end(), 0.0), amount + 1e-6);
  }
}

TEST(FairShare, GuaranteesFirstThenByWeight) {
  // 100 GPUs; a guarantees 40 and wants 90; b guarantees 20 and wants 90 with weight 3.
  std::vector<ShareQueue> q = {{.guarantee = 40, .weight = 1, .demand = 90},
                               {.guarantee = 20, .weight = 3, .demand = 90}};
  std::vector<double> s = FairShare(q, 100);
  EXPECT_DOUBLE_EQ(s[0], 50);  // 40 + 40/4
  EXPECT_DOUBLE_EQ(s[1], 50);  // 20 + 40*3/4
}

TEST(FairShare, DemandAndLimitCapWhatWeightWouldGive) {
  // a wants only 10; b is limited to 30; c takes the rest.
  std::vector<ShareQueue> q = {{.demand = 10}, {.limit = 30, .demand = 100}, {.demand = 100}};
  std::vector<double> s = FairShare(q, 100);
  EXPECT_DOUBLE_EQ(s[0], 10);
  EXPECT_DOUBLE_EQ(s[1], 30);
  EXPECT_DOUBLE_EQ(s[2], 60);
}

TEST(FairShare, OvercommittedGuaranteesScaleDown) {
  std::vector<ShareQueue> q = {{.guarantee = 60, .demand = 100}, {.guarantee = 60, .demand = 30}};
  std::vector<double> s = FairShare(q, 60);
  // Guarantees capped by demand: 60 and 30, scaled to fit 60.
  EXPECT_DOUBLE_EQ(s[0], 40);
  EXPECT_DOUBLE_EQ(s[1], 20);
}

TEST(FairShare, HierarchySplitsTheParentsShare) {
  // research (guarantee 64) has two teams; prod (guarantee 32) wants everything.
  std::vector<ShareQueue> q = {
      {.guarantee = 64},                                            // 0 research
      {.guarantee = 32, .demand = 128},                             // 1 prod
      {.parent = 0, .guarantee = 48, .demand = 16},                 // 2 research/vision
      {.parent = 0, .guarantee = 16, .weight = 2, .demand = 200}};  // 3 research/nlp
  std::vector<double> s = FairShare(q, 128);
  // Top: guarantees 64 and 32, the other 32 split 1:1.
  EXPECT_DOUBLE_EQ(s[0], 80);
  EXPECT_DOUBLE_EQ(s[1], 48);
  // research's 80: vision gets its demand (below its guarantee), nlp the rest.
  EXPECT_DOUBLE_EQ(s[2], 16);
  EXPECT_DOUBLE_EQ(s[3], 64);
}

TEST(FairShare, UsageBendsWeightsTowardTheQueueThatUsedLess) {
  std::vector<ShareQueue> q = {{.demand = 100, .usage = 900}, {.demand = 100, .usage = 100}};
  std::vector<double> plain = FairShare(q, 100);
  std::vector<double> bent = FairShare(q, 100, {.usage_k = 1});
  EXPECT_DOUBLE_EQ(plain[0], 50);
  // W = 0.5 each; U = 0.9 / 0.1: P = 0.1 and 0.9.
  EXPECT_NEAR(bent[0], 10, 1e-9);
  EXPECT_NEAR(bent[1], 90, 1e-9);
}

TEST(FairShare, DominantShareIsTheLargestRatio) {
  EXPECT_DOUBLE_EQ(DominantShare({8, 64}, {16, 512}), 0.5);
  EXPECT_DOUBLE_EQ(DominantShare({0, 0}, {0, 0}), 0);
  EXPECT_TRUE(std::isinf(DominantShare({1, 0}, {0, 10})));
}

TEST(DecayedUsage, HalvesEveryHalfLifeAndIntegratesExactly) {
  DecayedUsage u(2, 3600);
  u.Advance(3600, {1, 0});
  // a constant 1 for one half-life: h / ln 2 * (1 - 1/2)
  EXPECT_NEAR(u.usage()[0], 3600 / std::log(2.0) / 2, 1e-6);
  const double before = u.usage()[0];
  u.Advance(3600, {0, 0});
  EXPECT_NEAR(u.usage()[0], before / 2, 1e-9);
  // Two steps of 1800 s equal one of 3600 s.
  DecayedUsage a(1, 600), b(1, 600);
  a.Advance(3600, {2});
  b.Advance(1800, {2});
  b.Advance(1800, {2});
  EXPECT_NEAR(a.usage()[0], b.usage()[0], 1e-9);
}

TEST(DecayedUsage, ByNameMatchesByIndexAsQueuesComeAndGo) {
  DecayedUsage by_index(3, 900);
  std::map<std::string, double, std::less<>> by_name;
  // Step 1: only a and b exist; step 2: c appears; step 3: b is gone (it holds nothing).
  by_index.Advance(600, {4, 2, 0});
  DecayedUsage::AdvanceByName(by_name, {{"a", 4}, {"b", 2}}, 600, 900);
  by_index.Advance(300, {4, 2, 8});
  DecayedUsage::AdvanceByName(by_name, {{"a", 4}, {"b", 2}, {"c", 8}}, 300, 900);
  by_index.Advance(1200, {1, 0, 8});
  DecayedUsage::AdvanceByName(by_name, {{"a", 1}, {"c", 8}}, 1200, 900);
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_NEAR(by_name["a"], by_index.usage()[0], 1e-9);
  EXPECT_NEAR(by_name["b"], by_index.usage()[1], 1e-9);
  EXPECT_NEAR(by_name["c"], by_index.usage()[2], 1e-9);
  EXPECT_GT(by_name["b"], 0);
}

}  // namespace
}  // namespace gpuplane::sched
