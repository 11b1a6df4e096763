// The live scheduler against a real control plane: writes the API server refuses, tried
// again after a backoff.
#include "kube/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/loader.h"
#include "api/object.h"
#include "api/storage_types.h"
#include "api/writer.h"
#include "kube/json_field.h"
#include "kube/plane_testing.h"
#include "kube/queue_usage.h"
#include "kube/rest_config.h"
#include "kube/scheduler_metrics.h"
#include "kube/writer.h"
#include "sched/pass.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"
#include "sched/status.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

// A write the API server refuses is tried again after a backoff even when nothing in the
// cluster changes: a ValidatingAdmissionPolicy (which the scheduler does not watch) denies
// updates of the namespace's claims, the scheduler's allocation fails, the policy's binding is
// removed, and the pod is bound on a later try.
TEST_F(SchedulerPlaneTest, AFailedWriteIsTriedAgainWithoutAClusterChange) {
  Node("n", "H100", 1);
  Claim("probe", 1);
  std::vector<std::string> policy =
      RefuseClaimUpdates(util::Cat("deny-claims-", id_), "false", "probe");
  Claim("c", 1);
  Pod("p", {{"name", "gpu"}, {"resourceClaimName", "c"}});
  Start();
  const std::string failed = "gpuplane_scheduler_api_errors_total{write=\"claim\"}";
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(failed) != std::string::npos;
  })) << status_;
  EXPECT_EQ(NodeOf("p"), "");
  for (const std::string& path : policy) (void)client_->Do("DELETE", path);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("p").empty(); }, 60)) << status_;
}

// A preemption whose eviction the API server refuses is tried again after a backoff: a
// ValidatingAdmissionPolicy denies deletes of the victim, so its first eviction fails (it is
// marked, not deleted); once the policy's binding is removed, nothing else changing in the
// cluster, the victim is deleted and the preemptor bound (before, the preemptor's unchanged
// report kept the preemption from being tried again).
TEST_F(SchedulerPlaneTest, ARefusedEvictionIsTriedAgain) {
  PriorityClasses();
  Node("n", "H100", 1);
  const json one = OneGpuTemplate();
  auto pod = [&](const std::string& name, const std::string& level) {
    Pod(name, one,
        {{"priorityClassName", util::Cat(level, "-", id_)}, {"terminationGracePeriodSeconds", 0}});
  };
  pod("low", "low");
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("low").empty(); })) << status_;
  std::vector<std::string> policy = RefusePodDeletes(util::Cat("deny-delete-", id_), "low");
  pod("high", "high");
  const std::string failed = "gpuplane_scheduler_api_errors_total{write=\"preemption\"}";
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(failed) != std::string::npos;
  })) << status_;
  EXPECT_TRUE(Condition("low", "DisruptionTarget").is_object());
  EXPECT_EQ(NodeOf("high"), "");
  for (const std::string& path : policy) (void)client_->Do("DELETE", path);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("high").empty(); }, 60)) << status_ << Describe();
  EXPECT_FALSE(Get(PodPath(ns_, "low")).is_object()) << "the victim is gone";
  EXPECT_EQ(GangViolation(), "");  // no device in two claims
}

// A pod whose writes keep failing sits out of the passes while it backs off, so the device the
// pass gave it goes to the next pod (without backoff it would be given the device again on
// every cycle and the other pod would wait as long as the failure lasts).
TEST_F(SchedulerPlaneTest, APodWhoseWritesFailSitsOutAndOthersGetItsDevice) {
  Node("n", "H100", 1);
  Claim("probe", 1);
  std::vector<std::string> policy =
      RefuseClaimUpdates(util::Cat("deny-one-claim-", id_),
                         "!(object.metadata.name in ['probe', 'a-claim'])", "probe");
  Claim("a-claim", 1);
  Claim("b-claim", 1);
  Pod("a-refused", {{"name", "gpu"}, {"resourceClaimName", "a-claim"}});
  Pod("b-next", {{"name", "gpu"}, {"resourceClaimName", "b-claim"}});
  Start();
  const std::string failed = "gpuplane_scheduler_api_errors_total{write=\"claim\"}";
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(failed) != std::string::npos;
  })) << status_;
  ASSERT_TRUE(Eventually([&] { return !NodeOf("b-next").empty(); }, 30)) << status_;
  EXPECT_EQ(NodeOf("a-refused"), "");
  for (const std::string& path : policy) (void)client_->Do("DELETE", path);
  // The device is b-next's now: a-refused, back from its backoff, is told so.
  ASSERT_TRUE(Eventually([&] { return Condition("a-refused", "PodScheduled").is_object(); }, 60))
      << status_;
  EXPECT_EQ(NodeOf("a-refused"), "");
}

}  // namespace
}  // namespace gpuplane::kube
