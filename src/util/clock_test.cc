#include "util/clock.h"

#include "gtest/gtest.h"

namespace gpuplane::util {
namespace {

TEST(ClockTest, ManualClockMovesOnlyWhenTold) {
  ManualClock clock(100);
  EXPECT_EQ(clock.Now(), 100);
  Stopwatch watch(clock);
  EXPECT_EQ(watch.Elapsed(), 0);
  clock.Advance(2.5);
  EXPECT_EQ(watch.Elapsed(), 2.5);
  clock.Set(110);
  EXPECT_EQ(watch.Elapsed(), 10);
  watch.Restart();
  EXPECT_EQ(watch.Elapsed(), 0);
}

TEST(ClockTest, RealClocks) {
  EXPECT_GT(WallClock().Now(), 1.7e9) << "Unix seconds, after 2023";
  double a = MonotonicClock().Now();
  double b = MonotonicClock().Now();
  EXPECT_LE(a, b) << "never goes back";
  Stopwatch watch;
  EXPECT_GE(watch.Elapsed(), 0);
}

}  // namespace
}  // namespace gpuplane::util
