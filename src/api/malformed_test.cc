// Table test over testdata/api/malformed/: every bad input yields its expected diagnostic
// (with file and line) and nothing crashes. Expectations are `# expect: ...` lines at the top
// of a YAML case, or a `<case>.expect` file beside a JSON case.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/loader.h"
#include "api/testing.h"
#include "api/writer.h"
#include "gtest/gtest.h"

namespace gpuplane::api {
namespace {

std::vector<std::string> Expectations(const std::filesystem::path& path) {
  std::filesystem::path sidecar = path;
  sidecar += ".expect";
  bool from_sidecar = std::filesystem::exists(sidecar);
  std::ifstream in(from_sidecar ? sidecar : path);
  std::vector<std::string> out;
  std::string line;
  const std::string prefix = "# expect: ";
  while (std::getline(in, line)) {
    if (from_sidecar && !line.empty()) {
      out.push_back(line);
    } else if (line.rfind(prefix, 0) == 0) {
      out.push_back(line.substr(prefix.size()));
    }
  }
  return out;
}

TEST(MalformedInputTest, EveryCaseReportsItsExpectedDiagnostic) {
  // Messages name files as given; load by repository-relative path like a user would.
  std::filesystem::current_path(GPUPLANE_SOURCE_DIR);
  int cases = 0;
  std::filesystem::path dir = testing::SourcePath("testdata/api/malformed");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".expect") continue;
    ++cases;
    SCOPED_TRACE(entry.path().filename().string());
    std::vector<std::string> expected = Expectations(entry.path());
    ASSERT_FALSE(expected.empty()) << "case has no expectation";
    absl::StatusOr<LoadResult> read =
        LoadPaths({std::filesystem::relative(entry.path(), GPUPLANE_SOURCE_DIR).string()});
    ASSERT_TRUE(read.ok()) << read.status();
    const LoadResult& r = *read;
    EXPECT_GT(r.errors(), 0u);
    std::string all;
    for (const Diagnostic& d : r.diagnostics) all += d.ToString() + "\n";
    for (const std::string& e : expected) {
      EXPECT_NE(all.find(e), std::string::npos) << "expected: " << e << "\ngot:\n" << all;
    }
  }
  EXPECT_GE(cases, 40);
}

}  // namespace
}  // namespace gpuplane::api

namespace gpuplane::api {
namespace {

// Inputs the fuzzer found problems with: each must load (as YAML and as JSON) to errors,
// promptly, without crashing, and each object in them that is valid must survive
// encode -> decode unchanged (fuzz/api_fuzz.cc checks the same).
TEST(FuzzRegressionTest, InputsLoadToErrorsWithoutCrashing) {
  int cases = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::SourcePath("testdata/api/fuzz-regressions"))) {
    ++cases;
    SCOPED_TRACE(entry.path().filename().string());
    for (Format f : {Format::kYaml, Format::kJson}) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Loader loader;
      loader.AddText(text, entry.path().string(), f);
      LoadResult r = loader.Finish();
      EXPECT_GT(r.errors(), 0u);
      for (const SourcedObject& o : r.objects) {
        if (!o.valid) continue;
        std::string yaml = ToYaml(EncodeObject(o.object));
        Loader again;
        again.AddText(yaml, "round-trip", Format::kYaml);
        LoadResult back = again.Finish();
        ASSERT_EQ(back.objects.size(), 1u) << yaml;
        EXPECT_EQ(back.objects[0].object, o.object) << yaml;
      }
    }
  }
  EXPECT_GE(cases, 2);
}

}  // namespace
}  // namespace gpuplane::api
