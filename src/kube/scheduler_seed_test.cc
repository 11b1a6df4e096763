// The live scheduler against a real control plane: the seed scenarios as the offline pass
// places them, slices of missing nodes, an API server restart.
#include "kube/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/loader.h"
#include "api/object.h"
#include "api/storage_types.h"
#include "api/writer.h"
#include "kube/json_field.h"
#include "kube/plane_testing.h"
#include "kube/queue_usage.h"
#include "kube/rest_config.h"
#include "kube/scheduler_metrics.h"
#include "kube/writer.h"
#include "sched/pass.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"
#include "sched/status.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

// The REST collection of an object as api encodes it (cluster-scoped kinds, or in `ns`).
std::string Collection(const json& obj, const std::string& ns) {
  std::string api_version = obj.value("apiVersion", "");
  std::string kind = obj.value("kind", "");
  std::string plural = absl::AsciiStrToLower(kind) + (kind.ends_with("s") ? "es" : "s");
  std::string base =
      api_version.find('/') == std::string::npos ? "/api/" + api_version : "/apis/" + api_version;
  bool cluster = kind == "Node" || kind == "DeviceClass" || kind == "ResourceSlice";
  return cluster ? util::Cat(base, "/", plural) : util::Cat(base, "/namespaces/", ns, "/", plural);
}

std::vector<api::SourcedObject> LoadFiles(const std::string& path) {
  absl::StatusOr<api::LoadResult> r = api::LoadPaths({util::Cat(GPUPLANE_SOURCE_DIR, "/", path)});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(r->objects) : std::vector<api::SourcedObject>{};
}

json Encoded(const api::Object& o) { return json::parse(api::ToJson(api::EncodeObject(o))); }

// The three seed scenarios on the example cluster (examples/cluster: H100, H200, B200, T4, an
// A100 with dynamic MIG), each a pod with a claim from the example template: the live
// scheduler binds each to the node the offline pass (`gpuplane schedule` on the same files)
// picks, with as many devices.
TEST_F(SchedulerPlaneTest, SeedScenariosLandWhereTheOfflinePassPutsThem) {
  std::vector<api::SourcedObject> cluster = LoadFiles("examples/cluster");
  ASSERT_FALSE(cluster.empty());
  for (const api::SourcedObject& o : cluster) {
    json obj = Encoded(o.object);
    absl::StatusOr<Response> r = client_->Do("POST", Collection(obj, ""), obj.dump());
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->status == 201 || r->status == 409) << o.file << ": " << StatusMessage(*r);
  }
  Start();
  for (const char* seed :
       {"h100-or-better-40gi", "small-mig-else-medium-else-full", "eight-gpus-one-nvlink-domain"}) {
    std::vector<api::SourcedObject> files =
        LoadFiles(util::Cat("examples/workloads/", seed, ".yaml"));
    ASSERT_EQ(files.size(), 1u) << seed;
    json tmpl = Encoded(files[0].object);
    tmpl["metadata"]["namespace"] = ns_;
    Create(Collection(tmpl, ns_), tmpl);
    std::string pod = util::Cat("seed-", seed).substr(0, 60);
    Pod(pod, {{"name", "gpu"}, {"resourceClaimTemplateName", seed}});

    // The offline pass over the same objects.
    json pod_obj = Get(PodPath(ns_, pod));
    pod_obj["status"] = json::object();
    api::Loader loader;
    loader.AddText(tmpl.dump(), "template.json", api::Format::kJson);
    loader.AddText(pod_obj.dump(), "pod.json", api::Format::kJson);
    std::vector<api::SourcedObject> work = loader.Finish().objects;
    absl::StatusOr<sched::PassResult> offline =
        sched::RunPass(LoadFiles("examples/cluster"), work, {});
    ASSERT_TRUE(offline.ok()) << offline.status();
    ASSERT_EQ(offline->decisions.size(), 1u);
    const sched::Decision& want = offline->decisions[0];
    ASSERT_TRUE(want.status.ok()) << seed << ": " << sched::Render(want.status);

    ASSERT_TRUE(Eventually([&] { return !NodeOf(pod).empty(); })) << seed << ": " << status_;
    EXPECT_EQ(NodeOf(pod), offline->snapshot->inventory().nodes()[want.node].name) << seed;
    json live = Get(PodPath(ns_, pod));
    std::string made = live["status"]["resourceClaimStatuses"][0]["resourceClaimName"];
    json claim = Get(ClaimPath(ns_, made));
    EXPECT_EQ(claim["status"]["allocation"]["devices"]["results"].size(),
              want.claims[0].second.devices.results.size())
        << seed;
    // Free the devices for the next scenario, as the pod ending would.
    Writer w(*client_);
    ASSERT_TRUE(w.DeletePod({ns_, pod, live["metadata"]["uid"]}).ok());
    ASSERT_TRUE(w.ReleaseClaim(ns_, made, live["metadata"]["uid"]).ok());
  }
}

