// The load node orders and the Session's one-at-a-time use (Decide, Evict), as the simulator's
// engine drives them: "pack" fills the fullest node, "spread" the emptiest, "worth-pack" the
// cheapest model first, each recomputed before every decision (the index reordered, not
// rebuilt); an evicted pod's devices are free again; a pod that fits nowhere is Unschedulable.
#include <memory>

#include "api/loader.h"
#include "gtest/gtest.h"
#include "sched/queues.h"
#include "sched/session.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

// Three nodes with two GPUs each; n2's are B200-like (180 GiB, compute 10.0: worth more),
// the others H100-like.
std::vector<api::SourcedObject> Cluster() {
  std::string yaml = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {}
)";
  for (int n = 0; n < 3; ++n) {
    const char* cc = n == 2 ? "10.0.0" : "9.0.0";
    const char* memory = n == 2 ? "180Gi" : "80Gi";
    util::Append(yaml,
                 "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n", n,
                 "}\nspec:\n  driver: gpu.nvidia.com\n  pool: {name: n", n,
                 ", generation: 1, resourceSliceCount: 1}\n  nodeName: n", n, "\n  devices:\n");
    for (int g = 0; g < 2; ++g) {
      util::Append(yaml, "  - name: gpu-", g,
                   "\n    attributes: {cudaComputeCapability: {version: \"", cc,
                   "\"}}\n    capacity: {memory: {value: ", memory, "}}\n");
    }
  }
  api::Loader loader;
  loader.AddText(yaml, "cluster.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  EXPECT_EQ(r.errors(), 0u);
  return r.objects;
}

// `count` pods asking for one GPU each.
struct Pods {
  explicit Pods(int count, const std::string& ns = "") {
    api::Pod pod;
    pod.metadata.namespace_name = ns;
    source.object = pod;
    for (int i = 0; i < count; ++i) {
      PodInfo p = DescribePod(source, static_cast<size_t>(i));
      p.key = util::Cat("t/p", i);
      api::ResourceClaim c;
      c.metadata.namespace_name = "t";
      c.metadata.name = util::Cat("c", i);
      api::DeviceRequest req;
      req.name = "gpu";
      req.exactly = api::ExactDeviceRequest{};
      req.exactly->device_class_name = "gpu";
      c.spec.devices.requests.push_back(req);
      p.claims.push_back({util::Cat("t/c", i), OwnedClaim(c), false});
      set.pods.push_back(std::move(p));
    }
  }
  api::SourcedObject source;
  PodSet set;
};

std::vector<std::string> Nodes(const std::string& policy, int count, int evict_after = -1) {
  std::unique_ptr<Snapshot> snap = Snapshot::Build(Cluster());
  Pods pods(count);
  SessionOptions options;
  options.policy = policy;
  options.explain = false;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Make(*snap, pods.set, options);
  EXPECT_TRUE(session.ok()) << session.status();
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    Decision d = (*session)->Decide(static_cast<size_t>(i));
    out.push_back(d.status.ok() ? snap->inventory().nodes()[d.node].name
                                : std::string(CodeName(d.status.code)));
    if (i == evict_after) {
      EXPECT_TRUE((*session)->Evict(0).ok());
      EXPECT_EQ(snap->placement("t/p0"), nullptr);
      EXPECT_EQ(snap->claim("t/c0"), nullptr) << "the claim of the evicted pod is released";
    }
  }
  return out;
}

TEST(LoadOrderTest, PackFillsTheFullestNode) {
  EXPECT_EQ(Nodes("pack", 7),
            (std::vector<std::string>{"n0", "n0", "n1", "n1", "n2", "n2", "Unschedulable"}));
}

TEST(LoadOrderTest, SpreadTakesTheEmptiestNode) {
  EXPECT_EQ(Nodes("spread", 4), (std::vector<std::string>{"n0", "n1", "n2", "n0"}));
}

TEST(LoadOrderTest, WorthPackKeepsTheValuableModelForLast) {
  // The B200 node comes last even when it is the emptiest.
  EXPECT_EQ(Nodes("worth-pack", 5), (std::vector<std::string>{"n0", "n0", "n1", "n1", "n2"}));
}

TEST(LoadOrderTest, EvictedPodsFreeTheirDevices) {
  // Pack: p0 and p1 fill n0, then p0 leaves; its GPU is free again, so p2 takes it (n0 is
  // the fullest node with room) and p3 goes to n1.
  EXPECT_EQ(Nodes("pack", 4, 1), (std::vector<std::string>{"n0", "n0", "n0", "n1"}));
}

TEST(LoadOrderTest, UnknownPolicyNamesTheChoices) {
  std::unique_ptr<Snapshot> snap = Snapshot::Build(Cluster());
  Pods pods(1);
  SessionOptions options;
  options.policy = "fullest";
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Make(*snap, pods.set, options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("pack, spread, worth-pack"), std::string::npos)
      << session.status();
}

TEST(LoadOrderTest, WindowWorkFollowsYoungRunsThroughDecideAndEvict) {
  // Queue night takes no fair share: its runs have a 1-hour guarantee window. p0 and p1 fill
  // n0 (first in the policy's order), p2 goes to n1; p0 and p1 end. p3 goes beside the young
  // run p2 on n1, not to n0, which no young run holds any more.
  api::Loader loader;
  loader.AddText(R"(apiVersion: gpuplane.io/v1alpha1
kind: Queue
metadata: {name: night}
spec:
  namespaces: [t]
  resources:
    gpu: {weight: "0"}
)",
                 "queues.yaml", api::Format::kYaml);
  api::LoadResult loaded = loader.Finish();
  ASSERT_EQ(loaded.errors(), 0u);
  absl::StatusOr<QueueTree> queues = QueueTree::Build(loaded.objects);
  ASSERT_TRUE(queues.ok()) << queues.status();
  std::unique_ptr<Snapshot> snap = Snapshot::Build(Cluster());
  Pods pods(4, "t");
  SessionOptions options;
  options.explain = false;
  options.queues = &*queues;
  options.preemption = {.enabled = true, .now = 1000};
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Make(*snap, pods.set, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto node = [&](size_t pod) {
    Decision d = (*session)->Decide(pod);
    return d.status.ok() ? snap->inventory().nodes()[d.node].name : d.status.message;
  };
  EXPECT_EQ(node(0), "n0");
  EXPECT_EQ(node(1), "n0");
  EXPECT_EQ(node(2), "n1");
  ASSERT_TRUE((*session)->Evict(0).ok());
  ASSERT_TRUE((*session)->Evict(1).ok());
  EXPECT_EQ(node(3), "n1");
}

}  // namespace
}  // namespace gpuplane::sched
