#include "kube/leader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "kube/rest_config.h"

namespace gpuplane::kube {
namespace {

using Clock = std::chrono::steady_clock;

// Against a real kube-apiserver (GPUPLANE_TEST_PLANE, set by scripts/e2e.sh), with short
// times: Leases of 2 s, renewals every 0.25 s, a renew deadline of 1.5 s.
class LeaderPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("GPUPLANE_TEST_PLANE");
    if (dir == nullptr) GTEST_SKIP() << "GPUPLANE_TEST_PLANE is unset (scripts/e2e.sh sets it)";
    absl::StatusOr<RestConfig> cfg = LoadKubeconfig(std::string(dir) + "/kubeconfig");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    client_.emplace(*cfg);
    lease_ = "leader-test-" + std::to_string(Clock::now().time_since_epoch().count() % 1000000000);
  }
  LeaderOptions Options(const std::string& id) const {
    return {.lease_namespace = "default",
            .lease_name = lease_,
            .identity = id,
            .lease_seconds = 2,
            .renew_deadline = 1.5,
            .retry_seconds = 0.25};
  }
  // Seconds until `done`, or -1 after `limit`.
  static double Until(const std::function<bool()>& done, double limit) {
    auto start = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - start).count() < limit) {
      if (done()) return std::chrono::duration<double>(Clock::now() - start).count();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  std::optional<Client> client_;
  std::string lease_;
};

TEST_F(LeaderPlaneTest, OneOfTwoLeadsAndNeverBoth) {
  LeaderElector a(*client_, Options("a")), b(*client_, Options("b"));
  std::thread ta([&] { a.Run(); }), tb([&] { b.Run(); });
  ASSERT_GE(Until([&] { return a.IsLeader() || b.IsLeader(); }, 10), 0);
  bool both = false;
  Until(
      [&] {
        both = both || (a.IsLeader() && b.IsLeader());
        return false;
      },
      3);
  EXPECT_FALSE(both);
  EXPECT_NE(a.IsLeader(), b.IsLeader());
  a.Stop();
  b.Stop();
  ta.join();
  tb.join();
  EXPECT_EQ(a.acquisitions() + b.acquisitions(), 1);
}

TEST_F(LeaderPlaneTest, AStoppedLeaderHandsOverAtOnce) {
  LeaderElector a(*client_, Options("a"));
  std::thread ta([&] { a.Run(); });
  ASSERT_GE(Until([&] { return a.IsLeader(); }, 10), 0);
  LeaderElector b(*client_, Options("b"));
  std::thread tb([&] { b.Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(b.IsLeader());
  a.Stop();
  ta.join();
  EXPECT_FALSE(a.IsLeader());
  double took = Until([&] { return b.IsLeader(); }, 5);
  EXPECT_GE(took, 0);
  EXPECT_LT(took, 1.0) << "a released Lease is taken at the next retry";
  b.Stop();
  tb.join();
}

TEST_F(LeaderPlaneTest, ACrashedLeadersLeaseIsTakenAfterItsDuration) {
  LeaderElector a(*client_, Options("a"));
  std::thread ta([&] { a.Run(); });
  ASSERT_GE(Until([&] { return a.IsLeader(); }, 10), 0);
  LeaderElector b(*client_, Options("b"));
  std::thread tb([&] { b.Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  a.Abandon();  // no release, as if killed
  ta.join();
  double took = Until([&] { return b.IsLeader(); }, 10);
  EXPECT_GE(took, 1.0) << "b must wait for the Lease to expire";
  EXPECT_LT(took, 2.0 + 1.0) << "the Lease's duration plus a retry and slack";
  b.Stop();
  tb.join();
}

}  // namespace
}  // namespace gpuplane::kube
