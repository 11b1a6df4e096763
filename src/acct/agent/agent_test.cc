// Agent::Pass driven directly, on a ManualClock: the replay of testdata/acct/node attributes
// what `gpuplane attribute` does, and device ownership is re-read only when the clock says
// it is due.
#include "acct/agent/agent.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "acct/agent/http.h"
#include "gtest/gtest.h"
#include "util/clock.h"

namespace gpuplane::acct {
namespace {

constexpr char kNode[] = "testdata/acct/node/";

AgentOptions ReplayOptions() {
  AgentOptions o;
  o.sampler = "replay";
  o.replay = std::string(kNode) + "recording.jsonl";
  o.proc_root = std::string(kNode) + "proc";
  o.pods = std::string(kNode) + "pods.json";
  o.podresources_json = std::string(kNode) + "podresources.json";
  o.prices = std::string(kNode) + "prices.yaml";
  o.listen = "";
  o.ownership_refresh = 10;
  return o;
}

const PodUsage* Find(const Attribution& a, const std::string& pod, const std::string& uuid) {
  for (const PodUsage& p : a.pods) {
    if (p.who.pod == pod && p.gpu_uuid == uuid) return &p;
  }
  return nullptr;
}

TEST(AgentTest, PassesAttributeTheRecordingAndStampThePassOnTheClock) {
  AgentOptions o = ReplayOptions();
  o.exit_at_end = true;
  util::ManualClock clock(1000);
  Agent agent(o, clock);
  ASSERT_TRUE(agent.Init().ok());
  EXPECT_EQ(agent.state().last_pass_wall, 1000);
  for (int i = 0; i < 4; ++i) {  // the recording's passes at t = 0, 10, 20, 30
    clock.Advance(1);
    ASSERT_TRUE(agent.Pass()) << "pass " << i;
  }
  EXPECT_EQ(agent.state().last_pass_wall, 1004);
  EXPECT_FALSE(agent.Pass());  // the recording ended
  Attribution totals = agent.state().accountant->Totals();
  const PodUsage* chat_a = Find(totals, "chat-a", "GPU-aaaa");
  ASSERT_NE(chat_a, nullptr);
  EXPECT_DOUBLE_EQ(chat_a->sm_seconds, 15.0);  // as `gpuplane attribute` (cli_test.sh)
  EXPECT_EQ(agent.state().problems->counts().count("podresources_json"), 0U);
}

TEST(AgentTest, InitRefusesNumbersTheLoopCannotUse) {
  util::ManualClock clock(0);
  const double nan = std::nan("");
  struct Case {
    void (*set)(AgentOptions&, double);
    double value;
    const char* flag;
  };
  const Case cases[] = {
      {[](AgentOptions& o, double v) { o.interval = v; }, nan, "--interval"},
      {[](AgentOptions& o, double v) { o.interval = v; }, -1, "--interval"},
      {[](AgentOptions& o, double v) { o.bucket = v; }, 0, "--ledger-bucket"},
      {[](AgentOptions& o, double v) { o.bucket = v; }, HUGE_VAL, "--ledger-bucket"},
      {[](AgentOptions& o, double v) { o.ownership_refresh = v; }, nan, "--ownership-refresh"},
      {[](AgentOptions& o, double v) { o.max_passes = static_cast<int64_t>(v); }, -3,
       "--max-passes"},
  };
  for (const Case& c : cases) {
    AgentOptions o = ReplayOptions();
    c.set(o, c.value);
    Agent agent(o, clock);
    absl::Status s = agent.Init();
    EXPECT_FALSE(s.ok()) << c.flag << " " << c.value;
    EXPECT_NE(s.message().find(c.flag), std::string::npos) << s.message();
  }
}

TEST(AgentTest, OwnershipIsReadAgainOnlyWhenTheRefreshIsDue) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("agent_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path json = dir / "podresources.json";
  fs::copy_file(std::string(kNode) + "podresources.json", json,
                fs::copy_options::overwrite_existing);
  AgentOptions o = ReplayOptions();
  o.podresources_json = json.string();
  util::ManualClock clock(50);
  Agent agent(o, clock);
  ASSERT_TRUE(agent.Init().ok());
  ASSERT_TRUE(agent.Pass());  // reads the file: the next read is due at 60
  std::ofstream(json) << "not json";
  auto broken_reads = [&] {
    const ErrorCounts& c = agent.state().problems->counts();
    auto it = c.find("podresources_json");
    return it == c.end() ? 0 : it->second;
  };
  ASSERT_TRUE(agent.Pass());
  clock.Advance(9.5);
  ASSERT_TRUE(agent.Pass());
  EXPECT_EQ(broken_reads(), 0);
  clock.Advance(0.5);
  ASSERT_TRUE(agent.Pass());
  EXPECT_EQ(broken_reads(), 1);
  // The ownership read before stays in force: chat-a is still charged for its GPU.
  EXPECT_NE(Find(agent.state().accountant->Totals(), "chat-a", "GPU-aaaa"), nullptr);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuplane::acct
