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

// A pod spec's part that pins it to `node` by required node affinity (matchFields on
// metadata.name).
json PinnedTo(const std::string& node) {
  json on = {{"key", "metadata.name"}, {"operator", "In"}, {"values", json::array({node})}};
  json terms = json::array({{{"matchFields", json::array({on})}}});
  return {
      {"affinity",
       {{"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

TEST(SchedulerMetricsTest, RendersCountersHistogramAndGauges) {
  SchedulerMetrics m;
  m.Attempt("scheduled");
  m.Attempt("scheduled");
  m.Latency(0.3);
  m.Latency(1000);
  m.SetPending({{"Unschedulable/Devices", 2}}, 1);
  m.SetPending({{"Unresolvable/Claims", 1}}, 0);
  std::string text = m.Render();
  EXPECT_NE(text.find("gpuplane_scheduler_attempts_total{result=\"scheduled\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_pod_scheduling_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("le=\"+Inf\"} 2"), std::string::npos);
  // A reason seen before drops to 0 rather than vanishing (alerts see it resolve).
  EXPECT_NE(text.find("gpuplane_scheduler_pending_pods{reason=\"Unschedulable/Devices\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_pending_pods{reason=\"Unresolvable/Claims\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplane_scheduler_gangs_waiting 0"), std::string::npos);
  m.SetQueues({{"team-a", 8}}, {{"team-a", 3600.5}});
  m.SetQueues({{"team-b", 2}}, {});  // a queue gone is gone; no past use without a half-life
  text = m.Render();
  EXPECT_EQ(text.find("gpuplane_queue_devices{queue=\"team-a\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("gpuplane_queue_devices{queue=\"team-b\"} 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpuplane_queue_past_use_device_seconds{"), std::string::npos) << text;
  m.SetQueues({{"team-a", 8}}, {{"team-a", 3600.5}});
  EXPECT_NE(m.Render().find("gpuplane_queue_past_use_device_seconds{queue=\"team-a\"} 3600.5"),
            std::string::npos);
}

TEST(WriterTest, AllocationJsonIsTheApisShape) {
  api::AllocationResult a;
  a.devices.results.push_back({.request = "gpu", .driver = "d", .pool = "p", .device = "gpu-0"});
  json j = AllocationJson(a);
  ASSERT_TRUE(j.contains("devices")) << j.dump();
  EXPECT_EQ(j["devices"]["results"][0]["device"], "gpu-0");
  EXPECT_EQ(j["devices"]["results"][0]["request"], "gpu");
}

// The first seed scenario, with a claim from a template: an H100 with at least 60 GiB on a
// cluster with A100s too; a pod that cannot fit says why; a claim whose CEL fails (the API
// server refuses syntax errors when a claim is created, so the failure here is at run time:
// an attribute no device has) gets its condition while the others are served.
TEST_F(SchedulerPlaneTest, BindsClaimsFromTemplatesAndExplainsThePodsItCannotPlace) {
  std::string a100 = Node("a", "A100", 2);
  std::string h100 = Node("h", "H100", 2);
  std::string big = "device.capacity[\"" + cls_ + "\"].memory.compareTo(quantity(\"60Gi\")) >= 0";
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaimtemplates",
         {{"metadata", {{"name", "big-gpu"}}}, {"spec", {{"spec", ClaimSpec(1, big)}}}});
  Pod("trainer", {{"name", "gpu"}, {"resourceClaimTemplateName", "big-gpu"}});
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaims",
         {{"metadata", {{"name", "three"}}}, {"spec", ClaimSpec(3, "")}});
  Pod("too-big", {{"name", "gpu"}, {"resourceClaimName", "three"}});
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaims",
         {{"metadata", {{"name", "typo"}}},
          {"spec", ClaimSpec(1, "device.attributes[\"" + cls_ + "\"].nosuch == \"x\"")}});
  Pod("typo", {{"name", "gpu"}, {"resourceClaimName", "typo"}});
  Start();

  ASSERT_TRUE(Eventually([&] { return !NodeOf("trainer").empty(); })) << status_;
  EXPECT_EQ(NodeOf("trainer"), h100);
  json pod = Get(PodPath(ns_, "trainer"));
  std::string claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"];
  json claim = Get(ClaimPath(ns_, claim_name));
  ASSERT_TRUE(claim["status"].contains("allocation")) << claim.dump();
  EXPECT_EQ(claim["status"]["allocation"]["devices"]["results"][0]["pool"], h100);
  EXPECT_EQ(claim["status"]["reservedFor"][0]["uid"], pod["metadata"]["uid"]);
  EXPECT_EQ(claim["metadata"]["finalizers"][0], kClaimFinalizer);

  for (const char* name : {"too-big", "typo"}) {
    ASSERT_TRUE(Eventually([&] { return Condition(name, "PodScheduled").is_object(); })) << name;
    json c = Condition(name, "PodScheduled");
    EXPECT_EQ(c["status"], "False") << name;
    EXPECT_EQ(c["reason"], "Unschedulable") << name;
    EXPECT_EQ(NodeOf(name), "") << name;
  }
  EXPECT_NE(Condition("too-big", "PodScheduled")["message"].get<std::string>().find("3"),
            std::string::npos);
  EXPECT_NE(Condition("typo", "PodScheduled")["message"].get<std::string>().find("nosuch"),
            std::string::npos)
      << Condition("typo", "PodScheduled").dump();
  json events = Get("/api/v1/namespaces/" + ns_ + "/events");
  std::set<std::string> failed;
  for (const json& e : events["items"]) {
    if (e.value("reason", "") == "FailedScheduling") failed.insert(e["involvedObject"]["name"]);
  }
  EXPECT_EQ(failed, (std::set<std::string>{"too-big", "typo"}));
  (void)a100;
}

// Extended resources backed by DRA: a pod asking `example.com/gpu-<id>` (a DeviceClass's
// extendedResourceName) gets a claim made for it on the node publishing devices (owned by the
// pod, annotated, allocated and reserved for it, named in its status with the request
// mapping) and counts against the allocatable of a node whose device plugin advertises the
// resource; a pod for which neither has room waits, and gets the devices once the first pod's
// claim is gone with it.
TEST_F(SchedulerPlaneTest, ExtendedResourcesBackedByDraGetAClaimMadeForThem) {
  const std::string resource = ExtendedResourceClass();
  std::string dra = Node("dra", "H100", 2);
  std::string plugin = "sched-" + id_ + "-plugin";
  Create("/api/v1/nodes",
         {{"metadata", {{"name", plugin}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {resource, "2"}}}}}});
  ExtendedResourcePod("one", 1);
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("one").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("one"), dra);
  json one = Get(PodPath(ns_, "one"));
  const json& ext = one["status"]["extendedResourceClaimStatus"];
  ASSERT_TRUE(ext.is_object()) << one["status"].dump();
  EXPECT_EQ(ext["requestMappings"], json::array({{{"containerName", "c"},
                                                  {"resourceName", resource},
                                                  {"requestName", "container-0-request-0"}}}));
  std::string made = ext["resourceClaimName"];
  EXPECT_EQ(made.rfind("one-extended-resources-", 0), 0u) << made;
  json claim = Get(ClaimPath(ns_, made));
  EXPECT_EQ(claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"],
            "true");
  EXPECT_EQ(claim["metadata"]["ownerReferences"][0]["uid"], one["metadata"]["uid"]);
  EXPECT_EQ(claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"], "ext-" + id_);
  ASSERT_TRUE(claim["status"].contains("allocation")) << claim.dump();
  EXPECT_EQ(claim["status"]["allocation"]["devices"]["results"][0]["pool"], dra);
  EXPECT_EQ(claim["status"]["reservedFor"][0]["uid"], one["metadata"]["uid"]);

  // Two GPUs: one is left on the DRA node, the plugin's node has two.
  ExtendedResourcePod("two", 2);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("two").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("two"), plugin);
  EXPECT_FALSE(Get(PodPath(ns_, "two"))["status"].contains("extendedResourceClaimStatus"));
  ExtendedResourcePod("three", 1);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("three").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("three"), dra);
  ExtendedResourcePod("four", 1);
  ASSERT_TRUE(Eventually([&] { return Condition("four", "PodScheduled").is_object(); }));
  EXPECT_EQ(NodeOf("four"), "");
  // None for two (by count) or four (waiting).
  EXPECT_EQ(List("resourceclaims").size(), 2u) << Describe();

  Writer w(*client_);
  ASSERT_TRUE(w.DeletePod({ns_, "one", one["metadata"]["uid"]}).ok());
  ASSERT_TRUE(Eventually([&] { return !NodeOf("four").empty(); }, 90)) << status_ << Describe();
  EXPECT_EQ(NodeOf("four"), dra);
}

