// The tenant replay's scenario files (testdata/sched/tenants/*.txt): each anchor-like policy
// does what the scheduler it is named after documents, figure by figure; and the reader's
// errors name the file, the line and the field.
#include "sim/tenant_scenario.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace gpuplane::sim {
namespace {

TEST(TenantScenario, EveryScenarioFileHolds) {
  const std::filesystem::path dir =
      std::filesystem::path(GPUPLANE_SOURCE_DIR) / "testdata/sched/tenants";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<TenantScenario> s =
        ParseTenantScenario(text.str(), entry.path().filename().string());
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_FALSE(s->description.empty()) << "a # scenario: line";
    EXPECT_FALSE(s->source.empty()) << "a # source: line";
    for (const std::string& problem : CheckTenantScenario(*s)) ADD_FAILURE() << problem;
    ++files;
  }
  EXPECT_GE(files, 9);
}

TEST(TenantScenario, AFigureThatDiffersIsReported) {
  absl::StatusOr<TenantScenario> s = ParseTenantScenario(
      "tenant a guarantee=8\n"
      "job J submit=0 duration=100 gpus=8 tenant=a\n"
      "expect gpuplane end_s=99 evicted=J\n",
      "t.txt");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(CheckTenantScenario(*s),
            (std::vector<std::string>{"t.txt:3: gpuplane: end_s expected 99, got 100",
                                      "t.txt:3: gpuplane: evicted expected \"J\", got \"\""}));
}

TEST(TenantScenario, ErrorsNameTheFileLineAndField) {
  auto error = [](const std::string& text) {
    absl::StatusOr<TenantScenario> s = ParseTenantScenario(text, "s.txt");
    return s.ok() ? std::string("ok") : std::string(s.status().message());
  };
  EXPECT_EQ(error("nodes two\n"), "s.txt:1: nodes takes one number from 1 to 10000");
  EXPECT_EQ(error("tenant a\n"), "s.txt:1: missing guarantee=");
  EXPECT_EQ(error("tenant a guarantee=8\njob J submit=0 duration=1 gpus=8 tenant=b\n"),
            "s.txt:2: unknown tenant \"b\"; declare it with a tenant line first");
  EXPECT_EQ(error("tenant a guarantee=8\njob J submit=0 duration=1 gpus=0 tenant=a\n"),
            "s.txt:2: gpus=\"0\" is not a number from 1 to 1024");
  EXPECT_EQ(error("tenant a guarantee=8\njob J submit=5 duration=1 gpus=1 tenant=a\n"
                  "job K submit=1 duration=1 gpus=1 tenant=a\n"),
            "s.txt:3: jobs must be listed in submission order");
  EXPECT_EQ(error("tenant a guarantee=8\nexpect gpuplan preemptions=0\n"),
            "s.txt:2: unknown multi-tenant policy \"gpuplan\"; known: kube, kai, volcano, "
            "kueue, yunikorn, gpuplane; did you mean \"gpuplane\"?");
  EXPECT_EQ(error("tenant a guarantee=8\nexpect kai evicted=X\n"),
            "s.txt:2: evicted= names job \"X\", which is not declared above");
  EXPECT_EQ(
      error("tenant a guarantee=8 colour=red\n"),
      "s.txt:1: unknown tenant field \"colour\"; known: guarantee, min_runtime, opportunistic");
  EXPECT_EQ(error("frobnicate\n"),
            "s.txt:1: unknown statement \"frobnicate\"; known: nodes, checkpoint-interval, "
            "restore, window, min-runtime, usage-half-life, usage-k, tenant, job, expect");
  EXPECT_EQ(error("tenant a guarantee=8\n"),
            "s.txt: no expect line; say what a policy should do with the jobs");
  EXPECT_TRUE(error("tenant a guarantee=8\nexpect kai speed=3\n")
                  .starts_with("s.txt:2: unknown figure \"speed\"; known: evicted, finished, "));
}

}  // namespace
}  // namespace gpuplane::sim
