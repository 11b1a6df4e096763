#include "sim/openb_tenants.h"

#include "gtest/gtest.h"

namespace gpuplane::sim {
namespace {

constexpr const char* kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "train,16000,65536,4,1000,,LS,Running,100,7300,100\n"
    "infer,4000,8192,1,460,,Guaranteed,Running,160,,160\n"
    "notebook,2000,4096,1,250,,BE,Running,130,1900,130\n"
    "cpu,1000,1024,0,0,,BE,Running,140,900,140\n"
    "batch,8000,16384,2,1000,,BE,Running,400,4000,400\n";

TEST(OpenbTenants, BestEffortPodsAreOpportunisticAndTheRestNonPreemptible) {
  absl::StatusOr<PodTrace> pods = ParseOpenbPods(kPods, "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.status();
  const TenantWorkload w = FromOpenb(*pods, 64, true);
  ASSERT_EQ(w.tenants, (std::vector<std::string>{"production", "best-effort"}));
  EXPECT_EQ(w.guarantee_gpus, (std::vector<int>{64, 0}));
  EXPECT_FALSE(w.Opportunistic(0));
  EXPECT_TRUE(w.Opportunistic(1));
  ASSERT_EQ(w.jobs.size(), 4u);  // the CPU-only pod is left out
  // By creation, from the first GPU pod's: train 0, notebook 30, infer 60, batch 300.
  EXPECT_EQ(w.jobs[0].submit, 0);
  EXPECT_EQ(w.jobs[0].duration, 7200);
  EXPECT_EQ(w.jobs[0].gpus, 4);
  EXPECT_TRUE(w.jobs[0].high);
  EXPECT_EQ(w.jobs[1].submit, 30);
  EXPECT_EQ(w.jobs[1].gpus, 1);  // a quarter of a GPU takes a whole one
  EXPECT_EQ(w.jobs[1].tenant, 1);
  EXPECT_FALSE(w.jobs[1].high);
  EXPECT_EQ(w.jobs[2].submit, 60);
  EXPECT_EQ(w.jobs[2].duration, 7300 - 160);  // no deletion: runs to the trace's last one
  EXPECT_TRUE(w.jobs[2].high);
  EXPECT_EQ(w.jobs[3].gpus, 2);
  EXPECT_NE(w.guarantee_note.find("2 pods asking for part of a GPU"), std::string::npos)
      << w.guarantee_note;
}

TEST(OpenbTenants, WithoutBestEffortKeepsTheSameClockAndTenants) {
  absl::StatusOr<PodTrace> pods = ParseOpenbPods(kPods, "pods.csv");
  ASSERT_TRUE(pods.ok());
  const TenantWorkload w = FromOpenb(*pods, 64, false);
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.jobs[1].submit, 60);  // times stay those of the run with best-effort work
  EXPECT_EQ(w.tenants.size(), 2u);
}

}  // namespace
}  // namespace gpuplane::sim
