// Runs every case of ../shared/data/cel-conformance/conformance.jsonl whose `needs` is empty
// and reports the pass rate per file. Skips with a message when the data is absent.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "cel/program.h"
#include "cel/typed_json.h"
#include "gtest/gtest.h"

namespace gpuplane::cel {
namespace {

std::string DataPath() {
  const char* env = std::getenv("GPUPLANE_SHARED_DIR");
  std::string shared = env ? env : std::string(GPUPLANE_SOURCE_DIR) + "/../shared";
  return shared + "/data/cel-conformance/conformance.jsonl";
}

struct Outcome {
  bool pass;
  std::string detail;
};

Outcome RunCase(const nlohmann::json& c) {
  CompileOptions options;
  options.check_references = !c.value("disable_check", false);
  // The vectors are core CEL; Kubernetes' environment rejects some of them (heterogeneous
  // literals, backtick field names), which test/k8sref checks against Kubernetes itself.
  options.kubernetes = false;
  MapActivation activation;
  for (const auto& [name, typed] : c["bindings"].items()) {
    absl::StatusOr<Value> v = ValueFromTypedJson(typed);
    if (!v.ok()) return {false, "bad binding: " + std::string(v.status().message())};
    options.variables.push_back(name);
    activation.Bind(name, *v);
  }
  const nlohmann::json& expect = c["expect"];
  absl::StatusOr<Program> program = Program::Compile(c["expr"].get<std::string>(), options);
  Value result = program.ok() ? program->Evaluate(activation)
                              : Value::Error(std::string(program.status().message()));
  if (expect.contains("error")) {
    return {result.is_error(), "expected an error, got " + ValueToTypedJson(result).dump()};
  }
  absl::StatusOr<Value> want = ValueFromTypedJson(expect["value"]);
  if (!want.ok()) return {false, "bad expectation: " + std::string(want.status().message())};
  bool same = !result.is_error() && SameValue(result, *want);
  return {same, "want " + expect["value"].dump() + ", got " + ValueToTypedJson(result).dump()};
}

// Vectors that contradict the CEL spec (reasons in the file): they must keep failing.
std::set<std::string> KnownWrongVectors() {
  std::ifstream in(std::string(GPUPLANE_SOURCE_DIR) + "/testdata/cel/conformance-known-wrong.txt");
  std::set<std::string> ids;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') ids.insert(line);
  }
  return ids;
}

TEST(CelConformanceTest, CoreCasesPass) {
  std::ifstream in(DataPath());
  if (!in) GTEST_SKIP() << "CEL conformance data not found at " << DataPath() << "; skipped";
  std::set<std::string> known_wrong = KnownWrongVectors();
  ASSERT_FALSE(known_wrong.empty());
  int known_wrong_seen = 0;
  std::map<std::string, std::pair<int, int>> per_file;  // passed, total
  std::vector<std::string> failures;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json c = nlohmann::json::parse(line);
    if (!c["needs"].empty()) continue;
    Outcome o = RunCase(c);
    std::string id = c["file"].get<std::string>() + "/" + c["section"].get<std::string>() + "/" +
                     c["name"].get<std::string>();
    if (known_wrong.contains(id)) {
      ++known_wrong_seen;
      EXPECT_FALSE(o.pass) << id << " now matches its vector; remove it from the known-wrong list";
      continue;
    }
    auto& [passed, total] = per_file[c["file"].get<std::string>()];
    ++total;
    if (o.pass) {
      ++passed;
    } else {
      failures.push_back(c["file"].get<std::string>() + "/" + c["name"].get<std::string>() + ": " +
                         c["expr"].get<std::string>() + " -> " + o.detail);
    }
  }
  int passed_all = 0, total_all = 0;
  for (const auto& [file, counts] : per_file) {
    std::printf("  %-14s %4d / %4d passed\n", file.c_str(), counts.first, counts.second);
    passed_all += counts.first;
    total_all += counts.second;
  }
  std::printf("  %-14s %4d / %4d passed\n", "total", passed_all, total_all);
  std::printf("  %d vectors contradict the CEL spec (testdata/cel/conformance-known-wrong.txt)\n",
              known_wrong_seen);
  for (const std::string& f : failures) std::printf("  FAIL %s\n", f.c_str());
  EXPECT_EQ(passed_all, total_all);
  EXPECT_EQ(known_wrong_seen, static_cast<int>(known_wrong.size()));
}

}  // namespace
}  // namespace gpuplane::cel