// Required node affinity picks the node; pods asking to be apart (required anti-affinity on a
// node label, as the API server stores it) go to different nodes though both fit the A100 node
// (least worth first), and a third, for which neither node is left, waits with the reason; a
// pod preferring the H100's rack goes there though the A100 has a GPU left.
TEST_F(SchedulerPlaneTest, RequiredNodeAffinityAndPodAntiAffinityAreFollowed) {
  std::string a100 = Node("a", "A100", 2, {{"rack", "r-a"}});
  std::string h100 = Node("h", "H100", 3, {{"rack", "r-h"}});
  const json one = OneGpuTemplate();
  Pod("pinned", one, PinnedTo(h100));
  json apart = {{"labelSelector", {{"matchLabels", {{"app", "apart"}}}}}, {"topologyKey", "rack"}};
  for (const char* name : {"apart-0", "apart-1", "apart-2"}) {
    Pod(name, one,
        {{"affinity",
          {{"podAntiAffinity",
            {{"requiredDuringSchedulingIgnoredDuringExecution", json::array({apart})}}}}}},
        {{"app", "apart"}});
  }
  json rack_h = {{"key", "rack"}, {"operator", "In"}, {"values", json::array({"r-h"})}};
  json prefer = {{"weight", 50}, {"preference", {{"matchExpressions", json::array({rack_h})}}}};
  Pod("likes-h", one,
      {{"affinity",
        {{"nodeAffinity",
          {{"preferredDuringSchedulingIgnoredDuringExecution", json::array({prefer})}}}}}});
  Start();

  ASSERT_TRUE(Eventually([&] { return !NodeOf("pinned").empty(); })) << status_;
  EXPECT_EQ(NodeOf("pinned"), h100);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("likes-h").empty(); })) << status_;
  EXPECT_EQ(NodeOf("likes-h"), h100);
  ASSERT_TRUE(Eventually([&] {
    int bound = 0;
    for (const char* name : {"apart-0", "apart-1", "apart-2"}) bound += !NodeOf(name).empty();
    return bound == 2;
  })) << status_;
  std::set<std::string> nodes;
  std::string waiting;
  for (const char* name : {"apart-0", "apart-1", "apart-2"}) {
    if (NodeOf(name).empty())
      waiting = name;
    else
      nodes.insert(NodeOf(name));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{a100, h100}));
  ASSERT_TRUE(Eventually([&] { return Condition(waiting, "PodScheduled").is_object(); }));
  json c = Condition(waiting, "PodScheduled");
  EXPECT_EQ(c["status"], "False");
  EXPECT_NE(c["message"].get<std::string>().find("anti-affinity"), std::string::npos) << c;
  EXPECT_EQ(NodeOf(waiting), "") << "a node was left with a free GPU, but not for this pod";
}

