// The API server client against an in-process HTTP server serving a PodList.
#include "acct/agent/pods_client.h"

#include <httplib.h>

#include <thread>

#include "gtest/gtest.h"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

TEST(PodsClientTest, ListsThisNodesPods) {
  httplib::Server server;
  std::string seen_query, seen_auth;
  int status = 200;
  server.Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (status != 200) {
      res.status = status;
      return;
    }
    seen_query = req.get_param_value("fieldSelector");
    seen_auth = req.get_header_value("Authorization");
    res.set_content(R"({"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"train-0",
      "namespace":"team-a","uid":"u-1","labels":{"app":"llm"}},"status":{"containerStatuses":
      [{"name":"main","containerID":"containerd://abc"}]}}]})",
                    "application/json");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });

  ApiServer api{util::Cat("http://127.0.0.1:", port), "secret", ""};
  absl::StatusOr<PodIndex> pods = ListNodePods(api, "node-7");
  ASSERT_TRUE(pods.ok()) << pods.status();
  EXPECT_EQ(seen_query, "spec.nodeName=node-7");
  EXPECT_EQ(seen_auth, "Bearer secret");
  ASSERT_EQ(pods->by_uid.size(), 1u);
  const PodIndex::Pod& p = pods->by_uid.at("u-1");
  EXPECT_EQ(p.name, "train-0");
  EXPECT_EQ(p.containers.at("abc"), "main");
  EXPECT_EQ(p.labels.at("app"), "llm");

  EXPECT_FALSE(ListNodePods(api, "").ok()) << "no node name";
  status = 403;
  absl::StatusOr<PodIndex> forbidden = ListNodePods(api, "node-7");
  ASSERT_FALSE(forbidden.ok());
  EXPECT_NE(std::string(forbidden.status().message()).find("needs list on pods"),
            std::string::npos);
  server.stop();
  serving.join();

  absl::StatusOr<PodIndex> down = ListNodePods(api, "node-7", 0.5);
  ASSERT_FALSE(down.ok());
  EXPECT_NE(std::string(down.status().message()).find(api.url), std::string::npos);
  EXPECT_NE(std::string(down.status().message()).find("could not connect"), std::string::npos)
      << "the reason in words, not the library's enumerator: " << down.status();
}

}  // namespace
}  // namespace gpuplane::acct
