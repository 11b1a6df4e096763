#include "api/object.h"

#include <filesystem>
#include <string>

#include "api/loader.h"
#include "api/testing.h"
#include "api/writer.h"
#include "gtest/gtest.h"

namespace gpuplane::api {
namespace {

using testing::SourcePath;

std::string Dump(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) out += d.ToString() + "\n";
  return out;
}

LoadResult LoadText(const std::string& text, const std::string& file, Format f) {
  Loader loader;
  loader.AddText(text, file, f);
  return loader.Finish();
}

// Loads `text` (it comes first in the result) beside the other objects of `first` (checks
// across objects, such as a Queue's parent, need them).
LoadResult LoadBeside(const std::string& text, const std::string& file, Format f,
                      const LoadResult& first, size_t skip) {
  Loader loader;
  loader.AddText(text, file, f);
  for (size_t j = 0; j < first.objects.size(); ++j) {
    if (j != skip)
      loader.AddText(ToYaml(EncodeObject(first.objects[j].object)), "beside.yaml", Format::kYaml);
  }
  return loader.Finish();
}

// read -> write -> read yields equal objects, in YAML and in JSON, and writing is a fixed point.
void ExpectRoundTrip(const LoadResult& first) {
  for (size_t i = 0; i < first.objects.size(); ++i) {
    const SourcedObject& o = first.objects[i];
    Doc doc = EncodeObject(o.object);
    std::string yaml = ToYaml(doc);
    LoadResult again = LoadBeside(yaml, "roundtrip.yaml", Format::kYaml, first, i);
    ASSERT_EQ(again.errors(), 0u) << Dump(again.diagnostics) << yaml;
    ASSERT_EQ(again.objects.size(), first.objects.size());
    EXPECT_EQ(again.objects[0].object, o.object) << o.file << ":" << o.line << "\n" << yaml;
    EXPECT_EQ(ToYaml(EncodeObject(again.objects[0].object)), yaml);

    std::string json = ToJson(doc, 2);
    LoadResult from_json = LoadBeside(json, "roundtrip.json", Format::kJson, first, i);
    ASSERT_EQ(from_json.errors(), 0u) << Dump(from_json.diagnostics) << json;
    ASSERT_EQ(from_json.objects.size(), first.objects.size());
    EXPECT_EQ(from_json.objects[0].object, o.object) << o.file << ":" << o.line;
  }
}

TEST(ObjectTest, EveryExampleFileRoundTrips) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(SourcePath("examples"))) {
    std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".json") continue;
    ++files;
    LoadResult r = *LoadPaths({entry.path().string()});
    ASSERT_EQ(r.errors(), 0u) << Dump(r.diagnostics);
    ASSERT_FALSE(r.objects.empty()) << entry.path();
    SCOPED_TRACE(entry.path().string());
    ExpectRoundTrip(r);
  }
  EXPECT_GE(files, 8);
}

TEST(ObjectTest, ValidTestdataRoundTrips) {
  for (const auto& entry : std::filesystem::directory_iterator(SourcePath("testdata/api/valid"))) {
    SCOPED_TRACE(entry.path().string());
    LoadResult r = *LoadPaths({entry.path().string()});
    ASSERT_EQ(r.errors(), 0u) << Dump(r.diagnostics);
    ExpectRoundTrip(r);
  }
}

TEST(ObjectTest, V1beta1AndV1beta2ConvertToV1) {
  LoadResult beta = *LoadPaths({SourcePath("testdata/api/valid/v1beta1.yaml")});
  LoadResult v1 = *LoadPaths({SourcePath("testdata/api/valid/v1-equivalent.yaml")});
  ASSERT_EQ(beta.errors() + v1.errors(), 0u) << Dump(beta.diagnostics) << Dump(v1.diagnostics);
  ASSERT_EQ(beta.objects.size(), v1.objects.size());
  for (size_t i = 0; i < beta.objects.size(); ++i) {
    EXPECT_EQ(beta.objects[i].object, v1.objects[i].object) << Label(beta.objects[i].object);
  }
  const auto& claim = std::get<ResourceClaim>(beta.objects[1].object);
  EXPECT_EQ(claim.api_version, "resource.k8s.io/v1");
  ASSERT_TRUE(claim.spec.devices.requests[0].exactly.has_value());
  EXPECT_EQ(claim.spec.devices.requests[0].exactly->count, 2);
  EXPECT_EQ(claim.spec.devices.requests[1].first_available[1].name, "full");
}

TEST(ObjectTest, KubectlListsWithPassthroughFields) {
  LoadResult r = *LoadPaths({SourcePath("testdata/api/valid/kubectl-list.json"),
                             SourcePath("testdata/api/valid/typed-list.json")});
  ASSERT_EQ(r.errors(), 0u) << Dump(r.diagnostics);
  ASSERT_EQ(r.objects.size(), 3u);
  const Pod& pod = std::get<Pod>(r.objects[0].object);
  EXPECT_EQ(pod.metadata.uid, "5f0c2a6e-8d7b-4b1e-9c53-2f4f1b7a9e01");
  EXPECT_EQ(pod.spec.priority, 1000);
  EXPECT_EQ(pod.spec.containers[0].resources.requests.at("memory").String(), "16Gi");
  EXPECT_EQ(pod.status.container_statuses[0].container_id, "containerd://4f1e9a");
  ASSERT_EQ(pod.spec.volumes.size(), 1u);  // a source gpuplane does not read, kept as written
  EXPECT_FALSE(pod.spec.volumes[0].persistent_volume_claim.has_value());
  EXPECT_TRUE(pod.spec.volumes[0].extra.contains("emptyDir"));
  EXPECT_TRUE(pod.metadata.extra.contains("managedFields"));
  const Node& node = std::get<Node>(r.objects[1].object);
  EXPECT_EQ(node.status.allocatable.at("memory").String(), "2000Gi");
  EXPECT_EQ(node.spec.taints[0].effect, "NoSchedule");
  const ResourceClaim& claim = std::get<ResourceClaim>(r.objects[2].object);
  ASSERT_TRUE(claim.status.allocation.has_value());
  EXPECT_EQ(claim.status.allocation->devices.results[0].device, "gpu-3");
  EXPECT_EQ(r.objects[2].file, SourcePath("testdata/api/valid/typed-list.json"));
}

TEST(ObjectTest, UnknownFieldsAreWarningsWithLocation) {
  LoadResult r = LoadText(
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: c\nspec:\n"
      "  selectorz: []\n",
      "w.yaml", Format::kYaml);
  EXPECT_EQ(r.errors(), 0u);
  ASSERT_EQ(r.warnings(), 1u);
  EXPECT_EQ(r.diagnostics[0].ToString(),
            "w.yaml:6: warning: DeviceClass c: spec.selectorz: unknown field (ignored; check the "
            "spelling and the apiVersion)");
}

TEST(ObjectTest, UnsupportedKindsAreSkippedWithAWarning) {
  LoadResult r =
      LoadText("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "s.yaml", Format::kYaml);
  EXPECT_EQ(r.errors(), 0u);
  EXPECT_TRUE(r.objects.empty());
  ASSERT_EQ(r.warnings(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("not used by gpuplane"), std::string::npos);
}

TEST(ObjectTest, EncodeWritesV1TypeMeta) {
  DeviceClass c;
  c.metadata.name = "x";
  Doc d = EncodeObject(c);
  EXPECT_EQ(ToJson(d),
            R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"x"}})");
}

}  // namespace
}  // namespace gpuplane::api
