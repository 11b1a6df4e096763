// Data-driven allocation scenarios: every testdata/alloc/*.yaml (and testdata/k8sref/*.yaml,
// the differential test's findings) is a cluster plus work, with
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
#include <map>

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

struct Header {
  std::vector<std::string> expects, clusters;
  std::optional<std::string> node;
};

Header ReadHeader(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  Header h;
  while (std::getline(in, line) && line.rfind('#', 0) == 0) {
    auto value = [&](const std::string& key) { return line.substr(key.size()); };
    if (line.rfind("# expect: ", 0) == 0) h.expects.push_back(value("# expect: "));
    if (line.rfind("# cluster: ", 0) == 0) h.clusters.push_back(value("# cluster: "));
    if (line.rfind("# node: ", 0) == 0) h.node = value("# node: ");
  }
  return h;
}

// An allocated claim's results, each as the expectation keys spell them.
struct Observed {
  std::vector<std::string> devices, requests, pools, consumed, config, admin;
  std::string pinned = "none";  // the node the result is pinned to
};

Observed Observe(const api::AllocationResult& a, const std::string& e) {
  Observed o;
  for (const api::DeviceRequestAllocationResult& res : a.devices.results) {
    o.devices.push_back(res.device);
    o.requests.push_back(res.request);
    o.pools.push_back(res.pool);
    o.admin.emplace_back(res.admin_access.value_or(false) ? "true" : "false");
    std::string c;
    for (const auto& [name, q] : res.consumed_capacity) {
      c += (c.empty() ? "" : "+") + name + ":" + q.String();
    }
    o.consumed.push_back(c.empty() ? "-" : c);
    if (res.consumed_capacity.empty() != !res.share_id.has_value()) {
      ADD_FAILURE() << e << ": shareID and consumedCapacity must come together";
    }
  }
  for (const api::DeviceAllocationConfiguration& c : a.devices.config) {
    std::string reqs;
    for (const std::string& r : c.requests) reqs += (reqs.empty() ? "" : "+") + r;
    o.config.push_back(c.source + (reqs.empty() ? "" : ":" + reqs));
  }
  if (a.node_selector && !a.node_selector->node_selector_terms.empty() &&
      !a.node_selector->node_selector_terms[0].match_fields.empty()) {
    o.pinned = a.node_selector->node_selector_terms[0].match_fields[0].values.at(0);
  }
  return o;
}

// One "allocated" expectation's KEY=VALUE words against the claim.
void CheckAllocated(const ClaimOutcome& found, const std::vector<std::string>& words,
                    const std::string& e) {
  const Observed o = Observe(*found.claim.status.allocation, e);
  const std::map<std::string, const std::vector<std::string>*> lists = {
      {"devices", &o.devices}, {"requests", &o.requests},
      {"pools", &o.pools},     {"consumed", &o.consumed},  // per result: NAME:QUANTITY[+...] or -
      {"config", &o.config},                               // per entry: SOURCE[:REQ+REQ]
      {"admin", &o.admin}};                                // per result: true or false
  for (size_t i = 2; i < words.size(); ++i) {
    std::string key = words[i].substr(0, words[i].find('='));
    std::vector<std::string> want =
        util::SplitNonEmpty(words[i].substr(words[i].find('=') + 1), ',');
    if (key == "node") {
      EXPECT_EQ(found.node, want.at(0)) << e;
    } else if (key == "selector") {
      EXPECT_EQ(o.pinned, want.at(0)) << e;
    } else if (auto it = lists.find(key); it != lists.end()) {
      EXPECT_EQ(*it->second, want) << e;
    } else {
      ADD_FAILURE() << "unknown expectation key " << key;
    }
  }
}

void CheckExpectation(const BatchResult& batch, const std::string& e) {
  std::vector<std::string> words = util::SplitNonEmpty(e, ' ');
  ASSERT_GE(words.size(), 2u) << e;
  const ClaimOutcome* found = nullptr;
  for (const ClaimOutcome& c : batch.claims) {
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
    return;
  }
  ASSERT_EQ(words[1], "allocated") << e;
  ASSERT_TRUE(found->allocated) << e << "\nreasons:\n" << reasons;
  CheckAllocated(*found, words, e);
}

void RunScenario(const std::filesystem::path& path) {
  const Header h = ReadHeader(path);
  ASSERT_FALSE(h.expects.empty()) << "no expectations";
  api::Loader loader;
  for (const std::string& c : h.clusters) {
    ASSERT_TRUE(loader.AddPath(std::string(GPUPLANE_SOURCE_DIR) + "/" + c).ok()) << c;
  }
  ASSERT_TRUE(loader.AddPath(path.string()).ok());
  api::LoadResult r = loader.Finish();
  for (const api::Diagnostic& d : r.diagnostics) {
    if (d.is_error()) ADD_FAILURE() << d.ToString();
  }
  std::vector<api::SourcedObject> cluster, work;
  for (api::SourcedObject& o : r.objects) (IsWork(o.object) ? work : cluster).push_back(o);
  absl::StatusOr<BatchResult> batch = AllocateInOrder(cluster, work, h.node, Verification::kVerify);
  ASSERT_TRUE(batch.ok()) << batch.status();
  for (const std::string& e : h.expects) CheckExpectation(*batch, e);
}

TEST(AllocationScenarioTest, EveryScenarioMeetsItsExpectations) {
  int count = 0;
  std::vector<std::filesystem::path> paths;
  // testdata/k8sref: instances the differential test found where Kubernetes' allocator finds
  // nothing and gpuplane a valid allocation (each file names Kubernetes' reason).
  for (const char* dir : {"/testdata/alloc", "/testdata/k8sref"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(GPUPLANE_SOURCE_DIR) + dir)) {
      if (entry.path().extension() == ".yaml") paths.push_back(entry.path());
    }
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
