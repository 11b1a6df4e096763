#include "alloc/allocator.h"

#include <chrono>

#include "alloc/verifier.h"
#include "api/loader.h"
#include "gtest/gtest.h"
#include "sim/cluster_generator.h"

namespace gpuplane::alloc {
namespace {

std::vector<api::SourcedObject> LoadPaths(std::vector<std::string> rel) {
  for (std::string& p : rel) p.insert(0, std::string(GPUPLANE_SOURCE_DIR) + "/");
  api::LoadResult r = *api::LoadPaths(rel);
  EXPECT_EQ(r.errors(), 0u);
  return r.objects;
}

api::ResourceClaimSpec TemplateSpec(const std::vector<api::SourcedObject>& objects,
                                    const std::string& name) {
  for (const api::SourcedObject& o : objects) {
    if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) {
      if (t->metadata.name == name) return t->spec.spec;
    }
  }
  ADD_FAILURE() << "no template " << name;
  return {};
}

api::ResourceClaimSpec SpecFromYaml(const std::string& yaml) {
  api::Loader loader;
  loader.AddText(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, "
      "namespace: t}\nspec:\n" +
          yaml,
      "claim.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  for (const api::Diagnostic& d : r.diagnostics) {
    if (d.is_error()) ADD_FAILURE() << d.ToString();
  }
  return std::get<api::ResourceClaim>(r.objects.at(0).object).spec;
}

class ExampleCluster : public ::testing::Test {
 protected:
  ExampleCluster()
      : objects_(LoadPaths({"examples/cluster", "examples/workloads"})),
        inv_(model::Inventory::Build(objects_)),
        state_(inv_),
        allocator_(inv_) {}

  CompiledClaim Compile(const api::ResourceClaimSpec& spec, const std::string& name = "c") {
    absl::StatusOr<CompiledClaim> c = CompileClaim("t", name, spec, inv_, cache_);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : CompiledClaim{};
  }

  Outcome Try(const CompiledClaim& claim, const std::string& node, bool commit = true) {
    std::optional<model::NodeId> n = inv_.FindNode(node);
    EXPECT_TRUE(n.has_value()) << node;
    Outcome o = allocator_.Allocate({&claim}, *n, state_);
    if (o.allocated) {
      EXPECT_EQ(Verify(inv_, state_, {&claim}, *n, o.choices), "");
    }
    if (o.allocated && commit) {
      EXPECT_TRUE(allocator_.Commit(o, {&claim}, state_).ok());
    }
    return o;
  }

  static std::string Joined(const Outcome& o) {
    std::string s;
    for (const std::string& r : o.reasons) s += r + "\n";
    return s;
  }

