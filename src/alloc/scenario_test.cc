// Data-driven allocation scenarios: every testdata/alloc/*.yaml is a cluster plus work, with
// expectations in header comments:
//   # cluster: examples/cluster        (optional: also load these objects; repeatable)
//   # node: NAME                       (optional: allocate on this node only)
//   # expect: NS/CLAIM allocated [node=N] [devices=D1,D2] [requests=R1,R2] [pools=P1,P2]
//             [consumed=memory:40Gi,-] [config=FromClass:r1,FromClaim] [admin=true,false]
//             [selector=NODE|none]
//   # expect: NS/CLAIM unallocated REASON FRAGMENT
// Unallocated ResourceClaims, ResourceClaimTemplates and Pods are the work, allocated in
// file order; everything else (with allocated claims counting as in use) is the cluster.
#include <filesystem>
#include <fstream>

#include "alloc/batch.h"
#include "api/loader.h"
#include "gtest/gtest.h"
#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

bool IsWork(const api::Object& o) {
  if (const auto* c = std::get_if<api::ResourceClaim>(&o)) return !c->status.allocation;
  return std::holds_alternative<api::ResourceClaimTemplate>(o) ||
         std::holds_alternative<api::Pod>(o);
}

void RunScenario(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> expects, clusters;
  std::optional<std::string> node;
  while (std::getline(in, line) && line.rfind('#', 0) == 0) {
    auto value = [&](const std::string& key) { return line.substr(key.size()); };
    if (line.rfind("# expect: ", 0) == 0) expects.push_back(value("# expect: "));
    if (line.rfind("# cluster: ", 0) == 0) clusters.push_back(value("# cluster: "));
    if (line.rfind("# node: ", 0) == 0) node = value("# node: ");
  }
  ASSERT_FALSE(expects.empty()) << "no expectations";
  api::Loader loader;
  for (const std::string& c : clusters) {
    ASSERT_TRUE(loader.AddPath(std::string(GPUPLANE_SOURCE_DIR) + "/" + c).ok()) << c;
  }
  ASSERT_TRUE(loader.AddPath(path.string()).ok());
  api::LoadResult r = loader.Finish();
  for (const api::Diagnostic& d : r.diagnostics) {
    if (d.is_error()) ADD_FAILURE() << d.ToString();
  }
  std::vector<api::SourcedObject> cluster, work;
  for (api::SourcedObject& o : r.objects) (IsWork(o.object) ? work : cluster).push_back(o);
  absl::StatusOr<BatchResult> batch = AllocateInOrder(cluster, work, node, /*verify=*/true);
  ASSERT_TRUE(batch.ok()) << batch.status();
  for (const std::string& e : expects) {
    std::vector<std::string> words = util::SplitNonEmpty(e, ' ');
    ASSERT_GE(words.size(), 2u) << e;
    const ClaimOutcome* found = nullptr;
    for (const ClaimOutcome& c : batch->claims) {
      if (c.claim.metadata.namespace_name + "/" + c.claim.metadata.name == words[0]) found = &c;
    }
    ASSERT_NE(found, nullptr) << "no claim " << words[0];
    std::string reasons;
    for (const std::string& x : found->reasons) reasons += x + "\n";
    if (words[1] == "unallocated") {
      EXPECT_FALSE(found->allocated) << e;
      std::string fragment = e.substr(e.find("unallocated") + 11);
      if (!fragment.empty()) fragment = fragment.substr(1);
      EXPECT_NE(reasons.find(fragment), std::string::npos) << e << "\nreasons:\n" << reasons;
      continue;
    }
    ASSERT_EQ(words[1], "allocated") << e;
    ASSERT_TRUE(found->allocated) << e << "\nreasons:\n" << reasons;
    const api::AllocationResult& a = *found->claim.status.allocation;
    std::vector<std::string> devices, requests, pools, consumed, config, admin;
    for (const api::DeviceRequestAllocationResult& res : a.devices.results) {
      devices.push_back(res.device);
      requests.push_back(res.request);
      pools.push_back(res.pool);
      admin.emplace_back(res.admin_access.value_or(false) ? "true" : "false");
      std::string c;
      for (const auto& [name, q] : res.consumed_capacity) {
        c += (c.empty() ? "" : "+") + name + ":" + q.String();
      }
      consumed.push_back(c.empty() ? "-" : c);
      if (res.consumed_capacity.empty() != !res.share_id.has_value()) {
        ADD_FAILURE() << e << ": shareID and consumedCapacity must come together";
      }
    }
    for (const api::DeviceAllocationConfiguration& c : a.devices.config) {
      std::string reqs;
      for (const std::string& r : c.requests) reqs += (reqs.empty() ? "" : "+") + r;
      config.push_back(c.source + (reqs.empty() ? "" : ":" + reqs));
    }
    for (size_t i = 2; i < words.size(); ++i) {
      std::string key = words[i].substr(0, words[i].find('='));
      std::vector<std::string> want =
          util::SplitNonEmpty(words[i].substr(words[i].find('=') + 1), ',');
      if (key == "node") {
        EXPECT_EQ(found->node, want.at(0)) << e;
      } else if (key == "devices") {
        EXPECT_EQ(devices, want) << e;
      } else if (key == "requests") {
        EXPECT_EQ(requests, want) << e;
      } else if (key == "pools") {
        EXPECT_EQ(pools, want) << e;
      } else if (key == "consumed") {  // per result: NAME:QUANTITY[+...] or -
        EXPECT_EQ(consumed, want) << e;
      } else if (key == "config") {  // per entry: SOURCE[:REQ+REQ]
        EXPECT_EQ(config, want) << e;
      } else if (key == "selector") {  // the node the result is pinned to, or none
        std::string pinned = "none";
        if (a.node_selector && !a.node_selector->node_selector_terms.empty() &&
            !a.node_selector->node_selector_terms[0].match_fields.empty()) {
          pinned = a.node_selector->node_selector_terms[0].match_fields[0].values.at(0);
        }
        EXPECT_EQ(pinned, want.at(0)) << e;
      } else if (key == "admin") {  // per result: true or false
        EXPECT_EQ(admin, want) << e;
      } else {
        ADD_FAILURE() << "unknown expectation key " << key;
      }
    }
  }
}

TEST(AllocationScenarioTest, EveryScenarioMeetsItsExpectations) {
  int count = 0;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUPLANE_SOURCE_DIR) + "/testdata/alloc")) {
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::filesystem::path& p : paths) {
    SCOPED_TRACE(p.filename().string());
    RunScenario(p);
    ++count;
  }
  std::printf("  %d allocation scenarios\n", count);
  EXPECT_GE(count, 60);  // issue 4: at least 60 scenarios
}

}  // namespace
}  // namespace gpuplane::alloc
