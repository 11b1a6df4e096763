// Statement semantics on a small snapshot: a placement takes its claims' devices and the
// node's CPU, a shared claim is released only when its last pod leaves, Rollback undoes
// placements and evictions newest first, and a Statement dropped without Commit leaves the
// snapshot as it found it.
#include "sched/statement.h"

#include "alloc/allocator.h"
#include "api/loader.h"
#include "gtest/gtest.h"

namespace gpuplane::sched {
namespace {

constexpr char kCluster[] = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {}
---
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 16Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n0}
spec:
  driver: gpu.nvidia.com
  pool: {name: n0, generation: 1, resourceSliceCount: 1}
  nodeName: n0
  devices: [{name: gpu-0}, {name: gpu-1}]
)";

class StatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api::Loader loader;
    loader.AddText(kCluster, "cluster.yaml", api::Format::kYaml);
    api::LoadResult r = loader.Finish();
    ASSERT_EQ(r.errors(), 0u);
    snap_ = Snapshot::Build(r.objects);
    api::ResourceClaimSpec spec;
    api::DeviceRequest req;
    req.name = "gpu";
    req.exactly = api::ExactDeviceRequest{};
    req.exactly->device_class_name = "gpu";
    spec.devices.requests.push_back(req);
    absl::StatusOr<alloc::CompiledClaim> c =
        alloc::CompileClaim("t", "c", spec, snap_->inventory(), cache_);
    ASSERT_TRUE(c.ok()) << c.status();
    claim_ = std::move(*c);
    sig_ = snap_->index().Intern(claim_.requests[0].alternatives[0]);
  }

  // One GPU for claim `key`, as the allocator chooses it now.
  ClaimAllocation Allocate() {
    alloc::Allocator allocator(snap_->inventory());
    alloc::Outcome o = allocator.Allocate({&claim_}, 0, snap_->state());
    EXPECT_TRUE(o.allocated);
    return ClaimAllocation{0, o.choices, o.results.at(0), {}};
  }

  int64_t Free() { return snap_->index().Free(sig_, 0); }

  std::unique_ptr<Snapshot> snap_;
  alloc::SelectorCache cache_;
  alloc::CompiledClaim claim_;
  int sig_ = -1;
};

TEST_F(StatementTest, SharedClaimIsReleasedWithItsLastPod) {
  Statement st(*snap_);
  ASSERT_EQ(Free(), 2);
  ASSERT_TRUE(st.Place({"t/p1", 0, {"t/shared"}, 3000, 0}, {{"t/shared", Allocate()}}).ok());
  ASSERT_TRUE(st.Place({"t/p2", 0, {"t/shared"}, 2000, 0}, {}).ok());
  EXPECT_EQ(Free(), 1);
  EXPECT_EQ(snap_->node(0).cpu_requested, 5000);
  EXPECT_EQ(snap_->claim("t/shared")->users.size(), 2u);
  ASSERT_TRUE(st.Evict("t/p1").ok());
  EXPECT_EQ(Free(), 1) << "p2 still uses the claim";
  ASSERT_NE(snap_->claim("t/shared"), nullptr);
  ASSERT_TRUE(st.Evict("t/p2").ok());
  EXPECT_EQ(Free(), 2);
  EXPECT_EQ(snap_->claim("t/shared"), nullptr);
  EXPECT_EQ(snap_->node(0).cpu_requested, 0);
  EXPECT_FALSE(st.Evict("t/p2").ok()) << "a pod that is not placed cannot be evicted";
  st.Commit();
}

TEST_F(StatementTest, RollbackUndoesNewestFirst) {
  Statement st(*snap_);
  ASSERT_TRUE(st.Place({"t/a", 0, {"t/ca"}, 1000, 0}, {{"t/ca", Allocate()}}).ok());
  size_t mark = st.Checkpoint();
  ASSERT_TRUE(st.Place({"t/b", 0, {"t/cb"}, 1000, 0}, {{"t/cb", Allocate()}}).ok());
  ASSERT_TRUE(st.Evict("t/a").ok());
  EXPECT_EQ(Free(), 1);
  EXPECT_EQ(snap_->placement("t/a"), nullptr);
  ASSERT_TRUE(st.Rollback(mark).ok());
  EXPECT_NE(snap_->placement("t/a"), nullptr) << "the eviction was undone";
  EXPECT_EQ(snap_->placement("t/b"), nullptr) << "the later placement was undone";
  EXPECT_EQ(Free(), 1);
  EXPECT_EQ(snap_->node(0).cpu_requested, 1000);
  std::vector<std::pair<std::string, bool>> ops = st.Operations();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].first, "t/a");
}

TEST_F(StatementTest, DroppedWithoutCommitLeavesNothing) {
  {
    Statement st(*snap_);
    ASSERT_TRUE(st.Place({"t/a", 0, {"t/ca"}, 1000, 0}, {{"t/ca", Allocate()}}).ok());
    ASSERT_TRUE(st.Place({"t/b", 0, {"t/cb"}, 1000, 0}, {{"t/cb", Allocate()}}).ok());
    EXPECT_EQ(Free(), 0);
  }
  EXPECT_EQ(Free(), 2);
  EXPECT_EQ(snap_->placement("t/a"), nullptr);
  EXPECT_EQ(snap_->claim("t/cb"), nullptr);
  EXPECT_EQ(snap_->node(0).cpu_requested, 0);
  {
    Statement st(*snap_);
    ASSERT_TRUE(st.Place({"t/a", 0, {"t/ca"}, 1000, 0}, {{"t/ca", Allocate()}}).ok());
    EXPECT_FALSE(st.Place({"t/a", 0, {}, 0, 0}, {}).ok()) << "a pod is placed once";
    st.Commit();
  }
  EXPECT_EQ(Free(), 1) << "committed work stays";
}

}  // namespace
}  // namespace gpuplane::sched
