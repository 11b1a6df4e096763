#include "kube/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// The value of a series ("name{labels}" or "name") in /metrics text; -1 when it is absent.
double SeriesValue(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::strtod(text.c_str() + at + series.size() + 2, nullptr);
}

// The sum of a family's series (lines "name{...} value") in /metrics text.
double FamilySum(const std::string& text, const std::string& name) {
  double sum = 0;
  for (size_t at = text.find("\n" + name + "{"); at != std::string::npos;
       at = text.find("\n" + name + "{", at + 1)) {
    sum += std::strtod(text.c_str() + text.find("} ", at) + 2, nullptr);
  }
  return sum;
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

// Churn elsewhere does not keep an idle scheduler busy: with nothing of its own to place, 40
// changes to another scheduler's pod over 4 s run a pass at most once a second
// (idle_pass_seconds; without the rule each change runs one); a pod of its own created then is
// placed.
TEST_F(SchedulerPlaneTest, ChangesElsewhereWaitWhileNothingIsLeftToPlace) {
  std::string node = Node("a", "H100", 1);
  Start({.idle_pass_seconds = 1});
  ASSERT_TRUE(Eventually([&] { return scheduler_->metrics().cycles.load() > 0; })) << status_;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the first idle wait
  Create("/api/v1/namespaces/" + ns_ + "/pods",
         {{"metadata", {{"name", "elsewhere"}}},
          {"spec",
           {{"schedulerName", "elsewhere-" + id_},
            {"containers", json::array({{{"name", "c"}, {"image", "pause"}}})}}}});
  const int64_t before = scheduler_->metrics().cycles.load();
  for (int i = 0; i < 40; ++i) {
    json patch = {{"metadata", {{"labels", {{"step", std::to_string(i)}}}}}};
    absl::StatusOr<Response> r = client_->Do("PATCH", PodPath(ns_, "elsewhere"), patch.dump(),
                                             "application/merge-patch+json");
    ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int64_t during = scheduler_->metrics().cycles.load() - before;
  EXPECT_LE(during, 7) << "passes run for 40 changes to another scheduler's pod";
  Pod("mine", OneGpuTemplate());
  ASSERT_TRUE(Eventually([&] { return NodeOf("mine") == node; })) << status_ << Describe();
  EXPECT_TRUE(scheduler_->Ready());
}

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

// A Workload gang that fits is bound whole; one that cannot fit has no member bound and no
// claim allocated.
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
  // /metrics: one gang waits, aged from its first member's creation (which the alerts read).
  const std::string text = scheduler_->metrics().Render();
  EXPECT_EQ(SeriesValue(text, "gpuplane_scheduler_gangs_waiting"), 1) << text;
  const double gang_age = SeriesValue(text, "gpuplane_scheduler_gang_waiting_oldest_seconds");
  EXPECT_GT(gang_age, 0) << text;
  EXPECT_LT(gang_age, 300) << text;
  EXPECT_GE(FamilySum(text, "gpuplane_scheduler_pending_oldest_seconds"), gang_age)
      << "the gang's members are pending pods too:\n"
      << text;
}

// A replica that stops leading runs no passes; its pass gauges go to 0, so that sums across
// the replicas (which the alerts take) count the leader's alone.
TEST_F(SchedulerPlaneTest, AReplicaThatStopsLeadingCountsNothingPending) {
  Node("a", "H100", 1);
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaims",
         {{"metadata", {{"name", "two"}}}, {"spec", ClaimSpec(2, "")}});
  Pod("too-big", {{"name", "gpu"}, {"resourceClaimName", "two"}});
  Start();
  ASSERT_TRUE(Eventually([&] {
    return FamilySum(scheduler_->metrics().Render(), "gpuplane_scheduler_pending_pods") == 1;
  })) << scheduler_->metrics().Render();
  EXPECT_GT(FamilySum(scheduler_->metrics().Render(), "gpuplane_scheduler_pending_oldest_seconds"),
            0);
  leading_ = false;
  ASSERT_TRUE(Eventually([&] {
    const std::string text = scheduler_->metrics().Render();
    return FamilySum(text, "gpuplane_scheduler_pending_pods") == 0 &&
           FamilySum(text, "gpuplane_scheduler_pending_oldest_seconds") == 0;
  })) << scheduler_->metrics().Render();
  EXPECT_FALSE(scheduler_->metrics().leading.load());
}

}  // namespace
}  // namespace gpuplane::kube
