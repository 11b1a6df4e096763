#include "kube/writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "api/resource_types.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

TEST(WriterTest, AllocationJsonIsTheApisShape) {
  api::AllocationResult a;
  a.devices.results.push_back({.request = "gpu", .driver = "d", .pool = "p", .device = "gpu-0"});
  json j = AllocationJson(a);
  ASSERT_TRUE(j.contains("devices")) << j.dump();
  const json& result = j["devices"]["results"][0];
  EXPECT_EQ(result.value("device", ""), "gpu-0");
  EXPECT_EQ(result.value("request", ""), "gpu");
}

}  // namespace
}  // namespace gpuplane::kube
