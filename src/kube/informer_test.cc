#include "kube/informer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kube/plane_testing.h"
#include "kube/rest_config.h"

namespace gpuplane::kube {
namespace {

TEST(InformerTest, KeysAreNamespaceSlashNameOrName) {
  EXPECT_EQ(Informer::KeyOf({{"metadata", {{"namespace", "a"}, {"name", "b"}}}}), "a/b");
  EXPECT_EQ(Informer::KeyOf({{"metadata", {{"name", "node-1"}}}}), "node-1");
}

// The watch stream's lines as the server sends them, and what a broken or hostile one could.
TEST(InformerTest, AppliesWatchLinesAndSkipsWhatIsNotAnEvent) {
  std::vector<std::string> seen;
  Informer inf(Client(RestConfig{}), InformerOptions{"/api/v1/configmaps"},
               [&](EventType, const nlohmann::json& o) { seen.push_back(Informer::KeyOf(o)); });
  int code = 0;
  const std::vector<std::string> skipped = {
      "",
      "not json",
      "[1,2]",
      "5",
      R"({"type":5,"object":{"metadata":{"name":"a"}}})",
      R"({"type":"ADDED","object":"a"})",
      R"({"type":"ADDED","object":{"metadata":{"name":7}}})",
      R"({"type":"ADDED","object":{"metadata":"x"}})",
      R"({"type":"ADDED"})",
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":9}}})",
      R"({"type":"SOMETHING","object":{"metadata":{"name":"a"}}})"};
  for (const std::string& line : skipped) {
    EXPECT_TRUE(inf.ApplyWatchLine(line, &code)) << line;
  }
  EXPECT_TRUE(inf.Shared().empty());
  EXPECT_TRUE(seen.empty());
  EXPECT_TRUE(inf.ApplyWatchLine(
      R"({"type":"ADDED","object":{"metadata":{"namespace":"n","name":"a","resourceVersion":"4"}}})",
      &code));
  EXPECT_TRUE(inf.ApplyWatchLine(
      R"({"type":"ADDED","object":{"metadata":{"namespace":3,"name":"b"}}})", &code));
  EXPECT_TRUE(inf.ApplyWatchLine(
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"8"}}})", &code));
  ASSERT_EQ(inf.Shared().size(), 2U);
  EXPECT_EQ(inf.Shared()[0].key, "b");  // a namespace that is not text reads as none
  EXPECT_EQ(inf.Shared()[1].key, "n/a");
  EXPECT_EQ(inf.Shared()[0].version, -1);  // none given
  EXPECT_EQ(inf.Shared()[1].version, 4);   // read when the event arrived
  EXPECT_EQ(inf.ResourceVersion(), "8");
  EXPECT_TRUE(
      inf.ApplyWatchLine(R"({"type":"DELETED","object":{"metadata":{"name":"b"}}})", &code));
  EXPECT_EQ(inf.Shared().size(), 1U);
  EXPECT_EQ(seen, (std::vector<std::string>{"n/a", "b", "b"}));
  EXPECT_EQ(code, 0);

  EXPECT_FALSE(inf.ApplyWatchLine(R"({"type":"ERROR","object":{"code":410}})", &code));
  EXPECT_EQ(code, 410);
  for (const char* line :
       {R"({"type":"ERROR","object":{"code":"410"}})",
        R"({"type":"ERROR","object":{"code":1e300}})", R"({"type":"ERROR","object":{"code":-3}})",
        R"({"type":"ERROR","object":{"code":99999999999}})", R"({"type":"ERROR"})"}) {
    code = 0;
    EXPECT_FALSE(inf.ApplyWatchLine(line, &code)) << line;
    EXPECT_EQ(code, -1) << line;
  }
}

// A server that cannot be reached: Run retries (it does not return until Stop), counts each
// failure, and Trouble() names the request and the reason.
TEST(InformerTest, AnUnreachableServerIsRetriedAndNamed) {
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  Informer inf(Client(cfg, 5), {.path = "/api/v1/nodes"});
  EXPECT_EQ(inf.Trouble(), "");
  std::thread run([&] { EXPECT_TRUE(inf.Run().ok()); });
  ASSERT_TRUE(Eventually([&] { return inf.failures() >= 2; }, 10));
  const std::string trouble = inf.Trouble();
  EXPECT_NE(trouble.find("https://127.0.0.1:1/api/v1/nodes"), std::string::npos) << trouble;
  EXPECT_FALSE(inf.Synced());
  inf.Stop();
  run.join();
}