// A pod affinity term's namespaceSelector reads the Namespace's labels from the API, and a
// label added later places the pod waiting for it: `follow` must share the rack of `anchor`
// (pinned to the H100 node) with a term reaching namespaces labelled team-<id>=ml. Until the
// test's namespace has that label, no pod matches (and `follow` is not an anchor itself), so it
// waits saying why; then it goes to the H100, not the A100 node it would go to by cost.
TEST_F(SchedulerPlaneTest, NamespaceSelectorsReadTheNamespacesLabels) {
  Node("a", "A100", 2, {{"rack", "r-a"}});
  std::string h100 = Node("h", "H100", 2, {{"rack", "r-h"}});
  const json one = OneGpuTemplate();
  Pod("anchor", one, PinnedTo(h100), {{"app", "anchor"}});
  const std::string team = "team-" + id_;
  json near = {{"labelSelector", {{"matchLabels", {{"app", "anchor"}}}}},
               {"namespaceSelector", {{"matchLabels", {{team, "ml"}}}}},
               {"topologyKey", "rack"}};
  Pod("follow", one,
      {{"affinity",
        {{"podAffinity",
          {{"requiredDuringSchedulingIgnoredDuringExecution", json::array({near})}}}}}},
      {{"app", "follow"}});
  Start();

  ASSERT_TRUE(Eventually([&] { return !NodeOf("anchor").empty(); })) << status_;
  ASSERT_TRUE(Eventually([&] { return Condition("follow", "PodScheduled").is_object(); }))
      << status_;
  json c = Condition("follow", "PodScheduled");
  EXPECT_EQ(c["status"], "False");
  EXPECT_NE(c["message"].get<std::string>().find("pod affinity"), std::string::npos) << c;
  EXPECT_EQ(NodeOf("follow"), "");
  absl::StatusOr<Response> r = client_->Do("PATCH", "/api/v1/namespaces/" + ns_,
                                           json{{"metadata", {{"labels", {{team, "ml"}}}}}}.dump(),
                                           "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] { return !NodeOf("follow").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("follow"), h100);
}

// A pod's volumes decide its node: a claim bound to a local volume keeps the pod on that
// volume's node; a WaitForFirstConsumer claim is given the chosen node
// (volume.kubernetes.io/selected-node, for its provisioner) before the pod is bound, within
// its class's allowed topologies, or, in a class without a provisioner, an Available volume
// reserved for it (spec.claimRef); a pod naming a claim that does not exist waits, saying so,
// and is placed once the claim appears; a ReadWriteOncePod claim serves one pod at a time; the
// node's CSINode limits the volumes of a CSI driver it may attach. Without the volumes, every pod
// would go to the A100 node (least worth first).
TEST_F(SchedulerPlaneTest, VolumesDecideTheNodeAndAreProvisionedForIt) {
  Node("a", "A100", 4, {{"zone", "z-a"}});
  std::string h100 = Node("h", "H100", 4, {{"zone", "z-h"}});
  const json one = OneGpuTemplate();
  const std::string pv = "local-" + id_, sc = "wffc-" + id_, nvme = "nvme-" + id_;
  const json in_zone_h = {
      {"matchExpressions",
       json::array({{{"key", "zone"}, {"operator", "In"}, {"values", json::array({"z-h"})}}})}};
  // A PersistentVolume of one access mode with its source and, unless null, a node affinity.
  auto volume = [&](const std::string& name, const std::string& storage, const std::string& mode,
                    const std::string& cls, const json& source, const json& term) {
    json spec = {{"capacity", {{"storage", storage}}},
                 {"accessModes", json::array({mode})},
                 {"storageClassName", cls}};
    spec.update(source);
    if (!term.is_null()) {
      spec["nodeAffinity"] = {{"required", {{"nodeSelectorTerms", json::array({term})}}}};
    }
    Create("/api/v1/persistentvolumes", {{"metadata", {{"name", name}}}, {"spec", spec}});
  };
  volume(pv, "1Gi", "ReadWriteOnce", "", {{"local", {{"path", "/mnt/nvme0"}}}}, in_zone_h);
  // A local volume for a class without a provisioner, Available (the plane runs no
  // PersistentVolume controller to say so).
  volume(nvme, "10Gi", "ReadWriteOnce", nvme, {{"local", {{"path", "/mnt/nvme1"}}}}, in_zone_h);
  absl::StatusOr<Response> available = client_->Do(
      "PATCH", "/api/v1/persistentvolumes/" + nvme + "/status",
      json{{"status", {{"phase", "Available"}}}}.dump(), "application/merge-patch+json");
  ASSERT_TRUE(available.ok() && available->ok());
  Create("/apis/storage.k8s.io/v1/storageclasses", {{"metadata", {{"name", nvme}}},
                                                    {"provisioner", "kubernetes.io/no-provisioner"},
                                                    {"volumeBindingMode", "WaitForFirstConsumer"}});
  Create("/apis/storage.k8s.io/v1/storageclasses",
         {{"metadata", {{"name", sc}}},
          {"provisioner", "csi.example.com"},
          {"volumeBindingMode", "WaitForFirstConsumer"},
          {"allowedTopologies",
           json::array({{{"matchLabelExpressions",
                          json::array({{{"key", "zone"}, {"values", json::array({"z-h"})}}})}}})}});
  auto claim = [&](const std::string& name, const std::string& cls, const std::string& bound,
                   const std::string& mode = "ReadWriteOnce") {
    json spec = {{"accessModes", json::array({mode})},
                 {"storageClassName", cls},
                 {"resources", {{"requests", {{"storage", "1Gi"}}}}}};
    if (!bound.empty()) spec["volumeName"] = bound;
    Create("/api/v1/namespaces/" + ns_ + "/persistentvolumeclaims",
           {{"metadata", {{"name", name}}}, {"spec", spec}});
  };
  auto uses = [](const std::string& claim_name) {
    return json{
        {"volumes", json::array({{{"name", "data"},
                                  {"persistentVolumeClaim", {{"claimName", claim_name}}}}})}};
  };
  auto selected = [&](const std::string& claim_name) -> std::string {
    json c = Get(PersistentVolumeClaimPath(ns_, claim_name));
    return std::string(
        Str(Field(Field(c, "metadata"), "annotations"), api::kSelectedNodeAnnotation));
  };
  // The H100 node may attach two volumes of the class's CSI driver (what its CSINode says):
  // "scratch" and "later" below.
  Create("/apis/storage.k8s.io/v1/csinodes",
         {{"metadata", {{"name", h100}}},
          {"spec",
           {{"drivers", json::array({{{"name", "csi.example.com"},
                                      {"nodeID", h100},
                                      {"allocatable", {{"count", 2}}}}})}}}});
  claim("data", "", pv);
  claim("scratch", sc, "");
  claim("nvme", nvme, "");
  Pod("on-volume", one, uses("data"));
  Pod("provisioned", one, uses("scratch"));
  Pod("local", one, uses("nvme"));
  Pod("later", one, uses("later"));
  Start();

  ASSERT_TRUE(Eventually([&] { return !NodeOf("on-volume").empty(); })) << status_;
  EXPECT_EQ(NodeOf("on-volume"), h100);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("provisioned").empty(); })) << status_;
  EXPECT_EQ(NodeOf("provisioned"), h100);
  EXPECT_EQ(selected("scratch"), h100);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("local").empty(); })) << status_;
  EXPECT_EQ(NodeOf("local"), h100);
  json reserved = Get("/api/v1/persistentvolumes/" + nvme);
  EXPECT_EQ(Str(Field(Field(reserved, "spec"), "claimRef"), "name"), "nvme") << reserved;
  EXPECT_EQ(Str(Field(Field(reserved, "spec"), "claimRef"), "uid"),
            Str(Field(Get(PersistentVolumeClaimPath(ns_, "nvme")), "metadata"), "uid"));
  ASSERT_TRUE(Eventually([&] { return Condition("later", "PodScheduled").is_object(); }));
  json c = Condition("later", "PodScheduled");
  EXPECT_EQ(c["status"], "False");
  EXPECT_NE(c.value("message", std::string())
                .find("PersistentVolumeClaim " + ns_ + "/later, which does not exist"),
            std::string::npos)
      << c;
  claim("later", sc, "");
  ASSERT_TRUE(Eventually([&] { return !NodeOf("later").empty(); })) << status_;
  EXPECT_EQ(NodeOf("later"), h100);
  EXPECT_EQ(selected("later"), h100);

  // A ReadWriteOncePod claim serves one pod at a time: the second pod waits, naming the rule,
  // and is bound once the first is deleted.
  const std::string solo = "solo-" + id_;
  volume(solo, "1Gi", "ReadWriteOncePod", "",
         {{"nfs", {{"server", "nfs.example.com"}, {"path", "/solo"}}}}, nullptr);
  claim("solo", "", solo, "ReadWriteOncePod");
  Pod("solo-1", one, uses("solo"));
  ASSERT_TRUE(Eventually([&] { return !NodeOf("solo-1").empty(); })) << status_;
  Pod("solo-2", one, uses("solo"));
  ASSERT_TRUE(Eventually([&] { return Condition("solo-2", "PodScheduled").is_object(); }));
  c = Condition("solo-2", "PodScheduled");
  EXPECT_NE(c.value("message", std::string()).find("ReadWriteOncePod"), std::string::npos) << c;
  EXPECT_EQ(NodeOf("solo-2"), "");
  (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_ + "/pods/solo-1?gracePeriodSeconds=0");
  ASSERT_TRUE(Eventually([&] { return !NodeOf("solo-2").empty(); })) << status_ << Describe();

  // A third volume of the driver waits for one of the two to go (its pod asks no GPU: the
  // node's four are taken), naming the CSINode limit; a pod using an attached one does not.
  const json no_gpu = {{"resourceClaims", json::array()},
                       {"containers", json::array({{{"name", "c"}, {"image", "pause"}}})}};
  auto no_gpu_using = [&](const std::string& claim_name) {
    json spec = no_gpu;
    spec.update(uses(claim_name));
    return spec;
  };
  claim("more", sc, "");
  Pod("more", one, no_gpu_using("more"));
  Pod("again", one, no_gpu_using("scratch"));
  ASSERT_TRUE(Eventually([&] { return !NodeOf("again").empty(); })) << status_;
  EXPECT_EQ(NodeOf("again"), h100);
  ASSERT_TRUE(Eventually([&] { return Condition("more", "PodScheduled").is_object(); }));
  c = Condition("more", "PodScheduled");
  EXPECT_NE(c.value("message", std::string()).find("as their CSINode allows"), std::string::npos)
      << c;
  EXPECT_EQ(NodeOf("more"), "");
  (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_ + "/pods/later?gracePeriodSeconds=0");
  ASSERT_TRUE(Eventually([&] { return !NodeOf("more").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("more"), h100);

  // A volume a VolumeAttachment keeps attached counts whether or not a pod uses it (a volume
  // still being detached): "fresh", a new volume, waits while "attached" is attached, after
  // "more" is gone too ("probe", bound, shows the pass saw that), and is bound once the
  // attachment is deleted.
  const std::string attached = "attached-" + id_;
  volume(attached, "1Gi", "ReadWriteOnce", "",
         {{"csi", {{"driver", "csi.example.com"}, {"volumeHandle", attached}}}}, nullptr);
  const std::string attachment = "/apis/storage.k8s.io/v1/volumeattachments/" + attached;
  Create("/apis/storage.k8s.io/v1/volumeattachments",
         {{"metadata", {{"name", attached}}},
          {"spec",
           {{"attacher", "csi.example.com"},
            {"nodeName", h100},
            {"source", {{"persistentVolumeName", attached}}}}}});
  claim("fresh", sc, "");
  Pod("fresh", one, no_gpu_using("fresh"));
  ASSERT_TRUE(Eventually([&] { return Condition("fresh", "PodScheduled").is_object(); }));
  (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_ + "/pods/more?gracePeriodSeconds=0");
  Pod("probe", one, no_gpu);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("probe").empty(); })) << status_;
  c = Condition("fresh", "PodScheduled");
  EXPECT_NE(c.value("message", std::string()).find("as their CSINode allows"), std::string::npos)
      << c;
  EXPECT_EQ(NodeOf("fresh"), "");
  (void)client_->Do("DELETE", attachment);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("fresh").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("fresh"), h100);
  (void)client_->Do("DELETE", "/apis/storage.k8s.io/v1/csinodes/" + h100);

  // A driver that publishes its free storage: a volume is provisioned only where a
  // CSIStorageCapacity of the class has room for it. 1Gi left in zone z-h: the 5Gi claim's pod
  // waits, naming the rule; the driver publishing 10Gi there lets it be bound.
  const std::string driver = "cap-" + id_ + ".example.com", cap_sc = "cap-" + id_;
  Create("/apis/storage.k8s.io/v1/csidrivers",
         {{"metadata", {{"name", driver}}}, {"spec", {{"storageCapacity", true}}}});
  Create("/apis/storage.k8s.io/v1/storageclasses", {{"metadata", {{"name", cap_sc}}},
                                                    {"provisioner", driver},
                                                    {"volumeBindingMode", "WaitForFirstConsumer"}});
  const std::string capacity_path =
      "/apis/storage.k8s.io/v1/namespaces/" + ns_ + "/csistoragecapacities";
  Create(capacity_path, {{"metadata", {{"name", "z-h"}}},
                         {"storageClassName", cap_sc},
                         {"nodeTopology", {{"matchLabels", {{"zone", "z-h"}}}}},
                         {"capacity", "1Gi"}});
  Create("/api/v1/namespaces/" + ns_ + "/persistentvolumeclaims",
         {{"metadata", {{"name", "big"}}},
          {"spec",
           {{"accessModes", json::array({"ReadWriteOnce"})},
            {"storageClassName", cap_sc},
            {"resources", {{"requests", {{"storage", "5Gi"}}}}}}}});
  Pod("big", one, no_gpu_using("big"));
  ASSERT_TRUE(Eventually([&] { return Condition("big", "PodScheduled").is_object(); }));
  c = Condition("big", "PodScheduled");
  EXPECT_NE(c.value("message", std::string()).find("CSIStorageCapacity"), std::string::npos) << c;
  EXPECT_EQ(NodeOf("big"), "");
  absl::StatusOr<Response> published =
      client_->Do("PATCH", capacity_path + "/z-h", json{{"capacity", "10Gi"}}.dump(),
                  "application/merge-patch+json");
  ASSERT_TRUE(published.ok() && published->ok());
  ASSERT_TRUE(Eventually([&] { return !NodeOf("big").empty(); })) << status_ << Describe();
  EXPECT_EQ(NodeOf("big"), h100);
  EXPECT_EQ(selected("big"), h100);
  (void)client_->Do("DELETE", capacity_path + "/z-h");
  (void)client_->Do("DELETE", "/apis/storage.k8s.io/v1/csidrivers/" + driver);

  // The plane runs no volume controllers: the protection finalizers are cleared by hand.
  const json no_finalizers = {{"metadata", {{"finalizers", nullptr}}}};
  for (const std::string& path :
       {PersistentVolumeClaimPath(ns_, "data"), PersistentVolumeClaimPath(ns_, "scratch"),
        PersistentVolumeClaimPath(ns_, "later"), PersistentVolumeClaimPath(ns_, "nvme"),
        PersistentVolumeClaimPath(ns_, "solo"), PersistentVolumeClaimPath(ns_, "more"),
        PersistentVolumeClaimPath(ns_, "big"), PersistentVolumeClaimPath(ns_, "fresh"),
        "/api/v1/persistentvolumes/" + attached, "/apis/storage.k8s.io/v1/storageclasses/" + cap_sc,
        "/api/v1/persistentvolumes/" + solo, "/api/v1/persistentvolumes/" + pv,
        "/api/v1/persistentvolumes/" + nvme, "/apis/storage.k8s.io/v1/storageclasses/" + sc,
        "/apis/storage.k8s.io/v1/storageclasses/" + nvme}) {
    (void)client_->Do("PATCH", path, no_finalizers.dump(), "application/merge-patch+json");
    (void)client_->Do("DELETE", path);
  }
}

