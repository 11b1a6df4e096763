// The manifests of deploy/, checked against a real control plane (GPUPLANE_TEST_PLANE and
// GPUPLANE_BIN, set by scripts/e2e.sh): with the least-privilege RBAC of
// deploy/scheduler/rbac.yaml, `gpuplane scheduler` run as a process with a token of that
// ServiceAccount does every kind of write it makes and the API server refuses none of them;
// the other manifests pass a server-side dry run.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "kube/plane_testing.h"
#include "kube/writer.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

constexpr char kNamespace[] = "gpuplane-system";  // rbac.yaml's
constexpr char kAccount[] = "gpuplane-scheduler";

// The file's text, or "" when it cannot be read (for failure messages).
std::string ReadAll(const std::string& file) { return util::ReadFile(file).value_or(""); }

class SchedulerRbacTest : public SchedulerBinaryTest {
 protected:
  // A kubeconfig like the plane's, with a token of the ServiceAccount (TokenRequest) instead
  // of the admin's.
  std::string AccountKubeconfig() {
    json request = {{"apiVersion", "authentication.k8s.io/v1"},
                    {"kind", "TokenRequest"},
                    {"spec", {{"expirationSeconds", 3600}}}};
    absl::StatusOr<Response> r = client_->Do(
        "POST",
        util::Cat("/api/v1/namespaces/", kNamespace, "/serviceaccounts/", kAccount, "/token"),
        request.dump());
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? StatusMessage(*r) : r.status().ToString());
    if (!r.ok() || r->status != 201) return "";
    std::string token = json::parse(r->body)["status"]["token"];
    std::string config = ReadAll(dir_ + "/kubeconfig");
    const std::string key = "    token: ";
    size_t at = config.find(key);
    EXPECT_NE(at, std::string::npos) << "no token in " << dir_ << "/kubeconfig";
    if (at == std::string::npos) return "";
    size_t end = config.find('\n', at);
    config.replace(at + key.size(), end - at - key.size(), token);
    std::string file = util::Cat(dir_, "/kubeconfig-rbac-", id_);
    std::ofstream(file) << config;
    return file;
  }
};

