#include "kube/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "kube/rest_config.h"
#include "kube/scheduler_metrics.h"
#include "kube/writer.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

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
}

TEST(WriterTest, AllocationJsonIsTheApisShape) {
  api::AllocationResult a;
  a.devices.results.push_back({.request = "gpu", .driver = "d", .pool = "p", .device = "gpu-0"});
  json j = AllocationJson(a);
  ASSERT_TRUE(j.contains("devices")) << j.dump();
  EXPECT_EQ(j["devices"]["results"][0]["device"], "gpu-0");
  EXPECT_EQ(j["devices"]["results"][0]["request"], "gpu");
}

// Against a real control plane (GPUPLANE_TEST_PLANE, set by scripts/e2e.sh): a scheduler of
// its own name over nodes with devices of its own driver.
class SchedulerPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("GPUPLANE_TEST_PLANE");
    if (dir == nullptr) GTEST_SKIP() << "GPUPLANE_TEST_PLANE is unset (scripts/e2e.sh sets it)";
    absl::StatusOr<RestConfig> cfg = LoadKubeconfig(std::string(dir) + "/kubeconfig");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    client_ = std::make_unique<Client>(*cfg);
    id_ = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000000);
    ns_ = "sched-" + id_;
    cls_ = "sched-" + id_ + ".example.com";
    name_ = "gpuplane-" + id_;
    Create("/api/v1/namespaces", {{"metadata", {{"name", ns_}}}});
    Create("/apis/resource.k8s.io/v1/deviceclasses",
           {{"metadata", {{"name", cls_}}},
            {"spec",
             {{"selectors",
               json::array({{{"cel", {{"expression", "device.driver == \"" + cls_ + "\""}}}}})}}}});
  }
  void TearDown() override {
    if (scheduler_) {
      scheduler_->Stop();
      thread_.join();
    }
    if (client_) (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_);
  }

  void Create(const std::string& path, const json& obj) {
    absl::StatusOr<Response> r = client_->Do("POST", path, obj.dump());
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->status, 201) << path << ": " << StatusMessage(*r);
  }
  // A node with `gpus` devices of `model`, published in one ResourceSlice.
  std::string Node(const std::string& suffix, const std::string& model, int gpus) {
    std::string node = "sched-" + id_ + "-" + suffix;
    Create("/api/v1/nodes",
           {{"metadata", {{"name", node}}},
            {"status", {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}}}}}});
    json devices = json::array();
    for (int i = 0; i < gpus; ++i) {
      devices.push_back(
          {{"name", "gpu-" + std::to_string(i)},
           {"attributes", {{"model", {{"string", model}}}}},
           {"capacity", {{"memory", {{"value", model == "H100" ? "80Gi" : "40Gi"}}}}}});
    }
    Create("/apis/resource.k8s.io/v1/resourceslices",
           {{"metadata", {{"name", node + "-gpus"}}},
            {"spec",
             {{"driver", cls_},
              {"nodeName", node},
              {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
              {"devices", devices}}}});
    return node;
  }
  json ClaimSpec(int count, const std::string& cel) {
    json exactly = {{"deviceClassName", cls_}, {"count", count}};
    if (!cel.empty()) exactly["selectors"] = json::array({{{"cel", {{"expression", cel}}}}});
    return {{"devices", {{"requests", json::array({{{"name", "gpu"}, {"exactly", exactly}}})}}}};
  }
  void Pod(const std::string& name, const json& claim_ref,
           const json& extra_spec = json::object()) {
    json spec = {{"schedulerName", name_},
                 {"containers",
                  json::array({{{"name", "c"},
                                {"image", "pause"},
                                {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}}})},
                 {"resourceClaims", json::array({claim_ref})}};
    spec.update(extra_spec);
    Create("/api/v1/namespaces/" + ns_ + "/pods", {{"metadata", {{"name", name}}}, {"spec", spec}});
  }
  void Start() {
    SchedulerOptions o;
    o.name = name_;
    scheduler_ = std::make_unique<Scheduler>(*client_, o);
    thread_ = std::thread([this] { status_ = scheduler_->Run([] { return true; }); });
  }
  json Get(const std::string& path) {
    absl::StatusOr<Response> r = client_->Get(path);
    if (!r.ok() || !r->ok()) return json();
    return json::parse(r->body);
  }
  // Waits up to `seconds` for `done`.
  bool Eventually(const std::function<bool()>& done, double seconds = 30) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
  }
  std::string NodeOf(const std::string& pod) {
    json p = Get(PodPath(ns_, pod));
    return p.is_object() ? p["spec"].value("nodeName", "") : "";
  }
  json Condition(const std::string& pod, const std::string& type) {
    json p = Get(PodPath(ns_, pod));
    if (!p.is_object()) return json();
    for (const json& c : p["status"].value("conditions", json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return json();
  }

  std::unique_ptr<Client> client_;
  std::string id_, ns_, cls_, name_;
  std::unique_ptr<Scheduler> scheduler_;
  std::thread thread_;
  absl::Status status_;
};

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

// A Workload gang that fits is bound whole; one that cannot fit has no member bound and no
// claim allocated.
TEST_F(SchedulerPlaneTest, WorkloadGangsAreBoundWholeOrNotAtAll) {
  Node("a", "H100", 2);
  Node("b", "H100", 2);
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaimtemplates",
         {{"metadata", {{"name", "one"}}}, {"spec", {{"spec", ClaimSpec(1, "")}}}});
  for (auto [gang, size] : {std::pair<std::string, int>{"fits", 3}, {"too-big", 5}}) {
    Create(
        "/apis/scheduling.k8s.io/v1alpha1/namespaces/" + ns_ + "/workloads",
        {{"metadata", {{"name", gang}}},
         {"spec",
          {{"podGroups",
            json::array({{{"name", "workers"}, {"policy", {{"gang", {{"minCount", size}}}}}}})}}}});
    for (int i = 0; i < size; ++i) {
      Pod(gang + "-" + std::to_string(i), {{"name", "gpu"}, {"resourceClaimTemplateName", "one"}},
          {{"workloadRef", {{"name", gang}, {"podGroup", "workers"}}}});
    }
  }
  Start();
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