// A Workload gang that fits is bound whole; one that cannot fit has no member bound and no
// claim allocated.
// `gpuplane explain --kubeconfig`: one pass as the scheduler would run it, nothing written;
// pods the pass does not place say why; the placement it explains is the one the scheduler
// then makes.
TEST_F(SchedulerPlaneTest, ExplainRunsTheSchedulersPassAndWritesNothing) {
  std::string node = Node("a", "H100", 2);
  Claim("two", 2);
  Claim("three", 3);
  Claim("gated-claim", 1);
  Pod("fits", {{"name", "gpu"}, {"resourceClaimName", "two"}});
  Pod("too-big", {{"name", "gpu"}, {"resourceClaimName", "three"}});
  Pod("gated", {{"name", "gpu"}, {"resourceClaimName", "gated-claim"}},
      {{"schedulingGates", json::array({{{"name", "example.com/quota"}}})}});
  Pod("no-template", {{"name", "gpu"}, {"resourceClaimTemplateName", "nosuch"}});
  Pod("elsewhere", {{"name", "gpu"}, {"resourceClaimName", "two"}},
      {{"schedulerName", "another-scheduler"}});
  // A slice the API server takes one object at a time but the checks across objects refuse
  // (a device consumes a counter set its pool does not define; another driver, so no claim
  // here could use it): it is named as a problem, and the pass goes on.
  const std::string bad = node + "-bad";
  Create(
      "/apis/resource.k8s.io/v1/resourceslices",
      {{"metadata", {{"name", bad}}},
       {"spec",
        {{"driver", "bad-" + cls_},
         {"nodeName", node},
         {"pool", {{"name", bad}, {"generation", 1}, {"resourceSliceCount", 1}}},
         {"devices",
          json::array({{{"name", "huge"},
                        {"consumesCounters",
                         json::array({{{"counterSet", "nosuch"},
                                       {"counters", {{"memory", {{"value", "1Gi"}}}}}}})}}})}}}});
  auto explain = [&](const std::string& pod) {
    Scheduler s(*client_, SchedulerOptions{.name = name_});
    return s.Explain(ns_ + "/" + pod, 30);
  };

  absl::StatusOr<Scheduler::Explained> fits = explain("fits");
  ASSERT_TRUE(fits.ok()) << fits.status();
  ASSERT_FALSE(fits->problems.empty());
  EXPECT_NE(fits->problems[0].find("ResourceSlice " + bad), std::string::npos)
      << absl::StrJoin(fits->problems, "\n");
  EXPECT_NE(fits->problems[0].find("counter set \"nosuch\" is not defined"), std::string::npos)
      << absl::StrJoin(fits->problems, "\n");
  ASSERT_GE(fits->index, 0);
  const sched::Decision& d = fits->pass->decisions[fits->index];
  ASSERT_TRUE(d.status.ok()) << sched::Render(d.status);
  EXPECT_EQ(fits->pass->snapshot->inventory().nodes()[d.node].name, node);
  absl::StatusOr<Scheduler::Explained> big = explain("too-big");
  ASSERT_TRUE(big.ok()) << big.status();
  ASSERT_GE(big->index, 0);
  EXPECT_FALSE(big->pass->decisions[big->index].status.ok());
  EXPECT_NE(sched::Render(big->pass->decisions[big->index].status).find("fewer than 3 devices"),
            std::string::npos)
      << sched::Render(big->pass->decisions[big->index].status);
  const std::pair<const char*, const char*> outside[] = {
      {"gated", "example.com/quota"},
      {"no-template", "\"gpu\" (template nosuch), which the resourceclaim controller"},
      {"elsewhere", "another-scheduler"}};
  for (const auto& [pod, says] : outside) {
    absl::StatusOr<Scheduler::Explained> e = explain(pod);
    ASSERT_TRUE(e.ok()) << pod << ": " << e.status();
    EXPECT_EQ(e->index, -1) << pod;
    EXPECT_FALSE(e->settled) << pod;
    EXPECT_NE(e->outside.find(says), std::string::npos) << pod << ": " << e->outside;
  }
  EXPECT_EQ(explain("nosuch").status().code(), absl::StatusCode::kNotFound);
  // Nothing was written: no binding, no allocation, no condition.
  EXPECT_EQ(NodeOf("fits"), "");
  EXPECT_FALSE(Get(ClaimPath(ns_, "two"))["status"].contains("allocation"));
  EXPECT_FALSE(Condition("too-big", "PodScheduled").is_object());

  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("fits").empty(); })) << status_;
  EXPECT_EQ(NodeOf("fits"), node);
  absl::StatusOr<Scheduler::Explained> bound = explain("fits");
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_TRUE(bound->settled);
  EXPECT_EQ(bound->outside, "bound to node " + node);
  (void)client_->Do("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + bad);
}

