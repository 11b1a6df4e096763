#include "sched/extended_resources.h"

#include <gtest/gtest.h>

#include "api/testing.h"

namespace gpuplane::sched {
namespace {

using api::testing::PodSpecOf;

api::DeviceClass Class(const std::string& name, const std::string& resource,
                       const std::string& created) {
  api::DeviceClass c;
  c.metadata.name = name;
  c.metadata.creation_timestamp = created;
  c.spec.extended_resource_name = resource;
  return c;
}

// "name:count" for each request, in order.
std::vector<std::string> Requests(const ExtendedRequests& r) {
  std::vector<std::string> out;
  for (const api::DeviceRequest& d : r.requests) {
    EXPECT_EQ(d.exactly->device_class_name, "gpu");
    out.push_back(d.name + ":" + std::to_string(*d.exactly->count));
  }
  return out;
}

std::vector<ExtendedRequestMapping> Mappings(const ExtendedRequests& r) { return r.mappings; }

const std::string kGpu = "nvidia.com/gpu";

TEST(ExtendedResourcesTest, ClassesServeTheirNamesTheNewestWinning) {
  api::DeviceClass old_gpu = Class("gpu", kGpu, "2026-01-01T00:00:00Z");
  api::DeviceClass new_gpu = Class("gpu-v2", kGpu, "2026-02-01T00:00:00Z");
  api::DeviceClass tie_b = Class("b", "example.com/x", "2026-01-01T00:00:00Z");
  api::DeviceClass tie_a = Class("a", "example.com/x", "2026-01-01T00:00:00Z");
  api::DeviceClass plain = Class("plain", "", "2026-01-01T00:00:00Z");
  ExtendedClasses m = ExtendedResourceClasses({&old_gpu, &new_gpu, &tie_b, &tie_a, &plain});
  EXPECT_EQ(m.at(kGpu), &new_gpu);
  EXPECT_EQ(m.at("example.com/x"), &tie_a);  // equal times: the lower name
  EXPECT_EQ(m.at("deviceclass.resource.kubernetes.io/gpu"), &old_gpu);
  EXPECT_EQ(m.at("deviceclass.resource.kubernetes.io/plain"), &plain);
  EXPECT_EQ(m.size(), 7u);
}

TEST(ExtendedResourcesTest, RequestsPerContainerNamedAsKubeSchedulerNamesThem) {
  api::DeviceClass gpu = Class("gpu", kGpu, "");
  ExtendedClasses classes = ExtendedResourceClasses({&gpu});
  // The request's index is the resource's among the container's sorted request names.
  ExtendedRequests r = ExtendedRequestsOf(
      PodSpecOf("  containers:\n"
                "  - {name: a, resources: {requests: {cpu: '1', nvidia.com/gpu: '2'}}}\n"
                "  - {name: b, resources: {limits: {nvidia.com/gpu: '1'}}}\n"
                "  - {name: c, resources: {requests: {cpu: '1'}}}\n"),
      {kGpu}, classes);
  EXPECT_EQ(Requests(r),
            (std::vector<std::string>{"container-0-request-1:2", "container-1-request-0:1"}));
  EXPECT_EQ(Mappings(r),
            (std::vector<ExtendedRequestMapping>{{"a", kGpu, "container-0-request-1"},
                                                 {"b", kGpu, "container-1-request-0"}}));
}

TEST(ExtendedResourcesTest, InitContainersUseTheDevicesOfLongLivedContainers) {
  api::DeviceClass gpu = Class("gpu", kGpu, "");
  ExtendedClasses classes = ExtendedResourceClasses({&gpu});
  // The sidecar (index 1) and the container (2) each ask for one; the init container's two are
  // theirs.
  ExtendedRequests shared = ExtendedRequestsOf(
      PodSpecOf(
          "  initContainers:\n"
          "  - {name: i, resources: {requests: {nvidia.com/gpu: '2'}}}\n"
          "  - {name: s, restartPolicy: Always, resources: {requests: {nvidia.com/gpu: '1'}}}\n"
          "  containers:\n"
          "  - {name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}}}\n"),
      {kGpu}, classes);
  EXPECT_EQ(Requests(shared),
            (std::vector<std::string>{"container-1-request-0:1", "container-2-request-1:1"}));
  EXPECT_EQ(Mappings(shared),
            (std::vector<ExtendedRequestMapping>{{"s", kGpu, "container-1-request-0"},
                                                 {"c", kGpu, "container-2-request-1"},
                                                 {"i", kGpu, "container-1-request-0"},
                                                 {"i", kGpu, "container-2-request-1"}}));
  // Two init containers needing more than the container has: the larger extra request serves
  // both.
  ExtendedRequests extra =
      ExtendedRequestsOf(PodSpecOf("  initContainers:\n"
                                   "  - {name: i0, resources: {requests: {nvidia.com/gpu: '2'}}}\n"
                                   "  - {name: i1, resources: {requests: {nvidia.com/gpu: '3'}}}\n"
                                   "  containers:\n"
                                   "  - {name: c, resources: {requests: {nvidia.com/gpu: '1'}}}\n"),
                         {kGpu}, classes);
  EXPECT_EQ(Requests(extra),
            (std::vector<std::string>{"container-1-request-0:2", "container-2-request-0:1"}));
  EXPECT_EQ(Mappings(extra),
            (std::vector<ExtendedRequestMapping>{{"c", kGpu, "container-2-request-0"},
                                                 {"i0", kGpu, "container-2-request-0"},
                                                 {"i0", kGpu, "container-1-request-0"},
                                                 {"i1", kGpu, "container-2-request-0"},
                                                 {"i1", kGpu, "container-1-request-0"}}));
}

TEST(ExtendedResourcesTest, ANodeAdvertisingTheResourceServesItByCount) {
  PodInfo p;
  p.extended_resources = {kGpu};
  p.other_milli = {{kGpu, 1000}, {"example.com/x", 1000}};
  p.other_milli_dra = {{"example.com/x", 1000}};
  ClaimUse extended{"t/p-extended-resources-", {}, false, "", true};
  ClaimUse other{"t/c", {}, false, "", false};
  NodeFacts plugin, dra, unknown;
  plugin.has_node = dra.has_node = true;
  plugin.other_allocatable[kGpu] = 8000;
  dra.other_allocatable[kGpu] = 0;  // listed as 0: served through DRA, as kube delegates it
  EXPECT_TRUE(ByDevicePlugin(p, plugin));
  EXPECT_FALSE(ByDevicePlugin(p, dra));
  EXPECT_FALSE(ByDevicePlugin(p, unknown));
  EXPECT_EQ(&OtherOn(p, plugin), &p.other_milli);
  EXPECT_EQ(&OtherOn(p, dra), &p.other_milli_dra);
  EXPECT_FALSE(UsesClaimOn(p, extended, plugin));
  EXPECT_TRUE(UsesClaimOn(p, extended, dra));
  EXPECT_TRUE(UsesClaimOn(p, other, plugin));
  PodInfo plain;
  plain.other_milli = {{kGpu, 1000}};
  EXPECT_EQ(&OtherOn(plain, dra), &plain.other_milli);
}

}  // namespace
}  // namespace gpuplane::sched
