#include "model/inventory.h"

#include "api/loader.h"
#include "gtest/gtest.h"
#include "model/allocation_state.h"
#include "model/node_selector.h"

namespace gpuplane::model {
namespace {

std::vector<api::SourcedObject> Load(const std::string& yaml) {
  api::Loader loader;
  loader.AddText(yaml, "test.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  EXPECT_EQ(r.errors(), 0u);
  for (const api::Diagnostic& d : r.diagnostics) ADD_FAILURE() << d.ToString();
  return r.objects;
}

std::vector<api::SourcedObject> Examples() {
  api::LoadResult r = *api::LoadPaths({std::string(GPUPLANE_SOURCE_DIR) + "/examples/cluster"});
  EXPECT_EQ(r.errors(), 0u);
  return r.objects;
}

std::string Slice(const std::string& name, const std::string& placement, int generation, int count,
                  const std::string& devices) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + name +
         "}\nspec:\n  driver: gpu.nvidia.com\n  pool: {name: p, generation: " +
         std::to_string(generation) + ", resourceSliceCount: " + std::to_string(count) + "}\n  " +
         placement + "\n  devices:\n" + devices + "---\n";
}

TEST(InventoryTest, ExampleClusterHasDenseIdsAndReachability) {
  std::vector<api::SourcedObject> objects = Examples();
  Inventory inv = Inventory::Build(objects);
  EXPECT_TRUE(inv.warnings().empty());
  ASSERT_EQ(inv.nodes().size(), 5u);
  EXPECT_EQ(inv.pools().size(), 5u);
  EXPECT_EQ(inv.devices().size(), 8u + 8u + 8u + 4u * 26u + 4u);
  EXPECT_EQ(inv.counter_sets().size(), 4u);
  for (const PoolInfo& p : inv.pools()) EXPECT_TRUE(p.complete) << p.name;
  for (const NodeInfo& n : inv.nodes()) {
    for (DeviceId d : n.devices) EXPECT_EQ(inv.nodes()[inv.devices()[d].node].name, n.name);
  }
  std::optional<NodeId> a100 = inv.FindNode("a100-80gb-mig-0");
  ASSERT_TRUE(a100.has_value());
  EXPECT_EQ(inv.nodes()[*a100].devices.size(), 104u);
  EXPECT_NE(inv.FindClass("mig.nvidia.com"), nullptr);
  EXPECT_TRUE(inv.FindDevice("gpu.nvidia.com", "h100-0", "gpu-7").has_value());
  EXPECT_FALSE(inv.FindDevice("gpu.nvidia.com", "h100-0", "gpu-8").has_value());
}

// Copying, taking and borrowing the slices build the same inventory; a borrowing inventory's
// devices are the objects' own.
TEST(InventoryTest, CopyingTakingAndBorrowingSlicesBuildTheSameInventory) {
  const std::vector<api::SourcedObject> objects = Examples();
  std::vector<api::SourcedObject> taken = objects;
  Inventory copied = Inventory::Build(objects);
  Inventory borrowed = Inventory::BuildBorrowingSlices(objects);
  Inventory took = Inventory::BuildTakingSlices(taken);
  ASSERT_EQ(borrowed.devices().size(), copied.devices().size());
  ASSERT_EQ(took.devices().size(), copied.devices().size());
  for (DeviceId d = 0; d < copied.devices().size(); ++d) {
    EXPECT_EQ(borrowed.devices()[d].spec->name, copied.devices()[d].spec->name);
    EXPECT_EQ(took.devices()[d].spec->name, copied.devices()[d].spec->name);
    EXPECT_EQ(borrowed.devices()[d].node, copied.devices()[d].node);
    EXPECT_EQ(borrowed.FindDevice(borrowed.pools()[borrowed.devices()[d].pool].driver,
                                  borrowed.pools()[borrowed.devices()[d].pool].name,
                                  borrowed.devices()[d].spec->name),
              std::optional<DeviceId>(d));
  }
  bool points_into_objects = false;
  for (const api::SourcedObject& o : objects) {
    if (const auto* s = std::get_if<api::ResourceSlice>(&o.object)) {
      points_into_objects = points_into_objects || borrowed.devices()[0].slice == s;
    }
  }
  EXPECT_TRUE(points_into_objects);
  EXPECT_EQ(borrowed.FindDevice("gpu.nvidia.com", "no-such-pool", "gpu-0"), std::nullopt);
}

// Attributes are found by qualified name whether published with their domain or, in the
// driver's own domain, without it; the spelling as published wins when both exist.
TEST(InventoryTest, AttributesByQualifiedName) {
  Inventory inv = Inventory::Build(
      Load(Slice("s", "nodeName: node-1", 1, 1,
                 "  - {name: a, attributes: {x: {int: 1}, gpu.nvidia.com/y: {int: 2}, other.com/z: "
                 "{int: 3}}}\n"
                 "  - {name: b, attributes: {x: {int: 4}, gpu.nvidia.com/x: {int: 5}}}\n"
                 "  - {name: c, attributes: {y: {int: 6}}}\n")));
  ASSERT_EQ(inv.devices().size(), 3u);
  auto at = [&](DeviceId d, const std::string& name) -> std::optional<int64_t> {
    const api::DeviceAttribute* a = inv.Attribute(d, name);
    return a == nullptr ? std::nullopt : a->int_value;
  };
  EXPECT_EQ(at(0, "gpu.nvidia.com/x"), 1);
  EXPECT_EQ(at(0, "x"), 1);
  EXPECT_EQ(at(0, "gpu.nvidia.com/y"), 2);
  EXPECT_EQ(at(0, "other.com/z"), 3);
  EXPECT_EQ(at(0, "gpu.nvidia.com/z"), std::nullopt);
  EXPECT_EQ(at(0, "other.com/x"), std::nullopt);
  EXPECT_EQ(at(1, "gpu.nvidia.com/x"), 5);
  EXPECT_EQ(at(2, "gpu.nvidia.com/y"), 6);
  EXPECT_EQ(at(2, "other.com/y"), std::nullopt);
}

TEST(InventoryTest, OnlyTheHighestGenerationCountsAndCompletenessIsTracked) {
  std::string dev0 = "  - name: old\n";
  std::string dev1 = "  - name: new\n";
  Inventory inv = Inventory::Build(
      Load(Slice("a", "nodeName: n1", 1, 1, dev0) + Slice("b", "nodeName: n1", 2, 2, dev1)));
  ASSERT_EQ(inv.devices().size(), 1u);
  EXPECT_EQ(inv.devices()[0].spec->name, "new");
  EXPECT_FALSE(inv.pools()[0].complete);  // generation 2 announces 2 slices, 1 is present
}

TEST(InventoryTest, SelectorsAllNodesAndPerDeviceSelection) {
  std::string nodes =
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {rack: r1}}\n---\n"
      "apiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {rack: r2}}\n---\n";
  std::string selector =
      "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, "
      "values: [r1]}]}]}";
  std::string per_device = "  - {name: d-n2, nodeName: n2}\n  - {name: d-all, allNodes: true}\n";
  std::string yaml = nodes + Slice("s1", selector, 1, 1, "  - name: rack-dev\n");
  yaml +=
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s2}\nspec:\n"
      "  driver: net.example.com\n  pool: {name: q, generation: 1, resourceSliceCount: 1}\n"
      "  perDeviceNodeSelection: true\n  devices:\n" +
      per_device + "---\n";
  yaml +=
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s3}\nspec:\n"
      "  driver: fabric.example.com\n  pool: {name: f, generation: 1, resourceSliceCount: 1}\n"
      "  allNodes: true\n  devices:\n  - name: shared\n";
  Inventory inv = Inventory::Build(Load(yaml));
  auto names = [&](const std::string& node) {
    std::vector<std::string> out;
    for (DeviceId d : inv.nodes()[*inv.FindNode(node)].devices)
      out.push_back(inv.devices()[d].spec->name);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(names("n1"), (std::vector<std::string>{"d-all", "rack-dev", "shared"}));
  EXPECT_EQ(names("n2"), (std::vector<std::string>{"d-all", "d-n2", "shared"}));
}