// A Workload gang of pods asking for extended resources: each member gets its claim and its pod
// status, on a node of its own; a gang too big for the cluster makes no claim at all.
TEST_F(SchedulerPlaneTest, AGangAskingExtendedResourcesIsBoundWholeWithItsClaims) {
  ExtendedResourceClass();
  Node("a", "H100", 2);
  Node("b", "H100", 2);
  for (auto [gang, gpus] : {std::pair<std::string, int>{"fits", 2}, {"too-big", 3}}) {
    Workload(gang, 2);
    for (int i = 0; i < 2; ++i) {
      ExtendedResourcePod(gang + "-" + std::to_string(i), gpus,
                          {{"workloadRef", {{"name", gang}, {"podGroup", "workers"}}}});
    }
  }
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("fits-0").empty() && !NodeOf("fits-1").empty(); }))
      << status_ << Describe();
  EXPECT_NE(NodeOf("fits-0"), NodeOf("fits-1"));
  for (const char* name : {"fits-0", "fits-1"}) {
    json pod = Get(PodPath(ns_, name));
    const json& ext = pod["status"]["extendedResourceClaimStatus"];
    ASSERT_TRUE(ext.is_object()) << name << ": " << pod["status"].dump();
    json claim = Get(ClaimPath(ns_, ext["resourceClaimName"]));
    EXPECT_EQ(claim["status"]["allocation"]["devices"]["results"].size(), 2u) << claim.dump();
    EXPECT_EQ(claim["status"]["reservedFor"][0]["uid"], pod["metadata"]["uid"]);
  }
  ASSERT_TRUE(Eventually([&] { return Condition("too-big-0", "PodScheduled").is_object(); }));
  EXPECT_EQ(NodeOf("too-big-0") + NodeOf("too-big-1"), "");
  EXPECT_EQ(List("resourceclaims").size(), 2u) << Describe();
  json w = Get("/apis/scheduling.k8s.io/v1alpha1/namespaces/" + ns_ + "/workloads/fits");
  EXPECT_FALSE(w["metadata"].value("annotations", json::object()).contains(kGangIntent));
}

TEST_F(SchedulerPlaneTest, WorkloadGangsAreBoundWholeOrNotAtAll) {
  Node("a", "H100", 2);
  Node("b", "H100", 2);
  const json one = OneGpuTemplate();
  for (auto [gang, size] : {std::pair<std::string, int>{"fits", 3}, {"too-big", 5}}) {
    Workload(gang, size);
    for (int i = 0; i < size; ++i) {
      Pod(gang + "-" + std::to_string(i), one,
          {{"workloadRef", {{"name", gang}, {"podGroup", "workers"}}}});
    }
  }
  // An intent not written by the scheduler (edited by hand) is removed without acting on it.
  Create("/apis/scheduling.k8s.io/v1alpha1/namespaces/" + ns_ + "/workloads",
         {{"metadata", {{"name", "edited"}, {"annotations", {{kGangIntent, "{\"members\":[7]}"}}}}},
          {"spec",
           {{"podGroups",
             json::array({{{"name", "workers"}, {"policy", {{"gang", {{"minCount", 1}}}}}}})}}}});
  Start();
  ASSERT_TRUE(Eventually([&] {
    json w = Get("/apis/scheduling.k8s.io/v1alpha1/namespaces/" + ns_ + "/workloads/edited");
    return !w["metadata"].value("annotations", json::object()).contains(kGangIntent);
  }));
  ASSERT_TRUE(Eventually([&] {
    for (int i = 0; i < 3; ++i) {
      if (NodeOf("fits-" + std::to_string(i)).empty()) return false;
    }
    return true;
  })) << status_;
  ASSERT_TRUE(Eventually([&] { return Condition("too-big-0", "PodScheduled").is_object(); }));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(NodeOf("too-big-" + std::to_string(i)), "");
  json claims = Get("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaims");
  int allocated = 0;
  for (const json& c : claims["items"]) {
    if (c.contains("status") && c["status"].contains("allocation")) ++allocated;
  }
  EXPECT_EQ(allocated, 3);
  json w = Get("/apis/scheduling.k8s.io/v1alpha1/namespaces/" + ns_ + "/workloads/fits");
  EXPECT_FALSE(w["metadata"].value("annotations", json::object()).contains(kGangIntent));
}

}  // namespace
}  // namespace gpuplane::kube

namespace gpuplane::kube {
namespace {

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

}  // namespace

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

}  // namespace gpuplane::kube