// Against a real kube-apiserver (GPUPLANE_TEST_PLANE, set by scripts/e2e.sh).
class InformerPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("GPUPLANE_TEST_PLANE");
    if (dir == nullptr) GTEST_SKIP() << "GPUPLANE_TEST_PLANE is unset (scripts/e2e.sh sets it)";
    dir_ = dir;
    absl::StatusOr<RestConfig> cfg = LoadKubeconfig(dir_ + "/kubeconfig");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    client_.emplace(*cfg);
    ns_ = "informer-" +
          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000);
    ASSERT_EQ(
        client_
            ->Do("POST", "/api/v1/namespaces", nlohmann::json{{"metadata", {{"name", ns_}}}}.dump())
            ->status,
        201);
  }
  void TearDown() override {
    if (client_) (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_);
  }
  std::string ConfigMaps() const { return "/api/v1/namespaces/" + ns_ + "/configmaps"; }
  long Create(const std::string& name, const std::string& value) {  // NOLINT(google-runtime-int)
    nlohmann::json cm = {{"metadata", {{"name", name}}}, {"data", {{"v", value}}}};
    return client_->Do("POST", ConfigMaps(), cm.dump())->status;
  }

  std::string dir_, ns_;
  std::optional<Client> client_;
};

TEST_F(InformerPlaneTest, ListsInPagesThenFollowsAddsUpdatesAndDeletes) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Create("cm-" + std::to_string(i), "0"), 201);
  std::mutex mu;
  std::vector<std::string> events;
  Informer inf(*client_, {.path = ConfigMaps(), .page_size = 2, .watch_seconds = 60},
               [&](EventType t, const nlohmann::json& obj) {
                 std::lock_guard<std::mutex> lock(mu);
                 events.push_back(std::to_string(static_cast<int>(t)) + Informer::KeyOf(obj));
               });
  std::thread run([&] { EXPECT_TRUE(inf.Run().ok()); });
  ASSERT_TRUE(Eventually([&] { return inf.Synced(); }));
  // kube-root-ca.crt may be there too (the controller that publishes it is not running).
  EXPECT_GE(inf.List().size(), 5u);
  ASSERT_EQ(Create("cm-new", "1"), 201);
  nlohmann::json patch = {{"data", {{"v", "2"}}}};
  EXPECT_EQ(
      client_->Do("PATCH", ConfigMaps() + "/cm-0", patch.dump(), "application/merge-patch+json")
          ->status,
      200);
  EXPECT_EQ(client_->Do("DELETE", ConfigMaps() + "/cm-1")->status, 200);
  ASSERT_TRUE(Eventually([&] { return !inf.Get(ns_ + "/cm-1").has_value(); }));
  ASSERT_TRUE(inf.Get(ns_ + "/cm-new").has_value());
  EXPECT_EQ((*inf.Get(ns_ + "/cm-0"))["data"]["v"], "2");
  // Cached without managedFields, listed or watched; an update of a cached copy keeps the
  // server's (what the scheduler's writes rely on).
  for (const char* name : {"/cm-4", "/cm-new"}) {
    EXPECT_FALSE((*inf.Get(ns_ + name))["metadata"].contains("managedFields")) << name;
  }
  nlohmann::json cm4 = *inf.Get(ns_ + "/cm-4");
  cm4["data"]["v"] = "3";
  EXPECT_EQ(client_->Do("PUT", ConfigMaps() + "/cm-4", cm4.dump())->status, 200);
  nlohmann::json served = nlohmann::json::parse(client_->Get(ConfigMaps() + "/cm-4")->body);
  EXPECT_EQ(served["data"]["v"], "3");
  EXPECT_FALSE(served["metadata"].value("managedFields", nlohmann::json::array()).empty());
  inf.Stop();
  run.join();
  std::lock_guard<std::mutex> lock(mu);
  auto has = [&](const std::string& e) {
    return std::find(events.begin(), events.end(), e) != events.end();
  };
  EXPECT_TRUE(has("0" + ns_ + "/cm-4"));    // listed: added
  EXPECT_TRUE(has("0" + ns_ + "/cm-new"));  // watched: added
  EXPECT_TRUE(has("1" + ns_ + "/cm-0"));    // modified
  EXPECT_TRUE(has("2" + ns_ + "/cm-1"));    // deleted
  EXPECT_EQ(inf.lists(), 1);
}

