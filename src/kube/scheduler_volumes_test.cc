// The live scheduler against a real control plane: volumes decide the node.
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

}  // namespace
}  // namespace gpuplane::kube