namespace gpuplane::kube {

// A scheduling.x-k8s.io PodGroup gang (its CRD installed first: the plane does not serve the
// kind otherwise) asking for one rack (`gpuplane.io/topology-required` on a node label): the
// four members land in the only rack with four free GPUs, and the intent is gone after.
TEST_F(SchedulerPlaneTest, APodGroupGangWithARequiredTopologyLandsInOneRack) {
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "podgroups.scheduling.x-k8s.io"}}},
      {"spec",
       {{"group", "scheduling.x-k8s.io"},
        {"scope", "Namespaced"},
        {"names",
         {{"plural", "podgroups"},
          {"singular", "podgroup"},
          {"kind", "PodGroup"},
          {"listKind", "PodGroupList"}}},
        {"versions", json::array({{{"name", "v1alpha1"},
                                   {"served", true},
                                   {"storage", true},
                                   {"schema",
                                    {{"openAPIV3Schema",
                                      {{"type", "object"},
                                       {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  absl::StatusOr<Response> r =
      client_->Do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump());
  ASSERT_TRUE(r.ok() && (r->status == 201 || r->status == 409)) << StatusMessage(*r);
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<Response> got = client_->Get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
    return got.ok() && got->ok();
  }));
  const std::string rack = "test.gpuplane.io/rack";
  Node("r1a", "H100", 2, {{rack, "r1"}});
  Node("r1b", "H100", 1, {{rack, "r1"}});
  std::set<std::string> r2 = {Node("r2a", "H100", 2, {{rack, "r2"}}),
                              Node("r2b", "H100", 2, {{rack, "r2"}})};
  Create("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns_ + "/podgroups",
         {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "ring"}, {"annotations", {{sched::kTopologyRequired, rack}}}}},
          {"spec", {{"minMember", 4}}}});
  for (int i = 0; i < 4; ++i) {
    std::string pod = util::Cat("ring-", i);
    Claim(pod, 1);
    Pod(pod, {{"name", "gpu"}, {"resourceClaimName", pod}}, json::object(),
        {{sched::kPodGroupLabel, "ring"}});
  }
  Start();
  ASSERT_TRUE(Eventually([&] {
    for (int i = 0; i < 4; ++i) {
      if (NodeOf(util::Cat("ring-", i)).empty()) return false;
    }
    return true;
  })) << status_;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(r2.contains(NodeOf(util::Cat("ring-", i)))) << i;
  json pg = Get("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns_ + "/podgroups/ring");
  EXPECT_FALSE(pg["metadata"].value("annotations", json::object()).contains(kGangIntent));
}

}  // namespace gpuplane::kube

namespace gpuplane::kube {

// Preemption through the API. Three pods of low priority fill a node of three GPUs: one
// protected by a PodDisruptionBudget that allows no disruption, one that would lose an hour
// of work (restore-seconds 3600) and one that would lose ten minutes. A pod of high priority
// preempts the last: it gets the DisruptionTarget condition and a Preempted Event and is
// deleted (a finalizer of the test keeps it terminating); meanwhile the preemptor waits,
// nominated to the node, preempting nothing more; once its victim is gone it is bound there.
TEST_F(SchedulerPlaneTest, PreemptsThePodThatLosesLeastAndWaitsForItToLeave) {
  PriorityClasses();
  std::string node = Node("n", "H100", 3);
  const json one = OneGpuTemplate();
  Create("/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets",
         {{"metadata", {{"name", "keep"}}},
          {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "keep"}}}}}}}});
  const std::string hold = "test.gpuplane.io/hold";
  auto pod = [&](const std::string& name, const std::string& level, const json& meta) {
    json m = meta;
    m["name"] = name;
    Create("/api/v1/namespaces/" + ns_ + "/pods",
           {{"metadata", m},
            {"spec",
             {{"schedulerName", name_},
              {"priorityClassName", util::Cat(level, "-", id_)},
              {"terminationGracePeriodSeconds", 0},
              {"containers",
               json::array({{{"name", "c"},
                             {"image", "pause"},
                             {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}}})},
              {"resourceClaims", json::array({one})}}}});
  };
  pod("kept", "low", {{"labels", {{"app", "keep"}}}});
  pod("dear", "low", {{"annotations", {{"gpuplane.io/restore-seconds", "3600"}}}});
  pod("cheap", "low",
      {{"annotations", {{"gpuplane.io/restore-seconds", "600"}}}, {"finalizers", {hold}}});
  Start();
  ASSERT_TRUE(Eventually([&] {
    return !NodeOf("kept").empty() && !NodeOf("dear").empty() && !NodeOf("cheap").empty();
  })) << status_;

  pod("urgent", "high", json::object());
  ASSERT_TRUE(Eventually([&] { return Condition("cheap", "DisruptionTarget").is_object(); }))
      << status_;
  json c = Condition("cheap", "DisruptionTarget");
  EXPECT_EQ(c["reason"], "PreemptionByScheduler");
  EXPECT_NE(c["message"].get<std::string>().find("urgent"), std::string::npos) << c.dump();
  ASSERT_TRUE(Eventually([&] {
    json p = Get(PodPath(ns_, "urgent"));
    return p.is_object() && p["status"].value("nominatedNodeName", "") == node;
  }));
  // While its victim is terminating, the preemptor waits (and says so): nothing else is
  // preempted.
  ASSERT_TRUE(Eventually([&] {
    std::string message = Condition("urgent", "PodScheduled").value("message", "");
    return message.find("Waiting for the pods it preempted on node " + node) != std::string::npos;
  })) << Condition("urgent", "PodScheduled").dump()
      << Describe() << "\n"
      << GangViolation();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_TRUE(Get(PodPath(ns_, "cheap"))["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(NodeOf("urgent"), "");
  for (const char* name : {"kept", "dear"}) {
    EXPECT_FALSE(Condition(name, "DisruptionTarget").is_object()) << name;
    EXPECT_FALSE(Get(PodPath(ns_, name))["metadata"].contains("deletionTimestamp")) << name;
  }
  json patch = {{"metadata", {{"finalizers", nullptr}}}};
  absl::StatusOr<Response> r =
      client_->Do("PATCH", PodPath(ns_, "cheap"), patch.dump(), "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && r->ok()) << (r.ok() ? StatusMessage(*r) : r.status().ToString());
  ASSERT_TRUE(Eventually([&] { return NodeOf("urgent") == node; })) << status_;
  std::set<std::string> preempted;
  json events = Get("/api/v1/namespaces/" + ns_ + "/events");
  for (const json& e : events["items"]) {
    if (e.value("reason", "") == "Preempted") preempted.insert(e["involvedObject"]["name"]);
  }
  EXPECT_EQ(preempted, (std::set<std::string>{"cheap"}));
  EXPECT_EQ(scheduler_->metrics().victims.load(), 1);
  EXPECT_EQ(GangViolation(), "");  // no device in two claims
}

}  // namespace gpuplane::kube

namespace gpuplane::kube {

// A gang preempts a gang, whole: a low-priority Workload gang of two pods holds the one GPU of
// each of two nodes; a high-priority Workload gang of two arrives. Both old members are
// preempted (never one of them), and the new gang is bound whole once they are gone.
TEST_F(SchedulerPlaneTest, AGangPreemptsAWholeGang) {
  PriorityClasses();
  std::set<std::string> nodes = {Node("a", "H100", 1), Node("b", "H100", 1)};
  const json one = OneGpuTemplate();
  auto gang = [&](const std::string& name, const std::string& level) {
    Workload(name, 2);
    for (int i = 0; i < 2; ++i) {
      Pod(util::Cat(name, "-", i), one,
          {{"workloadRef", {{"name", name}, {"podGroup", "workers"}}},
           {"priorityClassName", util::Cat(level, "-", id_)},
           {"terminationGracePeriodSeconds", 0}});
    }
  };
  gang("old", "low");
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("old-0").empty() && !NodeOf("old-1").empty(); }))
      << status_;
  gang("new", "high");
  ASSERT_TRUE(Eventually([&] {
    return nodes.contains(NodeOf("new-0")) && nodes.contains(NodeOf("new-1"));
  })) << status_;
  EXPECT_NE(NodeOf("new-0"), NodeOf("new-1"));
  for (const char* old : {"old-0", "old-1"}) EXPECT_FALSE(Get(PodPath(ns_, old)).is_object());
  json events = Get("/api/v1/namespaces/" + ns_ + "/events");
  std::set<std::string> preempted;
  for (const json& e : events["items"]) {
    if (e.value("reason", "") == "Preempted") preempted.insert(e["involvedObject"]["name"]);
  }
  EXPECT_EQ(preempted, (std::set<std::string>{"old-0", "old-1"}));
  // (Its claims come from templates, which GangViolation does not count as the gang's.)
  EXPECT_EQ(GangViolation().find("two claims"), std::string::npos) << GangViolation();
}