// With deploy/scheduler/rbac.yaml applied, the scheduler running as its ServiceAccount takes
// the Lease in gpuplane-system, keeps the queues' past use there, allocates a template claim
// and binds its pod, binds a Workload gang (its intent annotation), binds a pod asking an
// extended resource (it creates the claim and writes the pod's status), reports a pod that
// fits nowhere (condition and Event), and preempts a pod a PodDisruptionBudget covers through
// the Eviction API; nothing in its log is a refusal.
TEST_F(SchedulerRbacTest, TheShippedRbacIsEnoughForEveryWrite) {
  ApplyManifest("deploy/scheduler/rbac.yaml");
  const std::string kubeconfig = AccountKubeconfig();
  ASSERT_FALSE(kubeconfig.empty());
  PriorityClasses();
  const std::string node = Node("n", "H100", 4);
  const json one = OneGpuTemplate();
  ExtendedResourceClass();
  Create("/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets",
         {{"metadata", {{"name", "evictable"}}},
          {"spec", {{"maxUnavailable", 1}, {"selector", {{"matchLabels", {{"app", "low"}}}}}}}});
  // No disruption controller runs in the plane: the budget's status says what it would.
  const std::string pdb = "/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets/evictable";
  json budget = Get(pdb);
  budget["status"] = {{"observedGeneration", budget["metadata"]["generation"]},
                      {"disruptionsAllowed", 1},
                      {"currentHealthy", 1},
                      {"desiredHealthy", 0},
                      {"expectedPods", 1}};
  absl::StatusOr<Response> r = client_->Do("PUT", pdb + "/status", budget.dump());
  ASSERT_TRUE(r.ok() && r->ok()) << (r.ok() ? StatusMessage(*r) : r.status().ToString());
  Pod("low", one, {{"priorityClassName", "low-" + id_}, {"terminationGracePeriodSeconds", 0}},
      {{"app", "low"}});
  Workload("gang", 2);
  for (const char* member : {"gang-0", "gang-1"}) {
    Claim(member, 1, "gang");
    Pod(member, {{"name", "gpu"}, {"resourceClaimName", member}},
        {{"workloadRef", {{"name", "gang"}, {"podGroup", "workers"}}},
         {"priorityClassName", "high-" + id_}});
  }
  ExtendedResourcePod("extended", 1, {{"priorityClassName", "high-" + id_}});
  Claim("huge", 8);
  Pod("too-big", {{"name", "gpu"}, {"resourceClaimName", "huge"}});

  const std::string log = util::Cat(dir_, "/rbac-", id_, ".log");
  pid_t pid = Spawn({"--leader-elect", "--lease-namespace", kNamespace, "--lease-name", name_,
                     "--usage-half-life", "1h"},
                    log, kubeconfig);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(Eventually([&] {
    return !NodeOf("low").empty() && !NodeOf("gang-0").empty() && !NodeOf("gang-1").empty() &&
           !NodeOf("extended").empty();
  })) << Describe()
      << "\nlog:\n"
      << ReadAll(log);
  ASSERT_TRUE(Eventually([&] {
    return Condition("too-big", "PodScheduled").value("reason", "") == "Unschedulable";
  })) << ReadAll(log);

  Pod("urgent", one, {{"priorityClassName", "high-" + id_}});
  ASSERT_TRUE(Eventually([&] { return NodeOf("urgent") == node; })) << Describe() << "\nlog:\n"
                                                                    << ReadAll(log);
  EXPECT_TRUE(Get(PodPath(ns_, "low")).is_null() ||
              Get(PodPath(ns_, "low"))["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(Get(PodPath(ns_, "extended"))["status"]["extendedResourceClaimStatus"].is_object());
  std::set<std::string> reasons;
  const json events = Get("/api/v1/namespaces/" + ns_ + "/events");
  for (const json& e : events["items"]) reasons.insert(e.value("reason", ""));
  EXPECT_TRUE(reasons.contains("FailedScheduling"));
  EXPECT_TRUE(reasons.contains("Preempted"));
  json lease =
      Get(util::Cat("/apis/coordination.k8s.io/v1/namespaces/", kNamespace, "/leases/", name_));
  EXPECT_TRUE(lease.is_object() && !lease["spec"].value("holderIdentity", "").empty()) << lease;
  EXPECT_TRUE(
      Get(util::Cat("/api/v1/namespaces/", kNamespace, "/configmaps/", name_, "-queue-usage"))
          .is_object());
  const std::string text = ReadAll(log);
  EXPECT_EQ(text.find("forbidden"), std::string::npos) << text;
  EXPECT_EQ(text.find("HTTP 403"), std::string::npos) << text;
  EXPECT_EQ(GangViolation(), "");
  Kill(pid, SIGTERM);
  (void)client_->Do("DELETE", util::Cat("/apis/coordination.k8s.io/v1/namespaces/", kNamespace,
                                        "/leases/", name_));
  (void)client_->Do("DELETE", util::Cat("/api/v1/namespaces/", kNamespace, "/configmaps/", name_,
                                        "-queue-usage"));
}

// The other manifests users apply are accepted by the API server as they are, unknown fields
// refused (server-side dry run; prometheusrule.yaml needs the Prometheus Operator's CRD, which
// the plane does not have). Their namespace comes from rbac.yaml.
TEST_F(SchedulerPlaneTest, TheShippedManifestsAreAcceptedByTheApiServer) {
  ApplyManifest("deploy/scheduler/rbac.yaml");
  for (const char* file : {"deploy/scheduler/deployment.yaml", "deploy/agent-daemonset.yaml",
                           "deploy/crds/queues.gpuplane.io.yaml"}) {
    SCOPED_TRACE(file);
    ApplyManifest(file, /*dry_run=*/true);
  }
}

}  // namespace
}  // namespace gpuplane::kube
