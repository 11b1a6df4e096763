#include "sim/trace.h"
#include "gtest/gtest.h"
#include "sim/sim_cluster.h"
#include "sim/workload.h"

namespace gpuplane::sim {
namespace {

TEST(TraceTest, OpenbPodsParseAndNormalize) {
  absl::StatusOr<PodTrace> t = ParseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "a,12000,16384,1,460,,LS,Running,0,100,0\n"
      "b,6000,12288,4,0,V100M16|V100M32,LS,Running,5,,5\n"
      "c,1000,512,1,0,,BE,Running,7,9,7\n"
      "d,1000,512,1,1500,,BE,Running,7,9,7\n"
      "e,2000,1024,0,0,,BE,Running,8,9,8\n",
      "pods.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->pods.size(), 5u);
  EXPECT_TRUE(t->problems.empty());
  EXPECT_EQ(t->pods[0].gpu_milli, 460);
  EXPECT_EQ(t->pods[0].deletion, 100);
  EXPECT_EQ(t->pods[1].gpu_milli, 1000);  // several GPUs are whole
  EXPECT_EQ(t->pods[1].models, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ(t->pods[1].deletion, -1);     // no deletion time: never
  EXPECT_EQ(t->pods[2].gpu_milli, 1000);  // one GPU, no share given: whole
  EXPECT_EQ(t->pods[3].gpu_milli, 1000);  // clamped
  EXPECT_EQ(t->pods[4].gpu_milli, 0);
  EXPECT_EQ(t->pods[4].source, "pods.csv:6");
}

// Malformed rows are reported with file and line and skipped; the rest is read.
TEST(TraceTest, MalformedRowsAreReportedAndSkipped) {
  struct Case {
    const char* row;
    const char* message;
  };
  const Case cases[] = {
      {"x,12000,16384,1", "expected 5 fields, found 4"},
      {"x,12000,16384,1,460,9", "expected 5 fields, found 6"},
      {"x,twelve,16384,1,460", "cpu_milli \"twelve\" is not a non-negative integer"},
      {"x,-5,16384,1,460", "cpu_milli \"-5\" is not a non-negative integer"},
      {"x,12000,1.5,1,460", "memory_mib \"1.5\" is not a non-negative integer"},
      {"x,12000,16384,,460", "num_gpu \"\" is not a non-negative integer"},
      {"x,12000,16384,1,4e2", "gpu_milli \"4e2\" is not a non-negative integer"},
      {"x,12000,16384,65,1000", "num_gpu 65 is more GPUs than any node has"},
      {"x,99999999999999999999,1,1,1", "is not a non-negative integer"},
  };
  for (const Case& c : cases) {
    std::string text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nok,1,1,0,0\n";
    text += c.row;
    text += "\nok2,1,1,0,0\n";
    absl::StatusOr<PodTrace> t = ParseOpenbPods(text, "p.csv");
    ASSERT_TRUE(t.ok()) << c.row;
    EXPECT_EQ(t->pods.size(), 2u) << c.row;
    ASSERT_EQ(t->problems.size(), 1u) << c.row;
    EXPECT_EQ(t->problems[0].rfind("p.csv:3: pod skipped: ", 0), 0u) << t->problems[0];
    EXPECT_NE(t->problems[0].find(c.message), std::string::npos) << t->problems[0];
  }
  absl::StatusOr<PodTrace> no_header = ParseOpenbPods("name,cpu_milli\n", "p.csv");
  ASSERT_FALSE(no_header.ok());
  EXPECT_NE(no_header.status().message().find("p.csv:1: the header lacks column \"memory_mib\""),
            std::string::npos)
      << no_header.status();
}

TEST(TraceTest, NodesOfBothFormats) {
  absl::StatusOr<NodeTrace> openb = ParseOpenbNodes(
      "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,786432,0,\n"
      "n2,1,1,8,\nn3,1,1,99,G2\n",
      "nodes.csv");
  ASSERT_TRUE(openb.ok());
  ASSERT_EQ(openb->nodes.size(), 2u);
  EXPECT_EQ(openb->nodes[0].model, "P100");
  EXPECT_EQ(openb->nodes[1].gpus, 0);
  ASSERT_EQ(openb->problems.size(), 2u);
  EXPECT_EQ(openb->problems[0], "nodes.csv:4: node skipped: a node with GPUs needs a model");
  EXPECT_NE(openb->problems[1].find("nodes.csv:5:"), std::string::npos);
  absl::StatusOr<NodeTrace> spot = ParseSpotNodes(
      "gpu_model,gpu_capacity_num,cpu_num,node_name\nGPU-series-1,4,192,0\nGPU-series-2,x,1,1\n",
      "spot.csv");
  ASSERT_TRUE(spot.ok());
  ASSERT_EQ(spot->nodes.size(), 1u);
  EXPECT_EQ(spot->nodes[0].cpu_milli, 192000);
  EXPECT_EQ(spot->nodes[0].name, "spot-0");
  EXPECT_EQ(spot->problems.size(), 1u);
}

TEST(WorkloadTest, ImpossibleAndUnknownRequestsAreReported) {
  std::vector<TraceNode> nodes = {{"n0", "G2", 64000, 262144, 8, "n.csv:2"},
                                  {"n1", "T4", 32000, 131072, 2, "n.csv:3"}};
  std::shared_ptr<const SimCluster> cluster = *SimCluster::FromNodes(nodes);
  std::vector<TracePod> pods(5);
  pods[0] = {"nine", 1000, 1, 9, 1000, {}, 0, -1, "p.csv:2"};
  pods[1] = {"a100-only", 1000, 1, 1, 1000, {"A100"}, 0, -1, "p.csv:3"};
  pods[2] = {"t4-or-a100", 1000, 1, 1, 500, {"T4", "A100"}, 0, -1, "p.csv:4"};
  pods[3] = {"huge-cpu", 100000, 1, 0, 0, {}, 0, -1, "p.csv:5"};
  pods[4] = {"fine", 1000, 1, 8, 1000, {}, 0, -1, "p.csv:6"};
  Demands d = ToDemands(pods, cluster->empty_view());
  EXPECT_EQ(d.dropped, 3);
  ASSERT_EQ(d.pods.size(), 2u);
  EXPECT_EQ(d.names, (std::vector<std::string>{"t4-or-a100", "fine"}));
  ASSERT_EQ(d.problems.size(), 4u);
  EXPECT_EQ(d.problems[0],
            "p.csv:2: pod nine dropped: it asks for 9 GPUs, but no node has more than 8");
  EXPECT_EQ(d.problems[1],
            "p.csv:3: pod a100-only dropped: it allows only GPU models the cluster lacks (A100)");
  EXPECT_EQ(d.problems[2], "p.csv:4: pod t4-or-a100: unknown GPU models ignored: A100");
  EXPECT_NE(d.problems[3].find("p.csv:5: pod huge-cpu dropped"), std::string::npos);
}

}  // namespace
}  // namespace gpuplane::sim
