#include "kube/gang_intent.h"

#include <gtest/gtest.h>

namespace gpuplane::kube {
namespace {

TEST(GangIntentTest, ReadsTheShapeTheSchedulerWrites) {
  std::optional<nlohmann::json> i = ReadIntent(
      R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[{"name":"c","allocation":)"
      R"({"devices":{"results":[{"request":"gpu","driver":"d","pool":"n","device":"gpu-0"}]}}}]}]})");
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ((*i)["members"][0]["claims"][0]["allocation"]["devices"]["results"][0]["device"],
            "gpu-0");
  EXPECT_TRUE(ReadIntent(R"({"members":[]})").has_value());
  std::optional<nlohmann::json> v =
      ReadIntent(R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"volumes":)"
                 R"([{"claim":"d","uid":"c1","volume":"pv-1"},{"claim":"e","uid":"c2"}]}]})");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ((*v)["members"][0]["volumes"][0]["volume"], "pv-1");
  std::optional<nlohmann::json> e =
      ReadIntent(R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"extended":)"
                 R"({"claim":"p-extended-resources-x7","mappings":[{"containerName":"c",)"
                 R"("resourceName":"nvidia.com/gpu","requestName":"container-0-request-0"}]}}]})");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ((*e)["members"][0]["extended"]["claim"], "p-extended-resources-x7");
}

TEST(GangIntentTest, RefusesAnythingElse) {
  for (
      const char* text : {
          "",
          "not json",
          "[]",
          R"({"members":[7]})",
          R"({"members":{"pod":"p"}})",
          R"({"members":[{"pod":"p","uid":"u","claims":[]}]})",           // no node
          R"({"members":[{"pod":"p","uid":"u","node":1,"claims":[]}]})",  // node a number
          R"({"members":[{"pod":"p","uid":"u","node":"n"}]})",            // no claims
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"volumes":"d"}]})",
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"volumes":[1]}]})",
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"volumes":[{"claim":"d"}]}]})",
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"volumes":[{"claim":"d","uid":"c","volume":2}]}]})",
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[{"name":"c"}]}]})",
          // an extended-resource claim without its mappings, or with a mapping missing a field
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"extended":{"claim":"x"}}]})",
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[],"extended":{"claim":"x","mappings":[{"containerName":"c"}]}}]})",
          // a result without its device; results not a list
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[{"name":"c","allocation":{"devices":{"results":[{"request":"gpu","driver":"d","pool":"n"}]}}}]}]})",
          R"({"members":[{"pod":"p","uid":"u","node":"n","claims":[{"name":"c","allocation":{"devices":{"results":"all"}}}]}]})",
      }) {
    EXPECT_FALSE(ReadIntent(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace gpuplane::kube
