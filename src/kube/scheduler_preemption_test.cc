// The live scheduler against a real control plane: a PodGroup gang in one rack, and
// preemption (least lost work, whole gangs, a preemption a new leader finds begun).
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

}  // namespace
}  // namespace gpuplane::kube
