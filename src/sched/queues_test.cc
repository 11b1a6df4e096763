// The queue tree from examples/queues/queues.yaml: order, which queue work lands in (or why
// none), and the fair share of its GPUs worked out by hand.
#include "sched/queues.h"

#include "api/loader.h"
#include "gtest/gtest.h"

namespace gpuplane::sched {
namespace {

QueueTree Example() {
  absl::StatusOr<api::LoadResult> r =
      api::LoadPaths({std::string(GPUPLANE_SOURCE_DIR) + "/examples/queues/queues.yaml"});
  EXPECT_TRUE(r.ok() && r->errors() == 0);
  absl::StatusOr<QueueTree> t = QueueTree::Build(r->objects);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

api::ObjectMeta Meta(const std::string& ns, const std::string& queue_label) {
  api::ObjectMeta m;
  m.name = "p";
  m.namespace_name = ns;
  if (!queue_label.empty()) m.labels[std::string(api::kQueueLabel)] = queue_label;
  return m;
}

TEST(QueueTree, ParentsComeBeforeChildren) {
  QueueTree t = Example();
  std::vector<std::string> names;
  for (const QueueNode& q : t.queues()) names.push_back(q.name);
  EXPECT_EQ(names, (std::vector<std::string>{"research", "inference", "batch", "vision", "nlp"}));
  EXPECT_FALSE(t.queues()[0].leaf);
  EXPECT_EQ(t.queues()[4].parent, 0);
  EXPECT_EQ(t.queues()[4].depth, 1);
}

TEST(QueueTree, WorkLandsByLabelElseNamespace) {
  QueueTree t = Example();
  EXPECT_EQ(t.QueueOf(Meta("serving", "nlp")).queue, 4);  // the label wins
  EXPECT_EQ(t.QueueOf(Meta("nlp-eval", "")).queue, 4);
  EXPECT_EQ(t.QueueOf(Meta("batch", "")).queue, 2);
  EXPECT_EQ(t.QueueOf(Meta("serving", "research")).problem,
            "label gpuplane.io/queue names queue \"research\", which has child queues; work "
            "runs in leaf queues");
  EXPECT_EQ(t.QueueOf(Meta("serving", "nlpp")).problem,
            "label gpuplane.io/queue names queue \"nlpp\", which is not defined (add the Queue, "
            "or fix the label)");
  EXPECT_EQ(t.QueueOf(Meta("default", "")).problem,
            "no queue: label it gpuplane.io/queue, or list namespace \"default\" in a leaf "
            "Queue's spec.namespaces");
}

TEST(QueueTree, FairShareOfTheExampleGpus) {
  QueueTree t = Example();
  // Demand: vision 40, nlp 100, inference 30, batch 200 GPUs; 128 GPUs in the cluster.
  std::vector<double> demand = {0, 30, 200, 40, 100};
  std::vector<double> s = FairShare(t.ShareInputs("gpu", demand), 128);
  // Top: guarantees 32 (research) and 24 (inference); the other 72 by weight 2 : 1 : 0.5,
  // inference capped at its demand 30, then 66 split 2 : 0.5.
  EXPECT_NEAR(s[0], 84.8, 1e-9);
  EXPECT_NEAR(s[1], 30, 1e-9);
  EXPECT_NEAR(s[2], 13.2, 1e-9);
  // research's 84.8: guarantees 16 + 16, then 52.8 by weight 1 : 3.
  EXPECT_NEAR(s[3], 29.2, 1e-9);
  EXPECT_NEAR(s[4], 55.6, 1e-9);
}

TEST(QueueTree, ACycleIsAnError) {
  api::Queue a, b;
  a.metadata.name = "a";
  a.spec.parent = "b";
  b.metadata.name = "b";
  b.spec.parent = "a";
  std::vector<api::SourcedObject> objects = {{a, "q.yaml", 1, true}, {b, "q.yaml", 5, true}};
  absl::StatusOr<QueueTree> t = QueueTree::Build(objects);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "Queue a: spec.parent: queue parents form a cycle");
}

TEST(QueueTree, DurationsComeFromTheQueueTheDefaultOrTheParent) {
  api::Queue top, team, night, quiet;
  top.metadata.name = "top";
  top.spec.min_runtime = "10m";
  top.spec.guarantee_window = "15m";
  team.metadata.name = "team";
  team.spec.parent = "top";
  team.spec.min_runtime = "1h30m";
  night.metadata.name = "night";  // opportunistic: the default window, the parent's min-runtime
  night.spec.parent = "top";
  night.spec.resources["gpu"].weight = api::Quantity::Parse("0").value();
  quiet.metadata.name = "quiet";  // opportunistic, but says no window
  quiet.spec.resources["gpu"].weight = api::Quantity::Parse("0").value();
  quiet.spec.guarantee_window = "0s";
  std::vector<api::SourcedObject> objects = {{team, "q.yaml", 1, true},
                                             {top, "q.yaml", 5, true},
                                             {night, "q.yaml", 9, true},
                                             {quiet, "q.yaml", 13, true}};
  absl::StatusOr<QueueTree> t = QueueTree::Build(objects);
  ASSERT_TRUE(t.ok()) << t.status();
  auto node = [&](std::string_view name) { return t->queues()[*t->Find(name)]; };
  EXPECT_EQ(node("team").min_runtime_seconds, 5400);
  EXPECT_EQ(node("team").guarantee_window_seconds, 900);
  EXPECT_EQ(node("night").min_runtime_seconds, 600);
  EXPECT_EQ(node("night").guarantee_window_seconds, kDefaultGuaranteeWindowSeconds);
  EXPECT_EQ(node("quiet").guarantee_window_seconds, 0);
  EXPECT_EQ(node("quiet").min_runtime_seconds, 0);

  team.spec.min_runtime = "soon";  // the loader rejects it; a tree built anyway says so too
  objects[0].object = team;
  t = QueueTree::Build(objects);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "Queue team: spec.minRuntime: \"soon\" is not a duration such as \"30m\" or "
            "\"1h30m\"");
}

}  // namespace
}  // namespace gpuplane::sched
