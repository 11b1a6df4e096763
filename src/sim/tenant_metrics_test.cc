#include "sim/tenant_metrics.h"

#include "gtest/gtest.h"

namespace gpuplane::sim {
namespace {

TenantSnapshot Snap(std::vector<double> allocated, std::vector<double> fair,
                    std::vector<bool> waiting) {
  TenantSnapshot s;
  for (double a : allocated) s.allocated_gpus += a;
  s.waiting = true;
  s.tenant_allocated = std::move(allocated);
  s.tenant_fair = std::move(fair);
  s.tenant_waiting = std::move(waiting);
  return s;
}

TEST(TenantMetricsTest, HourlyMeansAndJainPerHour) {
  TenantMetrics m(3, 32, 1e9);
  // Hour 0: tenants 0 and 1 wait, both at their share; tenant 2 never waits.
  m.Add(0, 3600, Snap({8, 8, 16}, {8, 8, 4}, {true, true, false}));
  // Hour 1, first half: tenant 0 at twice its share, tenant 1 at none; second half even.
  m.Add(3600, 5400, Snap({16, 0, 0}, {8, 8, 0}, {true, true, false}));
  m.Add(5400, 7200, Snap({8, 8, 0}, {8, 8, 0}, {true, true, false}));
  std::vector<TenantHour> hours = m.Hourly();
  ASSERT_EQ(hours.size(), 2u);
  EXPECT_DOUBLE_EQ(hours[1].allocated[0], 12);
  EXPECT_DOUBLE_EQ(hours[1].allocated[1], 4);
  EXPECT_DOUBLE_EQ(hours[1].fair[0], 8);
  EXPECT_FALSE(hours[1].waited[2]);
  EXPECT_DOUBLE_EQ(*HourJain(hours[0]), 1);
  // x = 1.5 and 0.5: (2)^2 / (2 x 2.5) = 0.8.
  EXPECT_DOUBLE_EQ(*HourJain(hours[1]), 0.8);
  EXPECT_DOUBLE_EQ(JainMinHourly(m.Hourly()), 0.8);
}

TEST(TenantMetricsTest, HoursWithOneContendedTenantAreLeftOut) {
  TenantMetrics m(2, 16, 1e9);
  m.Add(0, 3600, Snap({0, 16}, {8, 8}, {true, false}));
  EXPECT_FALSE(HourJain(m.Hourly()[0]).has_value());
  EXPECT_DOUBLE_EQ(JainMinHourly(m.Hourly()), 1);
}

}  // namespace
}  // namespace gpuplane::sim
