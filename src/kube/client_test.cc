#include "kube/client.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kube/rest_config.h"

namespace gpuplane::kube {
namespace {

TEST(ClientTest, AServerThatDoesNotAnswerIsUnavailableAndNamed) {
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  absl::StatusOr<Response> r = Client(cfg, 5).Get("/version");
  ASSERT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("https://127.0.0.1:1/version"), std::string_view::npos);
}

TEST(ClientTest, StatusMessageReadsTheApiStatus) {
  EXPECT_EQ(StatusMessage({403, R"({"kind":"Status","message":"forbidden: no"})"}),
            "forbidden: no");
  EXPECT_EQ(StatusMessage({500, "oops"}), "oops");
  EXPECT_EQ(StatusMessage({502, ""}), "HTTP 502");
}

// Against a real kube-apiserver: scripts/e2e.sh sets GPUPLANE_TEST_PLANE to the folder of a
// plane started by scripts/controlplane.sh; without it these tests skip.
class ClientPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("GPUPLANE_TEST_PLANE");
    if (dir == nullptr) GTEST_SKIP() << "GPUPLANE_TEST_PLANE is unset (scripts/e2e.sh sets it)";
    dir_ = dir;
  }
  Client Load(const std::string& file) {
    absl::StatusOr<RestConfig> cfg = LoadKubeconfig(dir_ + "/" + file);
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    return Client(cfg.ok() ? *cfg : RestConfig{});
  }
  std::string dir_;
};

TEST_F(ClientPlaneTest, TokenAndClientCertificateBothAuthenticate) {
  for (const char* file : {"kubeconfig", "kubeconfig-cert"}) {
    absl::StatusOr<Response> r = Load(file).Get("/api/v1/namespaces/default");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200) << file << ": " << StatusMessage(*r);
  }
}

TEST_F(ClientPlaneTest, AUserWithoutPermissionGetsTheServersReason) {
  absl::StatusOr<Response> r = Load("kubeconfig-viewer").Get("/api/v1/nodes");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(StatusMessage(*r).find("cannot list resource \"nodes\""), std::string::npos)
      << StatusMessage(*r);
}

TEST_F(ClientPlaneTest, WatchDeliversEventsFromAListsResourceVersion) {
  Client c = Load("kubeconfig");
  const std::string ns = "/api/v1/namespaces/default/configmaps";
  absl::StatusOr<Response> list = c.Get(ns);
  ASSERT_TRUE(list.ok() && list->ok()) << list.status();
  std::string rv = nlohmann::json::parse(list->body)["metadata"]["resourceVersion"];
  std::string name = "kube-client-test-" + rv;
  absl::StatusOr<Response> created = c.Do(
      "POST", ns, nlohmann::json{{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}}.dump());
  ASSERT_TRUE(created.ok() && created->status == 201) << StatusMessage(*created);
  std::vector<std::string> seen;
  absl::StatusOr<Response> w = c.Stream(
      ns + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv,
      [&](std::string_view line) {
        nlohmann::json ev = nlohmann::json::parse(line);
        if (ev["object"]["metadata"]["name"] == name) seen.push_back(ev["type"]);
        return seen.empty();
      },
      20);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->status, 200);
  ASSERT_EQ(seen, std::vector<std::string>{"ADDED"});
  EXPECT_EQ(c.Do("DELETE", ns + "/" + name)->status, 200);
}

}  // namespace
}  // namespace gpuplane::kube
