// The Philly trace reader: a hand-made file with every kind of bad row (testdata/sim), the
// tenants' guarantees, and the real trace when ../shared/data/philly is beside the checkout.
#include "sim/philly.h"

#include <filesystem>
#include <numeric>

#include "gtest/gtest.h"

namespace gpuplane::sim {
namespace {

std::string Source(const std::string& rel) { return std::string(GPUPLANE_SOURCE_DIR) + "/" + rel; }

TEST(Philly, ReadsJobsAndReportsEveryBadRow) {
  absl::StatusOr<PhillyTrace> t = ReadPhilly(Source("testdata/sim/philly-malformed.csv"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->jobs.size(), 4u);
  // By submission time, relative to the first (2017-10-01 00:00:00 UTC).
  EXPECT_EQ(t->first_submit_epoch, 1506816000);
  EXPECT_EQ(t->jobs[0].tenant, "vc-b");
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[0].gpus, 8);
  EXPECT_EQ(t->jobs[1].submit, 10);
  EXPECT_EQ(t->jobs[1].duration, 100);
  EXPECT_EQ(t->jobs[2].tenant, "vc-c");
  EXPECT_EQ(t->jobs[3].submit, 86400);
  EXPECT_EQ(t->jobs[3].gpus, 16);
  ASSERT_EQ(t->problems.size(), 5u);
  const std::string f = Source("testdata/sim/philly-malformed.csv");
  EXPECT_EQ(t->problems[0], f + ":4: job skipped: timestamp \"2017-13-01 00:00:00\" is not a "
                                "time as YYYY-MM-DD HH:MM:SS");
  EXPECT_EQ(t->problems[1], f + ":5: job skipped: duration \"-5\" is not a non-negative number");
  EXPECT_EQ(t->problems[2], f + ":6: job skipped: num_gpus 0 is outside 1..1024");
  EXPECT_EQ(t->problems[3], f + ":7: job skipped: the job has no cluster (tenant)");
  EXPECT_EQ(t->problems[4], f + ":9: job skipped: expected 5 fields, found 3");
}

TEST(Philly, MissingColumnIsAnError) {
  absl::StatusOr<PhillyTrace> t = ParsePhilly("timestamp,duration,gpus,cluster\n", "x.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "x.csv:1: the header lacks column \"num_gpus\"; expected columns: timestamp, "
            "duration, num_gpus, cluster");
}

TEST(Philly, GuaranteesFollowGpuTimeAndAddUpToTheCluster) {
  absl::StatusOr<PhillyTrace> t = ReadPhilly(Source("testdata/sim/philly-malformed.csv"));
  ASSERT_TRUE(t.ok());
  // GPU time: vc-b 400 + 57600, vc-a 100, vc-c 60.
  std::vector<TenantShare> g = TenantGuarantees(*t, 10);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].tenant, "vc-b");
  EXPECT_EQ(g[0].gpu_seconds, 58000);
  EXPECT_EQ(g[0].guarantee_gpus, 10);
  EXPECT_EQ(g[1].guarantee_gpus + g[2].guarantee_gpus, 0);
  std::vector<TenantShare> big = TenantGuarantees(*t, 100000);
  int sum = 0;
  for (const TenantShare& s : big) sum += s.guarantee_gpus;
  EXPECT_EQ(sum, 100000);
  EXPECT_EQ(big[1].tenant, "vc-a");
  EXPECT_EQ(big[1].guarantee_gpus, 172);  // 100 / 58160 of 100,000 = 171.9
}

TEST(Philly, TheSharedTrace) {
  const std::string path = Source("../shared/data/philly/philly_2017-09_10.csv");
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "no " << path << " (../shared/data/philly beside the checkout)";
  }
  absl::StatusOr<PhillyTrace> t = ReadPhilly(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->jobs.size(), 52849u);  // its README
  EXPECT_TRUE(t->problems.empty()) << t->problems.front();
  std::vector<TenantShare> g = TenantGuarantees(*t, 512);
  // The condensed trace holds 12 of the full trace's 15 virtual clusters.
  EXPECT_EQ(g.size(), 12u);
  EXPECT_EQ(g[0].tenant, "ee9e8c");  // the most GPU time, not the most jobs
  EXPECT_EQ(std::accumulate(g.begin(), g.end(), 0,
                            [](int s, const TenantShare& x) { return s + x.guarantee_gpus; }),
            512);
  EXPECT_GE(t->jobs.back().submit, 50 * 86400.0);  // about two months
}

}  // namespace
}  // namespace gpuplane::sim