  std::vector<api::SourcedObject> objects_;
  model::Inventory inv_;
  model::AllocationState state_;
  Allocator allocator_;
  SelectorCache cache_;
};

TEST_F(ExampleCluster, H100OrBetterWith40GiOnAMixedCluster) {
  CompiledClaim claim = Compile(TemplateSpec(objects_, "h100-or-better-40gi"));
  for (const char* node : {"h100-0", "h200-0", "b200-0"}) {
    Outcome o = Try(claim, node);
    ASSERT_TRUE(o.allocated) << node << "\n" << Joined(o);
    ASSERT_EQ(o.results[0].devices.results.size(), 1u);
    EXPECT_EQ(o.results[0].devices.results[0].request, "gpu");
    EXPECT_EQ(o.results[0].devices.results[0].pool, node);
    ASSERT_TRUE(o.results[0].node_selector.has_value());
    EXPECT_EQ(o.results[0].node_selector->node_selector_terms[0].match_fields[0].values[0], node);
  }
  Outcome t4 = Try(claim, "t4-0");
  EXPECT_FALSE(t4.allocated);
  EXPECT_NE(Joined(t4).find("4 by the request selectors"), std::string::npos) << Joined(t4);
  EXPECT_FALSE(Try(claim, "a100-80gb-mig-0").allocated);  // compute capability 8.0
}

TEST_F(ExampleCluster, SmallMigElseMediumElseFullGpu) {
  CompiledClaim claim = Compile(TemplateSpec(objects_, "small-mig-else-medium-else-full"));
  // Four A100s, seven 1g memory slices each: 28 small slices, then nothing fits (the only
  // free memory slice per GPU is slice 7, and a medium or full GPU needs more).
  for (int i = 0; i < 28; ++i) {
    Outcome o = Try(claim, "a100-80gb-mig-0");
    ASSERT_TRUE(o.allocated) << i << "\n" << Joined(o);
    EXPECT_EQ(o.results[0].devices.results[0].request, "gpu/small") << i;
  }
  Outcome full = Try(claim, "a100-80gb-mig-0");
  EXPECT_FALSE(full.allocated);
  EXPECT_NE(Joined(full).find("gpu/medium"), std::string::npos);
  // A node without MIG devices falls through to a whole GPU.
  Outcome h100 = Try(claim, "h100-0");
  ASSERT_TRUE(h100.allocated) << Joined(h100);
  EXPECT_EQ(h100.results[0].devices.results[0].request, "gpu/full");
}

TEST_F(ExampleCluster, MediumWhenSmallSlicesAreGone) {
  CompiledClaim claim = Compile(TemplateSpec(objects_, "small-mig-else-medium-else-full"));
  // A full A100 taken on GPUs 1-3 leaves GPU 0; fill its 1g slices, then ask again.
  CompiledClaim whole = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - name: g\n      exactly:\n        deviceClassName: "
      "gpu.nvidia.com\n        count: 3\n        selectors:\n        - cel: {expression: "
      "\"device.attributes['gpu.nvidia.com'].index > 0\"}\n"));
  ASSERT_TRUE(Try(whole, "a100-80gb-mig-0").allocated);
  CompiledClaim medium_only = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - name: m\n      exactly:\n        deviceClassName: "
      "mig.nvidia.com\n        selectors:\n        - cel: {expression: "
      "\"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'\"}\n"));
  ASSERT_TRUE(Try(medium_only, "a100-80gb-mig-0").allocated);  // 3g at 0 or 4
  Outcome small = Try(claim, "a100-80gb-mig-0");
  ASSERT_TRUE(small.allocated);
  EXPECT_EQ(small.results[0].devices.results[0].request, "gpu/small");
}

TEST_F(ExampleCluster, EightGpusOnOneNvlinkDomain) {
  CompiledClaim claim = Compile(TemplateSpec(objects_, "eight-gpus-one-nvlink-domain"));
  EXPECT_FALSE(Try(claim, "a100-80gb-mig-0").allocated);  // four GPUs
  EXPECT_FALSE(Try(claim, "t4-0").allocated);             // no NVLink attribute at all
  Outcome o = Try(claim, "h200-0");
  ASSERT_TRUE(o.allocated) << Joined(o);
  EXPECT_EQ(o.results[0].devices.results.size(), 8u);
  Outcome again = Try(claim, "h200-0");
  EXPECT_FALSE(again.allocated);
  EXPECT_NE(Joined(again).find("8 in use"), std::string::npos) << Joined(again);
}

TEST_F(ExampleCluster, PartitionsAndWholeGpuExcludeEachOther) {
  CompiledClaim gpu0 = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - name: g\n      exactly:\n        deviceClassName: "
      "gpu.nvidia.com\n        selectors:\n        - cel: {expression: "
      "\"device.attributes['gpu.nvidia.com'].index == 0\"}\n"));
  CompiledClaim mig_on_0 = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - name: m\n      exactly:\n        deviceClassName: "
      "mig.nvidia.com\n        selectors:\n        - cel: {expression: "
      "\"device.attributes['gpu.nvidia.com'].parentIndex == 0\"}\n"));
  ASSERT_TRUE(Try(gpu0, "a100-80gb-mig-0").allocated);
  Outcome o = Try(mig_on_0, "a100-80gb-mig-0");
  EXPECT_FALSE(o.allocated);
  EXPECT_NE(Joined(o).find("25 lacked shared counters"), std::string::npos) << Joined(o);
}

