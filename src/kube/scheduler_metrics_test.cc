#include "kube/scheduler_metrics.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "util/strings.h"

namespace gpuplane::kube {
namespace {

TEST(SchedulerMetricsTest, RendersCountersHistogramAndGauges) {
  SchedulerMetrics m;
  m.Attempt("scheduled");
  m.Attempt("scheduled");
  m.Latency(0.3);
  m.Latency(1000);
  m.SetPending({{"Unschedulable/Devices", {2, 1000}}}, 1, 1000);
  m.SetPending({{"Unresolvable/Claims", {1, 1000}}}, 0, 0);
  std::string text = m.Render(1900);
  EXPECT_NE(text.find("gpuplane_scheduler_attempts_total{result=\"scheduled\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_pod_scheduling_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("le=\"+Inf\"} 2"), std::string::npos);
  // A reason seen before drops to 0 rather than vanishing (alerts see it resolve).
  EXPECT_NE(text.find("gpuplane_scheduler_pending_pods{reason=\"Unschedulable/Devices\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_pending_pods{reason=\"Unresolvable/Claims\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_gangs_waiting 0"), std::string::npos);
  // Ages from the creation times, taken when rendered; 0 for what is not pending.
  EXPECT_NE(
      text.find("gpuplane_scheduler_pending_oldest_seconds{reason=\"Unresolvable/Claims\"} 900.0"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("gpuplane_scheduler_pending_oldest_seconds{reason=\"Unschedulable/Devices\"} 0.0"),
      std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_gang_waiting_oldest_seconds 0.0"), std::string::npos);
  m.SetPending({{"Unresolvable/Claims", {1, 1000}}}, 1, 1500);
  text = m.Render(2000);
  EXPECT_NE(
      text.find("gpuplane_scheduler_pending_oldest_seconds{reason=\"Unresolvable/Claims\"} 1000.0"),
      std::string::npos)
      << "no pass ran, the pod still waits: its age grows";
  EXPECT_NE(text.find("gpuplane_scheduler_gang_waiting_oldest_seconds 500.0"), std::string::npos);
  m.SetQueues({{"team-a", 8}}, {{"team-a", 3600.5}});
  m.SetQueues({{"team-b", 2}}, {});  // a queue gone is gone; no past use without a half-life
  text = m.Render();
  EXPECT_EQ(text.find("gpuplane_queue_devices{queue=\"team-a\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("gpuplane_queue_devices{queue=\"team-b\"} 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpuplane_queue_past_use_device_seconds{"), std::string::npos) << text;
  m.SetQueues({{"team-a", 8}}, {{"team-a", 3600.5}});
  EXPECT_NE(m.Render().find("gpuplane_queue_past_use_device_seconds{queue=\"team-a\"} 3600.5"),
            std::string::npos);
  // A replica that stops leading counts nothing pending: sums across replicas are the leader's.
  m.Standby();
  text = m.Render(2000);
  EXPECT_NE(text.find("gpuplane_scheduler_pending_pods{reason=\"Unresolvable/Claims\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("gpuplane_scheduler_pending_oldest_seconds{reason=\"Unresolvable/Claims\"} 0.0"),
      std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_gangs_waiting 0\n"), std::string::npos);
  EXPECT_NE(text.find("gpuplane_queue_devices{queue=\"team-a\"} 0.0"), std::string::npos);
}

// The shipped alerts read only metrics the scheduler serves (a renamed metric would leave an
// alert that never fires).
TEST(SchedulerMetricsTest, TheShippedAlertsReadMetricsItServes) {
  const std::string file =
      std::string(GPUPLANE_SOURCE_DIR) + "/deploy/scheduler/prometheusrule.yaml";
  absl::StatusOr<std::string> rules = util::ReadFile(file);
  ASSERT_TRUE(rules.ok()) << rules.status();
  const std::string text = SchedulerMetrics().Render();
  const std::regex name("gpuplane_(scheduler|queue)_[a-z_]+");
  int seen = 0;
  for (std::sregex_iterator it(rules->begin(), rules->end(), name), end; it != end; ++it, ++seen) {
    EXPECT_NE(text.find("# TYPE " + it->str() + " "), std::string::npos) << it->str();
  }
  EXPECT_GE(seen, 6);
}

}  // namespace
}  // namespace gpuplane::kube
