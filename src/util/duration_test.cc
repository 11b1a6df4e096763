#include "util/duration.h"

#include "gtest/gtest.h"

namespace gpuplane::util {
namespace {

TEST(DurationSeconds, ReadsGoDurations) {
  EXPECT_EQ(DurationSeconds("30m"), 1800);
  EXPECT_EQ(DurationSeconds("1h30m"), 5400);
  EXPECT_EQ(DurationSeconds("1.5s"), 1.5);
  EXPECT_EQ(DurationSeconds("0"), 0);
  EXPECT_EQ(DurationSeconds("-5s"), -5);
}

TEST(DurationSeconds, RefusesWhatIsNotAFiniteDuration) {
  for (const char* bad : {"", "30", "m", "1x", "inf", "-inf", "nan", "1h 30m", " 5s"}) {
    EXPECT_EQ(DurationSeconds(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(PositiveDurationSeconds, RefusesNegativeAndZeroUnlessAsked) {
  EXPECT_EQ(PositiveDurationSeconds("30m", false), 1800);
  EXPECT_EQ(PositiveDurationSeconds("30m", true), 1800);
  EXPECT_EQ(PositiveDurationSeconds("0", false), std::nullopt);
  EXPECT_EQ(PositiveDurationSeconds("0s", true), 0);
  EXPECT_EQ(PositiveDurationSeconds("-5s", true), std::nullopt);
  EXPECT_EQ(PositiveDurationSeconds("-5s", false), std::nullopt);
  EXPECT_EQ(PositiveDurationSeconds("inf", true), std::nullopt);
  EXPECT_EQ(PositiveDurationSeconds("5", true), std::nullopt);
}

}  // namespace
}  // namespace gpuplane::util