TEST_F(ExampleCluster, DistinctAttributeAndAllMode) {
  CompiledClaim distinct = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - {name: a, exactly: {deviceClassName: gpu.nvidia.com}}\n"
      "    - {name: b, exactly: {deviceClassName: gpu.nvidia.com}}\n    constraints:\n"
      "    - {distinctAttribute: resource.kubernetes.io/pcieRoot}\n"));
  Outcome o = Try(distinct, "h100-0");
  ASSERT_TRUE(o.allocated) << Joined(o);
  // GPUs 0 and 1 share a PCIe root, so b skips gpu-1.
  EXPECT_EQ(o.results[0].devices.results[0].device, "gpu-0");
  EXPECT_EQ(o.results[0].devices.results[1].device, "gpu-2");
  CompiledClaim all = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - {name: all, exactly: {deviceClassName: gpu.nvidia.com, "
      "allocationMode: All}}\n"));
  Outcome t4 = Try(all, "t4-0");
  ASSERT_TRUE(t4.allocated);
  EXPECT_EQ(t4.results[0].devices.results.size(), 4u);
  EXPECT_FALSE(Try(all, "h100-0").allocated);  // two of its GPUs are in use now
}

TEST_F(ExampleCluster, ReleaseRollsBackACommit) {
  CompiledClaim claim = Compile(TemplateSpec(objects_, "small-mig-else-medium-else-full"));
  model::AllocationState before = state_;  // the cheap clone
  Outcome o = Try(claim, "a100-80gb-mig-0");
  ASSERT_TRUE(o.allocated);
  model::DeviceId d = o.choices[0].device;
  EXPECT_TRUE(state_.in_use(d));
  ASSERT_TRUE(allocator_.Release(o.choices, state_).ok());
  EXPECT_FALSE(state_.in_use(d));
  const model::CounterUse& use = inv_.devices()[d].consumes.at(0);
  EXPECT_EQ(state_.counter_used(use.set, use.counter), before.counter_used(use.set, use.counter));
  EXPECT_FALSE(allocator_.Release(o.choices, state_).ok());  // not allocated twice
}

TEST_F(ExampleCluster, AdminAccessTakesDevicesInUseWithoutUsingThem) {
  CompiledClaim eight = Compile(TemplateSpec(objects_, "eight-gpus-one-nvlink-domain"));
  ASSERT_TRUE(Try(eight, "b200-0").allocated);
  CompiledClaim admin = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - {name: mon, exactly: {deviceClassName: gpu.nvidia.com, "
      "adminAccess: true, allocationMode: All}}\n"));
  Outcome o = Try(admin, "b200-0");
  ASSERT_TRUE(o.allocated) << Joined(o);
  EXPECT_EQ(o.results[0].devices.results.size(), 8u);
  EXPECT_TRUE(o.results[0].devices.results[0].admin_access.value_or(false));
}