TEST(InventoryTest, UndefinedCounterSetMakesTheDeviceUnusable) {
  std::string yaml = Slice("s", "nodeName: n1", 1, 1,
                           "  - name: part\n    consumesCounters:\n    - counterSet: missing\n"
                           "      counters: {memory: {value: 1Gi}}\n");
  api::Loader loader;
  loader.AddText(yaml, "t.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  EXPECT_EQ(r.errors(), 1u);  // validation reports it too
  Inventory inv = Inventory::Build(r.objects);
  EXPECT_TRUE(inv.devices().empty());
  ASSERT_EQ(inv.warnings().size(), 1u);
  EXPECT_NE(inv.warnings()[0].find("does not define"), std::string::npos);
}

TEST(AllocationStateTest, MigCountersExcludeOverlappingPlacements) {
  std::vector<api::SourcedObject> objects = Examples();
  Inventory inv = Inventory::Build(objects);
  AllocationState state(inv);
  auto id = [&](const std::string& name) {
    return *inv.FindDevice("gpu.nvidia.com", "a100-80gb-mig-0", name);
  };
  DeviceId full0 = id("gpu-0");
  ASSERT_TRUE(state.CountersFit(inv, id("gpu-0-mig-7g80gb-0-0")));
  ASSERT_TRUE(state.Allocate(inv, full0, {}).ok());
  EXPECT_TRUE(state.in_use(full0));
  EXPECT_FALSE(state.CountersFit(inv, id("gpu-0-mig-1g10gb-19-3")));
  EXPECT_TRUE(state.CountersFit(inv, id("gpu-1-mig-1g10gb-19-3")));
  ASSERT_TRUE(state.Release(inv, full0, {}).ok());
  EXPECT_TRUE(state.CountersFit(inv, id("gpu-0-mig-1g10gb-19-3")));

  AllocationState mig(inv);
  ASSERT_TRUE(mig.Allocate(inv, id("gpu-0-mig-1g10gb-19-0"), {}).ok());
  EXPECT_FALSE(mig.CountersFit(inv, id("gpu-0-mig-7g80gb-0-0")));
  EXPECT_FALSE(mig.CountersFit(inv, id("gpu-0")));
  EXPECT_FALSE(mig.CountersFit(inv, id("gpu-0-mig-3g40gb-9-0")));  // memory slice 0 is taken
  EXPECT_TRUE(mig.CountersFit(inv, id("gpu-0-mig-3g40gb-9-4")));
  EXPECT_TRUE(mig.CountersFit(inv, id("gpu-0-mig-1g10gb-19-1")));
  AllocationState copy = mig;  // a what-if clone is independent
  ASSERT_TRUE(copy.Allocate(inv, id("gpu-0-mig-3g40gb-9-4"), {}).ok());
  EXPECT_TRUE(mig.CountersFit(inv, id("gpu-0-mig-3g40gb-9-4")));
  EXPECT_FALSE(copy.CountersFit(inv, id("gpu-0-mig-4g40gb-5-0")));
}

TEST(AllocationStateTest, SharedDevicesAccumulateCapacityAndClaimsApply) {
  std::string yaml = Slice("s", "nodeName: n1", 1, 1,
                           "  - name: shared\n    allowMultipleAllocations: true\n"
                           "    capacity: {memory: {value: 80Gi}}\n  - name: gpu-1\n");
  yaml +=
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: d}\n"
      "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x}}]}}\n"
      "status:\n  allocation:\n    devices:\n      results:\n"
      "      - {request: r, driver: gpu.nvidia.com, pool: p, device: gpu-1}\n"
      "      - {request: r, driver: gpu.nvidia.com, pool: p, device: gone}\n"
      "      - {request: r, driver: gpu.nvidia.com, pool: p, device: shared, shareID: a,\n"
      "         consumedCapacity: {memory: 5Gi}}\n"
      "      - {request: r, driver: gpu.nvidia.com, pool: p, device: shared, shareID: b,\n"
      "         consumedCapacity: {power: 1}}\n";
  api::Loader loader;
  loader.AddText(yaml, "t.yaml", api::Format::kYaml);
  api::LoadResult r = loader.Finish();
  Inventory inv = Inventory::Build(r.objects);
  AllocationState state(inv);
  DeviceId shared = *inv.FindDevice("gpu.nvidia.com", "p", "shared");
  // Capacity names are interned; a shareable device has one slot per capacity.
  ASSERT_TRUE(inv.FindCapacity("memory").has_value());
  EXPECT_FALSE(inv.FindCapacity("power").has_value());
  EXPECT_EQ(inv.capacity_names()[*inv.FindCapacity("memory")], "memory");
  EXPECT_EQ(inv.capacity_slots(), 1u);
  EXPECT_EQ(inv.CapacityIndex(shared, *inv.FindCapacity("memory")), 0u);
  const CapacityAmounts ten{*api::Quantity::Parse("10Gi")};
  ASSERT_TRUE(state.Allocate(inv, shared, ten).ok());
  ASSERT_TRUE(state.Allocate(inv, shared, ten).ok());
  EXPECT_FALSE(state.in_use(shared));
  EXPECT_EQ(state.capacity_used(inv, shared)[0].String(), "20Gi");
  EXPECT_TRUE(state.capacity_used(inv, *inv.FindDevice("gpu.nvidia.com", "p", "gpu-1")).empty());
  // Amounts must be parallel to the device's capacity.
  EXPECT_FALSE(state.Allocate(inv, shared, {ten[0], ten[0]}).ok());
  std::vector<std::string> problems = state.ApplyAllocatedClaims(inv, r.objects);
  EXPECT_TRUE(state.in_use(*inv.FindDevice("gpu.nvidia.com", "p", "gpu-1")));
  EXPECT_EQ(state.capacity_used(inv, shared)[0].String(), "25Gi");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("gpu.nvidia.com/p/gone"), std::string::npos);
  EXPECT_NE(problems[1].find("t.yaml:"), std::string::npos);
  EXPECT_NE(problems[1].find("capacity power of device shared"), std::string::npos);
  // A release of more than is held changes nothing.
  EXPECT_FALSE(state.Release(inv, shared, {*api::Quantity::Parse("30Gi")}).ok());
  EXPECT_EQ(state.capacity_used(inv, shared)[0].String(), "25Gi");
  ASSERT_TRUE(state.Release(inv, shared, ten).ok());
  EXPECT_EQ(state.capacity_used(inv, shared)[0].String(), "15Gi");
}

