// The live scheduler against a real control plane: queues (limits, definitions installed
// while running, past use outliving the leader, opportunistic work).
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

// Queues in the live scheduler, with the Queue definition shipped in deploy/crds/ (the
// plane does not serve the kind otherwise): a queue for this test's namespace that may hold
// one device of the test's class. Of two one-GPU pods one is bound and the other says its
// queue would go over its limit; a pod labelled with a queue that does not exist says so. The
// queue is deleted at the end (later tests' pods are in no queue).
TEST_F(SchedulerPlaneTest, QueueLimitsHoldPodsBackAndSayWhy) {
  ASSERT_NO_FATAL_FAILURE(InstallQueueDefinition());
  const std::string queue = "q-" + ns_;
  struct Cleanup {
    Client& client;
    std::string path;
    ~Cleanup() { (void)client.Do("DELETE", path); }
  } cleanup{*client_, "/apis/gpuplane.io/v1alpha1/queues/" + queue};
  Queue(queue, {{"deviceclass/" + cls_, {{"limit", "1"}}}});
  Node("n", "H100", 2);
  const json one = OneGpuTemplate();
  Pod("first", one);
  Pod("second", one);
  Create("/api/v1/namespaces/" + ns_ + "/pods",
         {{"metadata", {{"name", "stray"}, {"labels", {{"gpuplane.io/queue", "nosuch"}}}}},
          {"spec",
           {{"schedulerName", name_},
            {"containers", json::array({{{"name", "c"}, {"image", "pause"}}})}}}});
  // Past use on: the queues' history is kept across cycles (its effect on shares is pinned
  // by preempt-reclaim-leans-against-past-use.yaml).
  Start({.usage_half_life = 3600});

  ASSERT_TRUE(Eventually([&] {
    return (!NodeOf("first").empty() || !NodeOf("second").empty()) &&
           (Condition("first", "PodScheduled").is_object() ||
            Condition("second", "PodScheduled").is_object()) &&
           Condition("stray", "PodScheduled").is_object();
  })) << status_;
  const std::string waiting = NodeOf("first").empty() ? "first" : "second";
  EXPECT_NE(NodeOf(waiting == "first" ? "second" : "first"), "");
  EXPECT_EQ(NodeOf(waiting), "");
  json c = Condition(waiting, "PodScheduled");
  EXPECT_EQ(c["status"], "False");
  EXPECT_NE(c.value("message", "")
                .find("queue " + queue + " would go over its limit for deviceclass/" + cls_ +
                      ": 1 of 1 in use"),
            std::string::npos)
      << c.dump();
  std::string stray = Condition("stray", "PodScheduled").value("message", "");
  EXPECT_NE(stray.find("names queue \"nosuch\", which is not defined"), std::string::npos) << stray;
}

// The Queue definition installed while the scheduler runs is read without a restart (a kind
// the server did not serve is asked for again), and deleting it neither stops the scheduler
// nor leaves its queues in force.
TEST_F(SchedulerPlaneTest, AQueueDefinitionInstalledOrDeletedWhileRunningIsFollowed) {
  ASSERT_NO_FATAL_FAILURE(RemoveQueueDefinition());
  Node("n", "H100", 2);
  const json one = OneGpuTemplate();
  Pod("first", one);
  Start({.absent_recheck_seconds = 0.2});
  ASSERT_TRUE(Eventually([&] { return !NodeOf("first").empty(); })) << status_;

  ASSERT_NO_FATAL_FAILURE(InstallQueueDefinition());
  const std::string queue = "q-" + ns_;
  Queue(queue, {{"deviceclass/" + cls_, {{"limit", "1"}}}});
  // The scheduler has the queue (holding first's device) before the second pod comes.
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find("gpuplane_queue_devices{queue=\"" + queue +
                                               "\"} 1") != std::string::npos;
  })) << scheduler_->metrics().Render();
  Pod("second", one);
  ASSERT_TRUE(Eventually([&] {
    json c = Condition("second", "PodScheduled");
    return c.is_object() &&
           c.value("message", "").find("queue " + queue + " would go over its limit") !=
               std::string::npos;
  })) << Condition("second", "PodScheduled").dump();
  EXPECT_EQ(NodeOf("second"), "");

  ASSERT_NO_FATAL_FAILURE(RemoveQueueDefinition());  // its queues go with it
  EXPECT_TRUE(Eventually([&] { return !NodeOf("second").empty(); })) << status_;
  EXPECT_TRUE(scheduler_->Error().ok()) << scheduler_->Error();
  EXPECT_TRUE(scheduler_->Ready());
}

