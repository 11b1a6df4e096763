#include "acct/metrics.h"

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

TEST(MetricsTest, TextFormat) {
  Attribution a;
  a.pods.push_back(PodUsage{{"ns", "p\"1", "c\\x"}, "GPU-1", "", 1.5, 2e9, 7, 250'000'000});
  a.devices.push_back(DeviceUsage{"GPU-1", "NVIDIA H100", true, false, 3, 0.5, 0, 1'000'000'000});
  a.audit.push_back(AuditFinding{42, "GPU-1", "/x", "", {}, "the process belongs to no pod"});
  a.unallocated.push_back(UnallocatedUse{{"ns", "nb", "c"}, "GPU-1", 20, 1e9, 10});
  AgentCounters agent;
  agent.errors["nvml_not_available"] = 1;
  std::string m = RenderMetrics(a, agent);
  EXPECT_NE(m.find("gpuplane_unallocated_use_sm_seconds_total{namespace=\"ns\",pod=\"nb\","
                   "container=\"c\",device=\"GPU-1\"} 20\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("# TYPE gpuplane_pod_gpu_sm_seconds_total counter\n"
                   "gpuplane_pod_gpu_sm_seconds_total{namespace=\"ns\",pod=\"p\\\"1\","
                   "container=\"c\\\\x\",gpu_uuid=\"GPU-1\",mig_instance=\"\","
                   "model=\"NVIDIA H100\"} 1.5\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("gpuplane_pod_gpu_cost_dollars_total{"), std::string::npos);
  EXPECT_NE(m.find("} 0.25\n"), std::string::npos);
  EXPECT_NE(m.find("gpuplane_gpu_cost_dollars_total{gpu_uuid=\"GPU-1\",model=\"NVIDIA H100\"} 1\n"),
            std::string::npos);
  EXPECT_NE(m.find("gpuplane_agent_errors_total{kind=\"nvml_not_available\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(m.back(), '\n');
  EXPECT_EQ(EscapeLabel("a\nb"), "a\\nb");
}

// Issue 6: /metrics rendered in under 5 ms for 1,000 pods.
TEST(MetricsTest, ThousandPodsRenderQuickly) {
  Attribution a;
  for (int i = 0; i < 1000; ++i) {
    a.pods.push_back(PodUsage{{"team", util::Cat("pod-", i), "main"},
                              util::Cat("GPU-", i / 8),
                              "",
                              123.25,
                              4.5e12,
                              1 << 30,
                              987654321});
  }
  for (int g = 0; g < 125; ++g) {
    a.devices.push_back(DeviceUsage{util::Cat("GPU-", g), "NVIDIA H100 80GB HBM3", true, false,
                                    3600, 12.5, 100, 2'490'000'000});
  }
  double best = 1e9;
  size_t bytes = 0;
  for (int run = 0; run < 20; ++run) {
    auto start = std::chrono::steady_clock::now();
    std::string m = RenderMetrics(a, {});
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    bytes = m.size();
  }
  std::printf("  /metrics for 1,000 pods and 125 GPUs: %zu bytes in %.2f ms (best of 20)\n", bytes,
              best * 1e3);
  EXPECT_LT(best, 0.05);  // generous for sanitizer builds; see docs/PERFORMANCE.md (< 5 ms)
}

// The shipped dashboard and alerts read only agent metrics the agent serves (the scheduler's
// own, gpuplane_scheduler_ and gpuplane_queue_, are checked in kube's tests).
TEST(MetricsTest, TheShippedDashboardAndAlertsReadMetricsItServes) {
  const std::string text = RenderMetrics({}, {});
  const std::regex name("gpuplane_(?!scheduler_|queue_)[a-z_]+");
  int seen = 0;
  for (const char* file : {"/deploy/grafana-dashboard.json", "/deploy/agent-prometheusrule.yaml",
                           "/deploy/scheduler/prometheusrule.yaml"}) {
    absl::StatusOr<std::string> read = util::ReadFile(std::string(GPUPLANE_SOURCE_DIR) + file);
    ASSERT_TRUE(read.ok()) << read.status();
    for (std::sregex_iterator it(read->begin(), read->end(), name), end; it != end; ++it, ++seen) {
      EXPECT_NE(text.find("# TYPE " + it->str() + " "), std::string::npos)
          << file << ": " << it->str();
    }
  }
  EXPECT_GE(seen, 14);
}

}  // namespace
}  // namespace gpuplane::acct