TEST(NodeSelectorTest, Operators) {
  std::map<std::string, std::string> labels{{"zone", "a"}, {"gpus", "8"}};
  auto match = [&](const std::string& key, const std::string& op, std::vector<std::string> values,
                   bool field = false) {
    api::NodeSelector s;
    api::NodeSelectorTerm t;
    (field ? t.match_fields : t.match_expressions).push_back({key, op, std::move(values)});
    s.node_selector_terms.push_back(t);
    return MatchesNodeSelector(s, "node-1", labels);
  };
  EXPECT_TRUE(match("zone", "In", {"a", "b"}));
  EXPECT_FALSE(match("zone", "NotIn", {"a"}));
  EXPECT_TRUE(match("rack", "NotIn", {"a"}));
  EXPECT_TRUE(match("zone", "Exists", {}));
  EXPECT_TRUE(match("rack", "DoesNotExist", {}));
  EXPECT_TRUE(match("gpus", "Gt", {"4"}));
  EXPECT_FALSE(match("gpus", "Lt", {"4"}));
  EXPECT_FALSE(match("zone", "Gt", {"4"}));
  EXPECT_TRUE(match("metadata.name", "In", {"node-1"}, true));
  EXPECT_FALSE(match("metadata.name", "In", {"node-2"}, true));
  api::NodeSelector empty_term;
  empty_term.node_selector_terms.emplace_back();
  EXPECT_FALSE(MatchesNodeSelector(empty_term, "node-1", labels));
}

}  // namespace
}  // namespace gpuplane::model