TEST(AllocatorTest, TaintsNeedTolerations) {
  api::Loader loader;
  loader.AddText(
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
      "  driver: gpu.nvidia.com\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
      "  nodeName: node-1\n  devices:\n  - name: bad\n    taints: [{key: ecc, value: err, effect: "
      "NoSchedule}]\n",
      "t.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  for (const api::Diagnostic& d : r.diagnostics) ADD_FAILURE() << d.ToString();
  model::Inventory inv = model::Inventory::Build(r.objects);
  model::AllocationState state(inv);
  Allocator allocator(inv);
  EXPECT_FALSE(allocator.Allocate({}, 7, state).allocated);  // a bad node id is an answer
  SelectorCache cache;
  api::ResourceClaimSpec spec;
  api::DeviceRequest req;
  req.name = "g";
  req.exactly = api::ExactDeviceRequest{};
  req.exactly->device_class_name = "gpu";
  spec.devices.requests.push_back(req);
  absl::StatusOr<CompiledClaim> compiled = CompileClaim("t", "c", spec, inv, cache);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(inv.nodes().size(), 1u);
  CompiledClaim plain = *compiled;
  Outcome o = allocator.Allocate({&plain}, 0, state);
  EXPECT_FALSE(o.allocated);
  EXPECT_NE(o.reasons[0].find("1 tainted"), std::string::npos) << o.reasons[0];
  spec.devices.requests[0].exactly->tolerations.push_back(
      {"ecc", "Equal", "err", "NoSchedule", {}});
  CompiledClaim tolerant = *CompileClaim("t", "c", spec, inv, cache);
  EXPECT_TRUE(allocator.Allocate({&tolerant}, 0, state).allocated);
}

TEST(AllocatorTest, UnsatisfiableEightGpuClaimFailsFastOnAThousandNodes) {
  sim::ClusterSpec cs;
  cs.groups = {{"h100", 1000, 8, false}};
  sim::GeneratedCluster cluster = *sim::GenerateCluster(cs);
  std::vector<api::SourcedObject> objects;
  for (const api::DeviceClass& c : cluster.classes) objects.push_back({c, "gen", 0, true});
  for (const sim::GeneratedNode& n : cluster.nodes) {
    for (const api::ResourceSlice& s : n.slices) objects.push_back({s, "gen", 0, true});
  }
  model::Inventory inv = model::Inventory::Build(objects);
  model::AllocationState state(inv);
  for (const model::NodeInfo& n : inv.nodes())
    ASSERT_TRUE(state.Allocate(inv, n.devices[3], {}).ok());
  Allocator allocator(inv, AllocatorOptions{.explain = false});
  SelectorCache cache;
  api::ResourceClaimSpec spec;
  api::DeviceRequest req;
  req.name = "gpus";
  req.exactly = api::ExactDeviceRequest{};
  req.exactly->device_class_name = "gpu.nvidia.com";
  req.exactly->count = 8;
  spec.devices.requests.push_back(req);
  spec.devices.constraints.push_back(
      {{}, std::string("gpu.nvidia.com/nvlinkDomain"), std::nullopt});
  CompiledClaim claim = *CompileClaim("t", "c", spec, inv, cache);
  auto start = std::chrono::steady_clock::now();
  int64_t steps = 0;
  for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
    Outcome o = allocator.Allocate({&claim}, n, state);
    ASSERT_FALSE(o.allocated);
    steps += o.steps;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(steps, 0);  // 7 candidates for 8 devices: no combination is even tried
  RecordProperty("seconds", std::to_string(seconds));
  std::printf("  8-GPU claim on 1000 nodes with 7 free GPUs each: %.1f ms\n", seconds * 1e3);
  EXPECT_LT(seconds, 5.0);  // generous for sanitizer builds; see docs/PERFORMANCE.md
}

// 24 of 32 identical GPUs plus a NIC that must share their NVLink domain, which it does not:
// the failure shows only after all GPUs are chosen, so trying device combinations one by one
// would take C(32,24) = 10.5 million of them. Interchangeable GPUs are one choice.
TEST(AllocatorTest, InterchangeableDevicesAreOneChoice) {
  std::string yaml =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec:\n"
      "  selectors: [{cel: {expression: \"device.attributes['x.example.com'].kind == 'gpu'\"}}]\n"
      "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: nic}\nspec:\n"
      "  selectors: [{cel: {expression: \"device.attributes['x.example.com'].kind == 'nic'\"}}]\n"
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
      "  driver: x.example.com\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
      "  nodeName: node-1\n  devices:\n"
      "  - {name: nic, attributes: {kind: {string: nic}, domain: {string: b}}}\n";
  for (int i = 0; i < 32; ++i) {
    yaml += "  - {name: gpu-" + std::to_string(i) +
            ", attributes: {kind: {string: gpu}, domain: {string: a}}}\n";
  }
  api::Loader loader;
  loader.AddText(yaml, "t.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  for (const api::Diagnostic& d : r.diagnostics) ADD_FAILURE() << d.ToString();
  model::Inventory inv = model::Inventory::Build(r.objects);
  model::AllocationState state(inv);
  SelectorCache cache;
  api::ResourceClaimSpec spec = SpecFromYaml(
      "  devices:\n    requests:\n    - {name: g, exactly: {deviceClassName: gpu, count: 24}}\n"
      "    - {name: nic, exactly: {deviceClassName: nic}}\n"
      "    constraints: [{matchAttribute: x.example.com/domain}]\n");
  CompiledClaim claim = *CompileClaim("t", "c", spec, inv, cache);
  Allocator allocator(inv);
  Outcome o = allocator.Allocate({&claim}, 0, state);
  EXPECT_FALSE(o.allocated);
  EXPECT_LT(o.steps, 100) << "symmetric devices were tried one by one";
  Allocator naive(inv, AllocatorOptions{.max_steps = 200000, .symmetry = false});
  Outcome slow = naive.Allocate({&claim}, 0, state);
  EXPECT_FALSE(slow.allocated);
  EXPECT_GT(slow.steps, 200000) << "the naive search should hit its effort bound";
  ASSERT_FALSE(slow.reasons.empty());
  EXPECT_NE(slow.reasons[0].find("search effort exhausted"), std::string::npos) << slow.reasons[0];
}

// The allocator keeps each alternative's candidates on a node between searches; what changes
// between searches must still count: a ranking scorer's new preference, a filter, the state.
TEST_F(ExampleCluster, CandidatesKeptBetweenSearchesFollowRanksFiltersAndState) {
  CompiledClaim one = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - {name: g, exactly: {deviceClassName: gpu.nvidia.com}}\n"));
  const model::NodeId node = *inv_.FindNode("h100-0");
  const std::vector<model::DeviceId>& devices = inv_.nodes()[node].devices;
  ASSERT_GE(devices.size(), 4u);
  PreferScorer prefer;
  Allocator ranked(inv_, AllocatorOptions{.scorer = &prefer, .max_solutions = 1});
  for (size_t i : {2u, 0u, 3u}) {
    prefer.Prefer({devices[i]});
    Outcome o = ranked.Allocate({&one}, node, state_);
    ASSERT_EQ(o.choices.size(), 1u);
    EXPECT_EQ(o.choices[0].device, devices[i]) << "preferred device " << i;
  }
  struct Only : DeviceFilter {
    model::DeviceId d;
    bool Allows(model::DeviceId x) const override { return x == d; }
    std::string Describe() const override { return "not the one"; }
  };
  Only only;
  only.d = devices[1];
  Outcome first = allocator_.Allocate({&one}, node, state_);  // fills the cache
  Outcome filtered = allocator_.Allocate({&one}, node, state_, &only);
  ASSERT_EQ(filtered.choices.size(), 1u);
  EXPECT_EQ(filtered.choices[0].device, devices[1]);
  ASSERT_TRUE(allocator_.Commit(first, {&one}, state_).ok());
  Outcome second = allocator_.Allocate({&one}, node, state_);
  ASSERT_EQ(second.choices.size(), 1u);
  EXPECT_NE(second.choices[0].device, first.choices[0].device) << "a device in use was taken";
}

// The default scorer keeps whole islands free: a 1-GPU claim goes next to a used GPU, and a
// 2-GPU claim stays within one PCIe root.
TEST_F(ExampleCluster, ScoringPacksIslands) {
  CompiledClaim one = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - {name: g, exactly: {deviceClassName: gpu.nvidia.com}}\n"));
  Outcome first = Try(one, "h100-0");
  ASSERT_TRUE(first.allocated);
  EXPECT_EQ(first.results[0].devices.results[0].device, "gpu-0");
  Outcome second = Try(one, "h100-0");
  ASSERT_TRUE(second.allocated);
  EXPECT_EQ(second.results[0].devices.results[0].device, "gpu-1");  // gpu-0's PCIe root
  Outcome third = Try(one, "h100-0");
  ASSERT_TRUE(third.allocated);
  CompiledClaim two = Compile(SpecFromYaml(
      "  devices:\n    requests:\n    - {name: g, exactly: {deviceClassName: gpu.nvidia.com, "
      "count: 2}}\n"));
  Outcome pair = Try(two, "h100-0");
  ASSERT_TRUE(pair.allocated);
  // gpu-2 is taken, so gpu-3 (alone on its root) would split a pair; gpu-4 and gpu-5 share one.
  EXPECT_EQ(pair.results[0].devices.results[0].device, "gpu-4");
  EXPECT_EQ(pair.results[0].devices.results[1].device, "gpu-5");
  Outcome fourth = Try(one, "h100-0");
  ASSERT_TRUE(fourth.allocated);
  EXPECT_EQ(fourth.results[0].devices.results[0].device, "gpu-3");  // completes gpu-2's root
}

}  // namespace
}  // namespace gpuplane::alloc
