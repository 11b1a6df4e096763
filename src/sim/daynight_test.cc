// The day/night workload: the same seed gives the same jobs, the workload without
// opportunistic work is exactly the rest, inference peaks by day, guarantees fill the cluster.
#include "sim/daynight.h"

#include <numeric>

#include "gtest/gtest.h"

namespace gpuplane::sim {
namespace {

TEST(DayNight, WithoutOpportunisticWorkIsExactlyTheRest) {
  TenantWorkload with = DayNight({3, 512, true}, 42);
  TenantWorkload without = DayNight({3, 512, false}, 42);
  std::vector<TenantJob> rest;
  for (const TenantJob& j : with.jobs) {
    if (!with.Opportunistic(j.tenant)) rest.push_back(j);
  }
  ASSERT_EQ(rest.size(), without.jobs.size());
  ASSERT_LT(rest.size(), with.jobs.size());
  for (size_t i = 0; i < rest.size(); ++i) {
    EXPECT_EQ(rest[i].submit, without.jobs[i].submit);
    EXPECT_EQ(rest[i].gpus, without.jobs[i].gpus);
    EXPECT_EQ(rest[i].tenant, without.jobs[i].tenant);
  }
  TenantWorkload again = DayNight({3, 512, true}, 42);
  ASSERT_EQ(again.jobs.size(), with.jobs.size());
  EXPECT_EQ(again.jobs.back().submit, with.jobs.back().submit);
  EXPECT_NE(DayNight({3, 512, true}, 43).jobs.size(), with.jobs.size());
}

TEST(DayNight, InferencePeaksByDayAndGuaranteesFillTheCluster) {
  TenantWorkload w = DayNight({7, 512, true}, 1);
  double afternoon = 0, small_hours = 0;
  for (const TenantJob& j : w.jobs) {
    if (j.tenant != 0) continue;
    EXPECT_TRUE(j.high);
    const double h = HourOfDay(j.submit);
    if (h >= 12 && h < 18) afternoon += j.gpus * j.duration;
    if (h >= 0 && h < 6) small_hours += j.gpus * j.duration;
  }
  EXPECT_GT(afternoon, 3 * small_hours);
  EXPECT_EQ(std::accumulate(w.guarantee_gpus.begin(), w.guarantee_gpus.end(), 0), 512);
  EXPECT_EQ(w.guarantee_gpus[3], 0);
  EXPECT_TRUE(w.Opportunistic(3));
  EXPECT_FALSE(w.Opportunistic(0));
  for (size_t i = 1; i < w.jobs.size(); ++i) EXPECT_LE(w.jobs[i - 1].submit, w.jobs[i].submit);
}

TEST(DayNight, NightIsTenToSix) {
  EXPECT_TRUE(IsNight(0));
  EXPECT_TRUE(IsNight(5.9 * 3600));
  EXPECT_FALSE(IsNight(6 * 3600));
  EXPECT_FALSE(IsNight(21.9 * 3600));
  EXPECT_TRUE(IsNight(86400 + 22 * 3600));
  EXPECT_DOUBLE_EQ(HourOfDay(86400 * 3 + 7200), 2);
}

}  // namespace
}  // namespace gpuplane::sim
