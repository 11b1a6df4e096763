// The queues' past use as kept in the cluster (queue_usage.h): written and read back, decayed
// over the time since it was saved, and malformed content named with what to do.
#include "kube/queue_usage.h"

#include <cmath>

#include "gtest/gtest.h"

namespace gpuplane::kube {
namespace {

TEST(QueueUsageTest, ReadsBackWhatItWrites) {
  QueueUsage u{.saved_at = 1'796'040'000.25,
               .gpu_seconds = {{"team-a", 3600.5}, {"team-b", 0}},
               .devices = {{"team-a", 8}, {"night", 2}},
               .demand_peaks = {{498'900, 40}, {498'901, 64.5}}};
  const std::string text = WriteQueueUsage(u);
  EXPECT_NE(text.find("\"savedAt\":\"2026-11-30T12:00:00.250Z\""), std::string::npos) << text;
  absl::StatusOr<QueueUsage> back = ReadQueueUsage(text, "cm");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_NEAR(back->saved_at, u.saved_at, 1e-3);
  EXPECT_EQ(back->gpu_seconds.at("team-a"), 3600.5);
  EXPECT_EQ(back->gpu_seconds.at("team-b"), 0);
  EXPECT_EQ(back->gpu_seconds.at("night"), 0);  // held devices, no past use yet
  EXPECT_EQ(back->devices.at("team-a"), 8);
  EXPECT_EQ(back->devices.at("night"), 2);
  EXPECT_EQ(back->devices.at("team-b"), 0);
  EXPECT_EQ(back->demand_peaks, u.demand_peaks);
  // Saved before demand peaks were kept: none.
  absl::StatusOr<QueueUsage> old =
      ReadQueueUsage(R"({"savedAt":"2026-12-01T12:00:00Z","queues":{}})", "cm");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(old->demand_peaks.empty());
}

TEST(QueueUsageTest, DecaysOverTheGapWithWhatWasHeld) {
  QueueUsage u{.saved_at = 1000, .gpu_seconds = {{"a", 1000}, {"b", 0}}, .devices = {{"b", 2}}};
  // One half-life later: a's use halves; b's two devices add their decayed device-seconds.
  QueueUsage later = DecayedTo(u, 1000 + 3600, 3600);
  EXPECT_NEAR(later.gpu_seconds.at("a"), 500, 1e-6);
  EXPECT_NEAR(later.gpu_seconds.at("b"), 2 * 3600 / (2 * std::log(2.0)), 1e-6);
  EXPECT_EQ(later.saved_at, 1000 + 3600);
  // A save from the future (clocks apart) counts as made now: nothing decays.
  QueueUsage same = DecayedTo(u, 500, 3600);
  EXPECT_EQ(same.gpu_seconds.at("a"), 1000);
}

TEST(QueueUsageTest, MalformedContentIsNamed) {
  const char* fix = "; fix or delete it (the scheduler then starts the queues' past use from zero)";
  struct Case {
    const char* text;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"nope", std::string("cm: is not a JSON object") + fix},
           {R"({"queues":{}})",
            std::string("cm: savedAt is not an RFC 3339 time such as 2026-12-01T12:00:00Z") + fix},
           {R"({"savedAt":"infinite-future","queues":{}})",
            std::string("cm: savedAt is not an RFC 3339 time such as 2026-12-01T12:00:00Z") + fix},
           {R"({"savedAt":"2026-12-01T12:00:00Z"})",
            std::string("cm: queues is not an object of queue names") + fix},
           {R"({"savedAt":"2026-12-01T12:00:00Z","queues":{"a":{"gpuSeconds":-1,"devices":0}}})",
            std::string("cm: queues.a needs gpuSeconds and devices, numbers at or above 0") + fix},
           {R"({"savedAt":"2026-12-01T12:00:00Z","queues":{},"demandPeaks":[1]})",
            std::string("cm: demandPeaks is not an object of hours") + fix},
           {R"({"savedAt":"2026-12-01T12:00:00Z","queues":{},"demandPeaks":{"x":1}})",
            std::string("cm: demandPeaks.x needs an hour since 1970 and a number at or above 0") +
                fix},
           {R"({"savedAt":"2026-12-01T12:00:00Z","queues":{},"demandPeaks":{"5":-1}})",
            std::string("cm: demandPeaks.5 needs an hour since 1970 and a number at or above 0") +
                fix},
           {R"({"savedAt":"2026-12-01T12:00:00Z","queues":{"a":3}})",
            std::string("cm: queues.a needs gpuSeconds and devices, numbers at or above 0") + fix},
       }) {
    absl::StatusOr<QueueUsage> u = ReadQueueUsage(c.text, "cm");
    ASSERT_FALSE(u.ok()) << c.text;
    EXPECT_EQ(u.status().message(), c.message) << c.text;
  }
}

}  // namespace
}  // namespace gpuplane::kube