// A leader that stopped after marking one member of a victim gang (DisruptionTarget) and
// before evicting it: the next leader evicts that member and the rest of its gang, so the
// preempted job does not stay partly running.
TEST_F(SchedulerPlaneTest, ANewLeaderFinishesAPreemptionItFindsBegun) {
  Node("a", "H100", 1);
  Node("b", "H100", 1);
  const json one = OneGpuTemplate();
  Workload("old", 2);
  for (int i = 0; i < 2; ++i) {
    Pod(util::Cat("old-", i), one,
        {{"workloadRef", {{"name", "old"}, {"podGroup", "workers"}}},
         {"terminationGracePeriodSeconds", 0}});
  }
  Pod("other", one, {{"terminationGracePeriodSeconds", 0}});
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("old-0").empty() && !NodeOf("old-1").empty(); }))
      << status_;
  scheduler_->Stop();
  thread_.join();
  scheduler_.reset();
  Writer w(*client_);
  json pod = Get(PodPath(ns_, "old-1"));
  ASSERT_TRUE(w.MarkPreempted({ns_, "old-1", pod["metadata"]["uid"]},
                              util::Cat("preempted by x/y (", name_, "), which will run on node a"),
                              name_)
                  .ok());
  Start();
  ASSERT_TRUE(Eventually([&] {
    return !Get(PodPath(ns_, "old-0")).is_object() && !Get(PodPath(ns_, "old-1")).is_object();
  })) << status_;
  // The pod that was waiting gets a freed GPU.
  ASSERT_TRUE(Eventually([&] { return !NodeOf("other").empty(); })) << status_;
}

}  // namespace gpuplane::kube

namespace gpuplane::kube {

// A write the API server refuses is tried again after a backoff even when nothing in the
// cluster changes: a ValidatingAdmissionPolicy (which the scheduler does not watch) denies
// updates of the namespace's claims, the scheduler's allocation fails, the policy's binding is
// removed, and the pod is bound on a later try.
TEST_F(SchedulerPlaneTest, AFailedWriteIsTriedAgainWithoutAClusterChange) {
  Node("n", "H100", 1);
  Claim("probe", 1);
  std::vector<std::string> policy =
      RefuseClaimUpdates(util::Cat("deny-claims-", id_), "false", "probe");
  Claim("c", 1);
  Pod("p", {{"name", "gpu"}, {"resourceClaimName", "c"}});
  Start();
  const std::string failed = "gpuplane_scheduler_api_errors_total{write=\"claim\"}";
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(failed) != std::string::npos;
  })) << status_;
  EXPECT_EQ(NodeOf("p"), "");
  for (const std::string& path : policy) (void)client_->Do("DELETE", path);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("p").empty(); }, 60)) << status_;
}

// A preemption whose eviction the API server refuses is tried again after a backoff: a
// ValidatingAdmissionPolicy denies deletes of the victim, so its first eviction fails (it is
// marked, not deleted); once the policy's binding is removed, nothing else changing in the
// cluster, the victim is deleted and the preemptor bound (before, the preemptor's unchanged
// report kept the preemption from being tried again).
TEST_F(SchedulerPlaneTest, ARefusedEvictionIsTriedAgain) {
  PriorityClasses();
  Node("n", "H100", 1);
  const json one = OneGpuTemplate();
  auto pod = [&](const std::string& name, const std::string& level) {
    Pod(name, one,
        {{"priorityClassName", util::Cat(level, "-", id_)}, {"terminationGracePeriodSeconds", 0}});
  };
  pod("low", "low");
  Start();
  ASSERT_TRUE(Eventually([&] { return !NodeOf("low").empty(); })) << status_;
  std::vector<std::string> policy = RefusePodDeletes(util::Cat("deny-delete-", id_), "low");
  pod("high", "high");
  const std::string failed = "gpuplane_scheduler_api_errors_total{write=\"preemption\"}";
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(failed) != std::string::npos;
  })) << status_;
  EXPECT_TRUE(Condition("low", "DisruptionTarget").is_object());
  EXPECT_EQ(NodeOf("high"), "");
  for (const std::string& path : policy) (void)client_->Do("DELETE", path);
  ASSERT_TRUE(Eventually([&] { return !NodeOf("high").empty(); }, 60)) << status_ << Describe();
  EXPECT_FALSE(Get(PodPath(ns_, "low")).is_object()) << "the victim is gone";
  EXPECT_EQ(GangViolation(), "");  // no device in two claims
}

// A pod whose writes keep failing sits out of the passes while it backs off, so the device the
// pass gave it goes to the next pod (without backoff it would be given the device again on
// every cycle and the other pod would wait as long as the failure lasts).
TEST_F(SchedulerPlaneTest, APodWhoseWritesFailSitsOutAndOthersGetItsDevice) {
  Node("n", "H100", 1);
  Claim("probe", 1);
  std::vector<std::string> policy =
      RefuseClaimUpdates(util::Cat("deny-one-claim-", id_),
                         "!(object.metadata.name in ['probe', 'a-claim'])", "probe");
  Claim("a-claim", 1);
  Claim("b-claim", 1);
  Pod("a-refused", {{"name", "gpu"}, {"resourceClaimName", "a-claim"}});
  Pod("b-next", {{"name", "gpu"}, {"resourceClaimName", "b-claim"}});
  Start();
  const std::string failed = "gpuplane_scheduler_api_errors_total{write=\"claim\"}";
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(failed) != std::string::npos;
  })) << status_;
  ASSERT_TRUE(Eventually([&] { return !NodeOf("b-next").empty(); }, 30)) << status_;
  EXPECT_EQ(NodeOf("a-refused"), "");
  for (const std::string& path : policy) (void)client_->Do("DELETE", path);
  // The device is b-next's now: a-refused, back from its backoff, is told so.
  ASSERT_TRUE(Eventually([&] { return Condition("a-refused", "PodScheduled").is_object(); }, 60))
      << status_;
  EXPECT_EQ(NodeOf("a-refused"), "");
}

}  // namespace gpuplane::kube