TEST_F(InformerPlaneTest, FollowsThroughAnApiServerRestart) {
  ASSERT_EQ(Create("before", "0"), 201);
  Informer inf(*client_, {.path = ConfigMaps(), .watch_seconds = 60});
  std::thread run([&] { EXPECT_TRUE(inf.Run().ok()); });
  ASSERT_TRUE(Eventually([&] { return inf.Get(ns_ + "/before").has_value(); }));
  ASSERT_TRUE(RestartApiServer(dir_).ok());
  ASSERT_EQ(Create("after", "0"), 201);
  EXPECT_TRUE(Eventually([&] { return inf.Get(ns_ + "/after").has_value(); }, 60))
      << "lists " << inf.lists() << " watches " << inf.watches();
  EXPECT_GE(inf.watches(), 2);   // the watch broke
  EXPECT_GE(inf.failures(), 1);  // and the server did not answer while it restarted
  EXPECT_EQ(inf.Trouble(), "");  // reading again
  // The restarted server's watch cache begins after the informer's version (the server wrote
  // its own objects on start), so resuming gets 410 Gone and the informer lists again.
  EXPECT_EQ(inf.lists(), 2);
  inf.Stop();
  run.join();
  absl::Status caught_up = AwaitClaimController(*client_, ns_);  // for the tests after this one
  EXPECT_TRUE(caught_up.ok()) << caught_up;
}

// A kind served by a CustomResourceDefinition of this test's own: before it is installed Run
// ends with NotFound at once; once it is, Run lists and watches; when it is deleted Run ends
// with NotFound again after gone_after_seconds of 404s (not PermissionDenied, which would
// stop a scheduler), the cache emptied with a deletion for each object; installed again, a
// new Run lists it again.
TEST_F(InformerPlaneTest, AKindThatComesAndGoesIsFollowed) {
  const std::string group = ns_ + ".test.gpuplane.io";
  const std::string crd_path =
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets." + group;
  const std::string widgets = "/apis/" + group + "/v1/widgets";
  const nlohmann::json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets." + group}}},
      {"spec",
       {{"group", group},
        {"scope", "Cluster"},
        {"names", {{"plural", "widgets"}, {"kind", "Widget"}, {"listKind", "WidgetList"}}},
        {"versions",
         nlohmann::json::array(
             {{{"name", "v1"},
               {"served", true},
               {"storage", true},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  auto install = [&] {
    auto r =
        client_->Do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump());
    ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    ASSERT_TRUE(Eventually([&] {
      auto got = client_->Get(widgets);
      return got.ok() && got->status == 200;
    }));
  };
  auto remove = [&] {
    ASSERT_EQ(client_->Do("DELETE", crd_path)->status, 200);
    ASSERT_TRUE(Eventually([&] { return client_->Get(crd_path)->status == 404; }));
  };
  std::mutex mu;
  std::vector<std::string> events;
  Informer inf(*client_, {.path = widgets, .watch_seconds = 60, .gone_after_seconds = 1},
               [&](EventType t, const nlohmann::json& obj) {
                 std::lock_guard<std::mutex> lock(mu);
                 events.push_back(std::to_string(static_cast<int>(t)) + Informer::KeyOf(obj));
               });
  EXPECT_EQ(inf.Run().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(inf.Served());

  ASSERT_NO_FATAL_FAILURE(install());
  nlohmann::json w = {
      {"apiVersion", group + "/v1"}, {"kind", "Widget"}, {"metadata", {{"name", "w"}}}};
  ASSERT_EQ(client_->Do("POST", widgets, w.dump())->status, 201);
  absl::Status ended;
  std::thread run([&] { ended = inf.Run(); });
  ASSERT_TRUE(Eventually([&] { return inf.Has("w"); }));
  EXPECT_TRUE(inf.Served());
  ASSERT_NO_FATAL_FAILURE(remove());
  run.join();  // Run ends by itself
  EXPECT_EQ(ended.code(), absl::StatusCode::kNotFound) << ended;
  EXPECT_FALSE(inf.Served());
  EXPECT_TRUE(inf.List().empty());
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(events, (std::vector<std::string>{"0w", "2w"}));
  }

  ASSERT_NO_FATAL_FAILURE(install());
  ASSERT_EQ(client_->Do("POST", widgets, w.dump())->status, 201);
  std::thread again([&] { ended = inf.Run(); });
  EXPECT_TRUE(Eventually([&] { return inf.Has("w"); }));
  EXPECT_TRUE(inf.Served());
  inf.Stop();
  again.join();
  EXPECT_TRUE(ended.ok()) << ended;
  remove();
}

TEST_F(InformerPlaneTest, AForbiddenResourceEndsRunWithTheReason) {
  absl::StatusOr<RestConfig> viewer = LoadKubeconfig(dir_ + "/kubeconfig-viewer");
  ASSERT_TRUE(viewer.ok());
  Informer inf(Client(*viewer), {.path = "/api/v1/nodes"});
  absl::Status s = inf.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("listing /api/v1/nodes: HTTP 403"), std::string_view::npos) << s;
  EXPECT_NE(s.message().find("deploy/scheduler/rbac.yaml"), std::string_view::npos) << s;
}

}  // namespace
}  // namespace gpuplane::kube