TEST_F(SchedulerPlaneTest, QueuesPastUseOutlivesTheLeader) {
  // What the last leader saved a minute ago: team held one device and has 1e6 device-seconds
  // of past use. This replica starts leading, goes on from it (decayed over the minute, with
  // the device added) and saves it for the next one, again when it stops.
  const std::string path = "/api/v1/namespaces/" + ns_ + "/configmaps/" + name_ + "-queue-usage";
  const double before = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()) - 60;
  QueueUsage saved{.saved_at = before, .gpu_seconds = {{"team", 1e6}}, .devices = {{"team", 1}}};
  Create("/api/v1/namespaces/" + ns_ + "/configmaps",
         {{"metadata", {{"name", name_ + "-queue-usage"}}},
          {"data", {{"usage.json", WriteQueueUsage(saved)}}}});
  auto read = [&] {
    json cm = Get(path);
    std::string text = cm.is_object() ? cm["data"].value("usage.json", "") : "";
    absl::StatusOr<QueueUsage> u = ReadQueueUsage(text, path);
    return u.ok() ? *u : QueueUsage{};
  };
  Start({.usage_half_life = 3600, .state_namespace = ns_});
  QueueUsage first;
  ASSERT_TRUE(Eventually([&] {
    first = read();
    return first.saved_at > before + 1;
  })) << status_;
  // 1e6 halves in an hour: about 988,500 after a minute, plus the device's minute, about 60.
  ASSERT_TRUE(first.gpu_seconds.contains("team"));
  EXPECT_GT(first.gpu_seconds.at("team"), 980'000);
  EXPECT_LT(first.gpu_seconds.at("team"), 1e6);
  EXPECT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(
               "gpuplane_queue_past_use_device_seconds{queue=\"team\"} 98") != std::string::npos;
  })) << "/metrics shows it:\n"
      << scheduler_->metrics().Render();
  scheduler_->Stop();
  thread_.join();
  scheduler_.reset();
  QueueUsage last = read();
  EXPECT_GT(last.saved_at, first.saved_at) << "saved again when it stopped";
  EXPECT_LE(last.gpu_seconds.at("team"), first.gpu_seconds.at("team"));
}

TEST_F(SchedulerPlaneTest, OpportunisticWorkWaitsForTheForecastRise) {
  // An opportunistic queue (gpu weight 0, no guarantee: a 1-hour window) and a node with two
  // GPUs. The saved history says the other queues' demand rose from 0 to a million devices
  // (more than the shared plane's nodes have) from this hour to the next one, one and two
  // days ago: the pod, which fits now, would be evicted within its window, so it waits and
  // says why. Without that history it would bind.
  ASSERT_NO_FATAL_FAILURE(InstallQueueDefinition());
  const std::string queue = "night-" + id_;
  Queue(queue, {{"gpu", {{"weight", "0"}}}});
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  const auto hour = static_cast<int64_t>(now / 3600);
  QueueUsage saved{
      .saved_at = now,
      .demand_peaks = {{hour - 48, 0}, {hour - 47, 1e6}, {hour - 24, 0}, {hour - 23, 1e6}}};
  Create("/api/v1/namespaces/" + ns_ + "/configmaps",
         {{"metadata", {{"name", name_ + "-queue-usage"}}},
          {"data", {{"usage.json", WriteQueueUsage(saved)}}}});
  Node("n", "H100", 2);
  const json one = OneGpuTemplate();
  Pod("tune", one);
  Start({.state_namespace = ns_});
  ASSERT_TRUE(Eventually([&] { return Condition("tune", "PodScheduled").is_object(); })) << status_;
  std::string message = Condition("tune", "PodScheduled").value("message", "");
  EXPECT_NE(message.find("Opportunistic queue " + queue + " waits for headroom"), std::string::npos)
      << message;
  EXPECT_NE(message.find("may want 1000000 more within the guarantee window"), std::string::npos)
      << message;
  EXPECT_EQ(NodeOf("tune"), "");
  (void)client_->Do("DELETE", "/apis/gpuplane.io/v1alpha1/queues/" + queue);
}

}  // namespace
}  // namespace gpuplane::kube