namespace gpuplane::kube {

// Queues in the live scheduler, with the Queue definition shipped in deploy/crds/ (the
// plane does not serve the kind otherwise): a queue for this test's namespace that may hold
// one device of the test's class. Of two one-GPU pods one is bound and the other says its
// queue would go over its limit; a pod labelled with a queue that does not exist says so. The
// queue is deleted at the end (later tests' pods are in no queue).
TEST_F(SchedulerPlaneTest, QueueLimitsHoldPodsBackAndSayWhy) {
  ASSERT_NO_FATAL_FAILURE(InstallQueueDefinition());
  const std::string queue = "q-" + ns_;
  struct Cleanup {
    Client& client;
    std::string path;
    ~Cleanup() { (void)client.Do("DELETE", path); }
  } cleanup{*client_, "/apis/gpuplane.io/v1alpha1/queues/" + queue};
  Queue(queue, {{"deviceclass/" + cls_, {{"limit", "1"}}}});
  Node("n", "H100", 2);
  const json one = OneGpuTemplate();
  Pod("first", one);
  Pod("second", one);
  Create("/api/v1/namespaces/" + ns_ + "/pods",
         {{"metadata", {{"name", "stray"}, {"labels", {{"gpuplane.io/queue", "nosuch"}}}}},
          {"spec",
           {{"schedulerName", name_},
            {"containers", json::array({{{"name", "c"}, {"image", "pause"}}})}}}});
  // Past use on: the queues' history is kept across cycles (its effect on shares is pinned
  // by preempt-reclaim-leans-against-past-use.yaml).
  Start({.usage_half_life = 3600});

  ASSERT_TRUE(Eventually([&] {
    return (!NodeOf("first").empty() || !NodeOf("second").empty()) &&
           (Condition("first", "PodScheduled").is_object() ||
            Condition("second", "PodScheduled").is_object()) &&
           Condition("stray", "PodScheduled").is_object();
  })) << status_;
  const std::string waiting = NodeOf("first").empty() ? "first" : "second";
  EXPECT_NE(NodeOf(waiting == "first" ? "second" : "first"), "");
  EXPECT_EQ(NodeOf(waiting), "");
  json c = Condition(waiting, "PodScheduled");
  EXPECT_EQ(c["status"], "False");
  EXPECT_NE(c.value("message", "")
                .find("queue " + queue + " would go over its limit for deviceclass/" + cls_ +
                      ": 1 of 1 in use"),
            std::string::npos)
      << c.dump();
  std::string stray = Condition("stray", "PodScheduled").value("message", "");
  EXPECT_NE(stray.find("names queue \"nosuch\", which is not defined"), std::string::npos) << stray;
}

// The Queue definition installed while the scheduler runs is read without a restart (a kind
// the server did not serve is asked for again), and deleting it neither stops the scheduler
// nor leaves its queues in force.
TEST_F(SchedulerPlaneTest, AQueueDefinitionInstalledOrDeletedWhileRunningIsFollowed) {
  ASSERT_NO_FATAL_FAILURE(RemoveQueueDefinition());
  Node("n", "H100", 2);
  const json one = OneGpuTemplate();
  Pod("first", one);
  Start({.absent_recheck_seconds = 0.2});
  ASSERT_TRUE(Eventually([&] { return !NodeOf("first").empty(); })) << status_;

  ASSERT_NO_FATAL_FAILURE(InstallQueueDefinition());
  const std::string queue = "q-" + ns_;
  Queue(queue, {{"deviceclass/" + cls_, {{"limit", "1"}}}});
  // The scheduler has the queue (holding first's device) before the second pod comes.
  ASSERT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find("gpuplane_queue_devices{queue=\"" + queue +
                                               "\"} 1") != std::string::npos;
  })) << scheduler_->metrics().Render();
  Pod("second", one);
  ASSERT_TRUE(Eventually([&] {
    json c = Condition("second", "PodScheduled");
    return c.is_object() &&
           c.value("message", "").find("queue " + queue + " would go over its limit") !=
               std::string::npos;
  })) << Condition("second", "PodScheduled").dump();
  EXPECT_EQ(NodeOf("second"), "");

  ASSERT_NO_FATAL_FAILURE(RemoveQueueDefinition());  // its queues go with it
  EXPECT_TRUE(Eventually([&] { return !NodeOf("second").empty(); })) << status_;
  EXPECT_TRUE(scheduler_->Error().ok()) << scheduler_->Error();
  EXPECT_TRUE(scheduler_->Ready());
}

TEST_F(SchedulerPlaneTest, QueuesPastUseOutlivesTheLeader) {
  // What the last leader saved a minute ago: team held one device and has 1e6 device-seconds
  // of past use. This replica starts leading, goes on from it (decayed over the minute, with
  // the device added) and saves it for the next one, again when it stops.
  const std::string path = "/api/v1/namespaces/" + ns_ + "/configmaps/" + name_ + "-queue-usage";
  const double before = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()) - 60;
  QueueUsage saved{.saved_at = before, .gpu_seconds = {{"team", 1e6}}, .devices = {{"team", 1}}};
  Create("/api/v1/namespaces/" + ns_ + "/configmaps",
         {{"metadata", {{"name", name_ + "-queue-usage"}}},
          {"data", {{"usage.json", WriteQueueUsage(saved)}}}});
  auto read = [&] {
    json cm = Get(path);
    std::string text = cm.is_object() ? cm["data"].value("usage.json", "") : "";
    absl::StatusOr<QueueUsage> u = ReadQueueUsage(text, path);
    return u.ok() ? *u : QueueUsage{};
  };
  Start({.usage_half_life = 3600, .state_namespace = ns_});
  QueueUsage first;
  ASSERT_TRUE(Eventually([&] {
    first = read();
    return first.saved_at > before + 1;
  })) << status_;
  // 1e6 halves in an hour: about 988,500 after a minute, plus the device's minute, about 60.
  ASSERT_TRUE(first.gpu_seconds.contains("team"));
  EXPECT_GT(first.gpu_seconds.at("team"), 980'000);
  EXPECT_LT(first.gpu_seconds.at("team"), 1e6);
  EXPECT_TRUE(Eventually([&] {
    return scheduler_->metrics().Render().find(
               "gpuplane_queue_past_use_device_seconds{queue=\"team\"} 98") != std::string::npos;
  })) << "/metrics shows it:\n"
      << scheduler_->metrics().Render();
  scheduler_->Stop();
  thread_.join();
  scheduler_.reset();
  QueueUsage last = read();
  EXPECT_GT(last.saved_at, first.saved_at) << "saved again when it stopped";
  EXPECT_LE(last.gpu_seconds.at("team"), first.gpu_seconds.at("team"));
}

TEST_F(SchedulerPlaneTest, OpportunisticWorkWaitsForTheForecastRise) {
  // An opportunistic queue (gpu weight 0, no guarantee: a 1-hour window) and a node with two
  // GPUs. The saved history says the other queues' demand rose from 0 to a million devices
  // (more than the shared plane's nodes have) from this hour to the next one, one and two
  // days ago: the pod, which fits now, would be evicted within its window, so it waits and
  // says why. Without that history it would bind.
  ASSERT_NO_FATAL_FAILURE(InstallQueueDefinition());
  const std::string queue = "night-" + id_;
  Queue(queue, {{"gpu", {{"weight", "0"}}}});
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  const auto hour = static_cast<int64_t>(now / 3600);
  QueueUsage saved{
      .saved_at = now,
      .demand_peaks = {{hour - 48, 0}, {hour - 47, 1e6}, {hour - 24, 0}, {hour - 23, 1e6}}};
  Create("/api/v1/namespaces/" + ns_ + "/configmaps",
         {{"metadata", {{"name", name_ + "-queue-usage"}}},
          {"data", {{"usage.json", WriteQueueUsage(saved)}}}});
  Node("n", "H100", 2);
  const json one = OneGpuTemplate();
  Pod("tune", one);
  Start({.state_namespace = ns_});
  ASSERT_TRUE(Eventually([&] { return Condition("tune", "PodScheduled").is_object(); })) << status_;
  std::string message = Condition("tune", "PodScheduled").value("message", "");
  EXPECT_NE(message.find("Opportunistic queue " + queue + " waits for headroom"), std::string::npos)
      << message;
  EXPECT_NE(message.find("may want 1000000 more within the guarantee window"), std::string::npos)
      << message;
  EXPECT_EQ(NodeOf("tune"), "");
  (void)client_->Do("DELETE", "/apis/gpuplane.io/v1alpha1/queues/" + queue);
}

}  // namespace gpuplane::kube