// A ResourceSlice for a node that does not exist offers nothing: the pod goes to the real node,
// and a second pod waits (PodScheduled=False) rather than being bound to the missing node.
TEST_F(SchedulerPlaneTest, ASliceForAMissingNodeIsNotUsed) {
  std::string real = Node("real", "H100", 1);
  Create("/apis/resource.k8s.io/v1/resourceslices",
         {{"metadata", {{"name", util::Cat("ghost-", id_)}}},
          {"spec",
           {{"driver", cls_},
            {"nodeName", util::Cat("ghost-", id_)},
            {"pool",
             {{"name", util::Cat("ghost-", id_)}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", json::array({{{"name", "gpu-0"}}, {{"name", "gpu-1"}}})}}}});
  // Devices that name their nodes one by one: the one on a missing node is not offered, its
  // sibling on the real node is (the scheduler passes a trimmed copy of the slice).
  Create("/apis/resource.k8s.io/v1/resourceslices",
         {{"metadata", {{"name", util::Cat("mixed-", id_)}}},
          {"spec",
           {{"driver", cls_},
            {"perDeviceNodeSelection", true},
            {"pool",
             {{"name", util::Cat("mixed-", id_)}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices",
             json::array({{{"name", "gpu-0"}, {"nodeName", real}},
                          {{"name", "gpu-1"}, {"nodeName", util::Cat("ghost-", id_)}}})}}}});
  const std::vector<std::string> pods = {"one", "two", "three"};
  for (const std::string& name : pods) {
    Claim(name, 1);
    Pod(name, {{"name", "gpu"}, {"resourceClaimName", name}});
  }
  Start();
  auto bound = [&] {
    int n = 0;
    for (const std::string& name : pods) n += NodeOf(name).empty() ? 0 : 1;
    return n;
  };
  auto refused = [&] {
    for (const std::string& name : pods) {
      if (NodeOf(name).empty() && Condition(name, "PodScheduled").is_object()) return true;
    }
    return false;
  };
  ASSERT_TRUE(Eventually([&] { return bound() == 2 && refused(); })) << status_;
  std::multiset<std::string> nodes;
  for (const std::string& name : pods) nodes.insert(NodeOf(name));
  EXPECT_EQ(nodes, (std::multiset<std::string>{real, real, ""}));
}

// The API server restarted while the scheduler runs: its watches resume (or list again), and
// pods created afterwards are bound to the devices still free, never to ones the cache had
// not yet seen taken.
TEST_F(SchedulerPlaneTest, ResumesAfterAnApiServerRestartWithoutDoubleAllocation) {
  Node("n", "H100", 3);
  Claim("before", 1);
  Pod("before", {{"name", "gpu"}, {"resourceClaimName", "before"}});
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("before").empty(); })) << status_;
  ASSERT_TRUE(RestartApiServer(dir_).ok());
  for (const char* name : {"after-1", "after-2", "after-3"}) {
    Claim(name, 1);
    Pod(name, {{"name", "gpu"}, {"resourceClaimName", name}});
  }
  ASSERT_TRUE(Eventually([&] {
    return !NodeOf("after-1").empty() && !NodeOf("after-2").empty() &&
           Condition("after-3", "PodScheduled").is_object();
  })) << status_;
  EXPECT_EQ(NodeOf("after-3"), "");                              // three devices, four claims
  EXPECT_EQ(GangViolation(), "");                                // no device in two claims
  absl::Status caught_up = AwaitClaimController(*client_, ns_);  // for the tests after this one
  EXPECT_TRUE(caught_up.ok()) << caught_up;
}

}  // namespace
}  // namespace gpuplane::kube
