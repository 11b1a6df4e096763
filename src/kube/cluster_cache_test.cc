#include "kube/cluster_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "kube/json_field.h"
#include "kube/plane_testing.h"
#include "kube/rest_config.h"
#include "sched/pass.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

// Every informer retries on its own; the cache names the first kind's trouble and counts
// the others, so a scheduler logs one line for an unreachable server, not one per kind.
TEST(ClusterCacheTest, AnUnreachableServerIsOneTroubleForAllKinds) {
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  ClusterCache cache(Client(cfg, 5), nullptr);
  EXPECT_EQ(cache.Trouble(), "");
  cache.Start();
  ASSERT_TRUE(
      Eventually([&] { return cache.Trouble().find("other kinds") != std::string::npos; }, 10));
  const std::string trouble = cache.Trouble();
  EXPECT_EQ(trouble.rfind("https://127.0.0.1:1/", 0), 0U) << trouble;
  EXPECT_GE(cache.Failures(), 2);
  EXPECT_FALSE(cache.Synced());
  EXPECT_TRUE(cache.Error().ok());  // retried, not given up
  cache.Stop();
}

// Against a real kube-apiserver (GPUPLANE_TEST_PLANE, set by scripts/e2e.sh): objects made
// through the API come back through the caches and api's reader, and a scheduling pass over
// them places a pending pod on the node whose GPUs its claim asks for.
TEST(ClusterCachePlaneTest, ALivePassPlacesAPendingPod) {
  const char* dir = std::getenv("GPUPLANE_TEST_PLANE");
  if (dir == nullptr) GTEST_SKIP() << "GPUPLANE_TEST_PLANE is unset (scripts/e2e.sh sets it)";
  absl::StatusOr<RestConfig> cfg = LoadKubeconfig(std::string(dir) + "/kubeconfig");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  Client c(*cfg);
  std::string id =
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000000);
  std::string ns = "cache-" + id, node = "cache-node-" + id, cls = "cache-" + id + ".example.com";
  auto create = [&](const std::string& path, const json& obj) {
    absl::StatusOr<Response> r = c.Do("POST", path, obj.dump());
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->status, 201) << path << ": " << StatusMessage(*r);
  };
  create("/api/v1/namespaces", {{"metadata", {{"name", ns}}}});
  create("/apis/resource.k8s.io/v1/deviceclasses",
         {{"metadata", {{"name", cls}}},
          {"spec",
           {{"selectors",
             json::array({{{"cel", {{"expression", "device.driver == \"" + cls + "\""}}}}})}}}});
  create("/api/v1/nodes",
         {{"metadata", {{"name", node}}},
          {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "64Gi"}, {"pods", "110"}}}}}});
  json devices = json::array();
  for (const char* name : {"gpu-0", "gpu-1"}) {
    devices.push_back({{"name", name},
                       {"attributes", {{"model", {{"string", "H100"}}}}},
                       {"capacity", {{"memory", {{"value", "80Gi"}}}}}});
  }
  create("/apis/resource.k8s.io/v1/resourceslices",
         {{"metadata", {{"name", node + "-gpus"}}},
          {"spec",
           {{"driver", cls},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", devices}}}});
  create("/apis/resource.k8s.io/v1/namespaces/" + ns + "/resourceclaims",
         {{"metadata", {{"name", "two-gpus"}}},
          {"spec",
           {{"devices",
             {{"requests",
               json::array({{{"name", "gpu"},
                             {"exactly", {{"deviceClassName", cls}, {"count", 2}}}}})}}}}}});
  create("/api/v1/namespaces/" + ns + "/pods",
         {{"metadata", {{"name", "trainer"}}},
          {"spec",
           {{"containers",
             json::array({{{"name", "c"},
                           {"image", "pause"},
                           {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}}})},
            {"resourceClaims",
             json::array({{{"name", "gpu"}, {"resourceClaimName", "two-gpus"}}})}}}});

  std::atomic<int> changes{0};
  std::atomic<bool> relabel_seen{false};  // the handler gets the kind and the object
  ClusterCache cache(c, [&](std::string_view kind, EventType type, const json& object) {
    ++changes;
    if (kind == "Pod" && type == EventType::kModified &&
        Field(Field(object, "metadata"), "labels").contains("team")) {
      relabel_seen = true;
    }
  });
  cache.Start();
  auto mine = [&](const json& pod) { return pod["metadata"].value("namespace", "") == ns; };
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  ClusterCache::Loaded loaded;
  while (std::chrono::steady_clock::now() < end) {
    if (cache.Synced()) {
      loaded = cache.Load(mine);
      bool pod = false;
      for (const api::SourcedObject* o : loaded.work) {
        pod = pod || api::KindOf(o->object) == "Pod";
      }
      if (pod) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A second load lends the very objects the first decoded; a change made through the API (a
  // new resourceVersion) is decoded again.
  ClusterCache::Loaded again = cache.Load(mine);
  EXPECT_EQ(again.work, loaded.work);  // the same addresses
  EXPECT_EQ(again.cluster.size(), loaded.cluster.size());
  absl::StatusOr<Response> patched =
      c.Do("PATCH", "/api/v1/namespaces/" + ns + "/pods/trainer",
           json{{"metadata", {{"labels", {{"team", "vision"}}}}}}.dump(),
           "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.status();
  ASSERT_EQ(patched->status, 200) << StatusMessage(*patched);
  bool relabeled = false;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !relabeled && std::chrono::steady_clock::now() < until;
       std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
    for (const api::SourcedObject* o : cache.Load(mine).work) {
      const auto* pod = std::get_if<api::Pod>(&o->object);
      relabeled = relabeled || (pod != nullptr && pod->metadata.labels.contains("team"));
    }
  }
  EXPECT_TRUE(relabeled) << "the relabeled pod was not decoded again";
  cache.Stop();
  ASSERT_TRUE(cache.Error().ok()) << cache.Error();
  EXPECT_GT(changes.load(), 0);
  EXPECT_TRUE(relabel_seen.load());
  for (const api::Diagnostic& d : loaded.diagnostics) ADD_FAILURE() << d.ToString();
  absl::StatusOr<sched::PassResult> pass = sched::RunPass(loaded.cluster, loaded.work, {});
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->decisions.size(), 1u);
  const sched::Decision& d = pass->decisions[0];
  ASSERT_TRUE(d.status.ok()) << sched::Render(d.status);
  EXPECT_EQ(pass->snapshot->inventory().nodes()[d.node].name, node);
  ASSERT_EQ(d.claims.size(), 1u);
  EXPECT_EQ(d.claims[0].first, ns + "/two-gpus");
  EXPECT_EQ(d.claims[0].second.devices.results.size(), 2u);
  (void)c.Do("DELETE", "/api/v1/namespaces/" + ns);
}

}  // namespace
}  // namespace gpuplane::kube
