// The daily pattern behind the opportunistic headroom (demand_peaks.h): hourly peaks, the
// rise from this hour to the next ones on earlier days (across midnight too), and forgetting.
#include "sched/demand_peaks.h"

#include "gtest/gtest.h"

namespace gpuplane::sched {
namespace {

constexpr double kHour = 3600, kDay = 86400;

TEST(DemandPeaks, EachHourKeepsItsPeak) {
  DemandPeaks p;
  p.Note(10 * kHour + 60, 5);
  p.Note(10 * kHour + 120, 9);
  p.Note(10 * kHour + 180, 2);
  EXPECT_EQ(p.peaks().at(10), 9);
}

TEST(DemandPeaks, RiseIsYesterdaysGrowthFromThisHourWithinTheWindow) {
  DemandPeaks p;
  // Two days ago: 08:00 at 10, 09:00 at 40. Yesterday: 08:00 at 20, 09:00 at 30, 10:00 at 90.
  p.Note(1 * kDay + 8 * kHour, 10);
  p.Note(1 * kDay + 9 * kHour, 40);
  p.Note(2 * kDay + 8 * kHour, 20);
  p.Note(2 * kDay + 9 * kHour, 30);
  p.Note(2 * kDay + 10 * kHour, 90);
  const double now = 3 * kDay + 8 * kHour + 1800;  // 08:30 today
  // Within one hour only 09:00 counts: +30 two days ago, +10 yesterday.
  EXPECT_EQ(p.Rise(now, kHour), 30);
  // Within two hours 10:00 counts too: yesterday's +70.
  EXPECT_EQ(p.Rise(now, 2 * kHour), 70);
  // Only the last day: +70; with a one-hour window, +10.
  EXPECT_EQ(p.Rise(now, 2 * kHour, 1), 70);
  EXPECT_EQ(p.Rise(now, kHour, 1), 10);
  // Today's own later hours are not history.
  p.Note(3 * kDay + 9 * kHour, 500);
  EXPECT_EQ(p.Rise(now, kHour), 30);
}

TEST(DemandPeaks, RiseCrossesMidnightAndIsNeverBelowZero) {
  DemandPeaks p;
  // Two days ago 23:00 at 50, then 00:00 at 80; yesterday 23:00 at 60, today 00:00 at 200.
  p.Note(1 * kDay + 23 * kHour, 50);
  p.Note(2 * kDay, 80);
  p.Note(2 * kDay + 23 * kHour, 60);
  p.Note(3 * kDay, 200);
  // Tonight at 23:10 the next hour is tomorrow's 00:00: two days ago that rise was +30.
  // Yesterday's rise ends on today's date, which is left out (the replay's rule).
  EXPECT_EQ(p.Rise(3 * kDay + 23 * kHour + 600, kHour), 30);
  // Falling demand: no rise.
  DemandPeaks q;
  q.Note(1 * kDay + 8 * kHour, 50);
  q.Note(1 * kDay + 9 * kHour, 10);
  EXPECT_EQ(q.Rise(2 * kDay + 8 * kHour, kHour), 0);
  EXPECT_EQ(DemandPeaks().Rise(2 * kDay, 3 * kHour), 0);
}

TEST(DemandPeaks, PruneKeepsTheLastDaysAndToday) {
  DemandPeaks p;
  for (int d = 0; d < 10; ++d) p.Note(d * kDay + 5 * kHour, d);
  p.Prune(9 * kDay + 6 * kHour);
  ASSERT_EQ(p.peaks().size(), 8u);  // days 2-8 and today (9)
  EXPECT_EQ(p.peaks().begin()->first, 2 * 24 + 5);
}

}  // namespace
}  // namespace gpuplane::sched
