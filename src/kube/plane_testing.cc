#include "kube/plane_testing.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "api/reader.h"
#include "kube/json_field.h"
#include "kube/rest_config.h"
#include "kube/writer.h"
#include "util/strings.h"

extern char** environ;

namespace gpuplane::kube {

using nlohmann::json;

inline constexpr char kGangLabel[] = "test.gpuplane.io/gang";

bool Eventually(const std::function<bool()>& done, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

absl::Status RestartApiServer(const std::string& dir) {
  std::string restart = "bash scripts/controlplane.sh restart-apiserver " + dir;
  if (std::system(restart.c_str()) != 0) return absl::InternalError(restart + " failed");
  return absl::OkStatus();
}

absl::Status AwaitClaimController(const Client& client, const std::string& ns) {
  const std::string templates =
      "/apis/resource.k8s.io/v1/namespaces/" + ns + "/resourceclaimtemplates";
  const std::string pods = "/api/v1/namespaces/" + ns + "/pods";
  const std::string name = "plane-probe";
  json request = {{"name", "gpu"}, {"exactly", {{"deviceClassName", "plane-probe.example.com"}}}};
  json tmpl = {{"metadata", {{"name", name}}},
               {"spec", {{"spec", {{"devices", {{"requests", json::array({request})}}}}}}}};
  json pod = {{"metadata", {{"name", name}}},
              {"spec",
               {{"schedulerName", "nobody"},
                {"containers", json::array({{{"name", "c"}, {"image", "none"}}})},
                {"resourceClaims",
                 json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", name}}})}}}};
  for (const auto& [path, obj] : {std::pair{templates, tmpl}, std::pair{pods, pod}}) {
    absl::StatusOr<Response> r = client.Do("POST", path, obj.dump());
    if (!r.ok()) return r.status();
    if (r->status != 201) return absl::InternalError(path + ": " + StatusMessage(*r));
  }
  std::string claim;
  Eventually(
      [&] {
        absl::StatusOr<Response> r = client.Get(pods + "/" + name);
        if (!r.ok() || !r->ok()) return false;
        const json p = json::parse(r->body, nullptr, false);
        const json& made = Field(Field(p, "status"), "resourceClaimStatuses");
        if (made.is_array() && !made.empty()) claim = Str(made[0], "resourceClaimName");
        return !claim.empty();
      },
      180);
  // Gone at once, not left to the garbage collector (whose watches back off too): other tests
  // read every claim in the cluster.
  (void)client.Do("DELETE", pods + "/" + name + "?gracePeriodSeconds=0");
  if (!claim.empty()) (void)client.Do("DELETE", ClaimPath(ns, claim));
  (void)client.Do("DELETE", templates + "/" + name);
  if (claim.empty()) {
    return absl::DeadlineExceededError(
        "kube-controller-manager made no claim for pod " + ns + "/" + name +
        " within 180 s (see the plane's logs/kube-controller-manager.log)");
  }
  return absl::OkStatus();
}

void SchedulerPlaneTest::SetUp() {
  const char* dir = std::getenv("GPUPLANE_TEST_PLANE");
  if (dir == nullptr) GTEST_SKIP() << "GPUPLANE_TEST_PLANE is unset (scripts/e2e.sh sets it)";
  dir_ = dir;
  absl::StatusOr<RestConfig> cfg = LoadKubeconfig(dir_ + "/kubeconfig");
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

void SchedulerBinaryTest::SetUp() {
  SchedulerPlaneTest::SetUp();
  if (IsSkipped()) return;
  if (std::getenv("GPUPLANE_BIN") == nullptr) GTEST_SKIP() << "GPUPLANE_BIN is unset";
}

void SchedulerPlaneTest::TearDown() {
  for (pid_t pid : children_) Kill(pid, SIGKILL);
  if (scheduler_) {
    scheduler_->Stop();
    thread_.join();
  }
  if (!client_) return;
  // The plane runs no namespace controller: the namespace's pods and claims are deleted here,
  // so that later tests do not read them (the resourceclaim controller releases the claims).
  (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_ + "/pods?gracePeriodSeconds=0");
  (void)client_->Do("DELETE", "/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaims");
  (void)client_->Do("DELETE", "/api/v1/namespaces/" + ns_);
  // Nodes are cluster-wide: left behind, a later test's pods could be placed on them.
  for (const std::string& node : nodes_) {
    (void)client_->Do("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + node + "-gpus");
    (void)client_->Do("DELETE", "/api/v1/nodes/" + node);
  }
}

void SchedulerPlaneTest::Create(const std::string& path, const json& obj) {
  absl::StatusOr<Response> r = client_->Do("POST", path, obj.dump());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 201) << path << ": " << StatusMessage(*r);
}

std::string SchedulerPlaneTest::Node(const std::string& suffix, const std::string& model, int gpus,
                                     const json& labels) {
  std::string node = "sched-" + id_ + "-" + suffix;
  nodes_.push_back(node);
  Create("/api/v1/nodes",
         {{"metadata", {{"name", node}, {"labels", labels}}},
          {"status", {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}}}}}});
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back({{"name", "gpu-" + std::to_string(i)},
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

json SchedulerPlaneTest::ClaimSpec(int count, const std::string& cel) const {
  json exactly = {{"deviceClassName", cls_}, {"count", count}};
  if (!cel.empty()) exactly["selectors"] = json::array({{{"cel", {{"expression", cel}}}}});
  return {{"devices", {{"requests", json::array({{{"name", "gpu"}, {"exactly", exactly}}})}}}};
}

json SchedulerPlaneTest::OneGpuTemplate() {
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaimtemplates",
         {{"metadata", {{"name", "one"}}}, {"spec", {{"spec", ClaimSpec(1, "")}}}});
  return {{"name", "gpu"}, {"resourceClaimTemplateName", "one"}};
}

void SchedulerPlaneTest::Claim(const std::string& name, int count, const std::string& gang) {
  json meta = {{"name", name}};
  if (!gang.empty()) meta["labels"] = {{kGangLabel, gang}};
  Create("/apis/resource.k8s.io/v1/namespaces/" + ns_ + "/resourceclaims",
         {{"metadata", meta}, {"spec", ClaimSpec(count, "")}});
}

void SchedulerPlaneTest::Pod(const std::string& name, const json& claim_ref, const json& extra_spec,
                             const json& labels) {
  json spec = {{"schedulerName", name_},
               {"containers",
                json::array({{{"name", "c"},
                              {"image", "pause"},
                              {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}}})},
               {"resourceClaims", json::array({claim_ref})}};
  spec.update(extra_spec);
  Create("/api/v1/namespaces/" + ns_ + "/pods",
         {{"metadata", {{"name", name}, {"labels", labels}}}, {"spec", spec}});
}

std::string SchedulerPlaneTest::ExtendedResourceClass() {
  std::string resource = "example.com/gpu-" + id_;
  Create("/apis/resource.k8s.io/v1/deviceclasses",
         {{"metadata", {{"name", "ext-" + id_}}},
          {"spec",
           {{"extendedResourceName", resource},
            {"selectors",
             json::array({{{"cel", {{"expression", "device.driver == \"" + cls_ + "\""}}}}})}}}});
  return resource;
}

void SchedulerPlaneTest::ExtendedResourcePod(const std::string& name, int gpus,
                                             const json& extra_spec) {
  json c = {{"name", "c"},
            {"image", "pause"},
            {"resources", {{"limits", {{"example.com/gpu-" + id_, std::to_string(gpus)}}}}}};
  json spec = {{"schedulerName", name_}, {"containers", json::array({c})}};
  spec.update(extra_spec);
  Create("/api/v1/namespaces/" + ns_ + "/pods", {{"metadata", {{"name", name}}}, {"spec", spec}});
}

void SchedulerPlaneTest::Workload(const std::string& name, int min_count) {
  Create("/apis/scheduling.k8s.io/v1alpha1/namespaces/" + ns_ + "/workloads",
         {{"metadata", {{"name", name}}},
          {"spec",
           {{"podGroups", json::array({{{"name", "workers"},
                                        {"policy", {{"gang", {{"minCount", min_count}}}}}}})}}}});
}

void SchedulerPlaneTest::PriorityClasses() {
  for (auto [level, value] : {std::pair<std::string, int>{"low", 10}, {"high", 1000}}) {
    Create("/apis/scheduling.k8s.io/v1/priorityclasses",
           {{"apiVersion", "scheduling.k8s.io/v1"},
            {"kind", "PriorityClass"},
            {"metadata", {{"name", util::Cat(level, "-", id_)}}},
            {"value", value}});
  }
}

void SchedulerPlaneTest::Start(SchedulerOptions o) {
  o.name = name_;
  scheduler_ = std::make_unique<Scheduler>(*client_, o);
  thread_ = std::thread([this] { status_ = scheduler_->Run([this] { return leading_.load(); }); });
}

json SchedulerPlaneTest::Get(const std::string& path) {
  absl::StatusOr<Response> r = client_->Get(path);
  if (!r.ok() || !r->ok()) return json();
  return json::parse(r->body, nullptr, false);
}

json SchedulerPlaneTest::List(const std::string& collection) {
  std::string group = collection == "pods"        ? "/api/v1"
                      : collection == "workloads" ? "/apis/scheduling.k8s.io/v1alpha1"
                                                  : "/apis/resource.k8s.io/v1";
  json list = Get(util::Cat(group, "/namespaces/", ns_, "/", collection));
  return list.is_object() ? list["items"] : json::array();
}

std::string SchedulerPlaneTest::NodeOf(const std::string& pod) {
  json p = Get(PodPath(ns_, pod));
  return p.is_object() ? p["spec"].value("nodeName", "") : "";
}

json SchedulerPlaneTest::Condition(const std::string& pod, const std::string& type) {
  json p = Get(PodPath(ns_, pod));
  if (!p.is_object()) return json();
  for (const json& c : Field(p["status"], "conditions")) {
    if (c.value("type", "") == type) return c;
  }
  return json();
}

pid_t SchedulerPlaneTest::Spawn(const std::vector<std::string>& args, const std::string& log,
                                const std::string& kubeconfig) {
  const char* bin = std::getenv("GPUPLANE_BIN");
  if (bin == nullptr) return -1;
  std::vector<std::string> argv = {bin,
                                   "scheduler",
                                   "--kubeconfig",
                                   kubeconfig.empty() ? dir_ + "/kubeconfig" : kubeconfig,
                                   "--scheduler-name",
                                   name_,
                                   "--metrics-addr",
                                   ""};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, bin, &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  children_.push_back(pid);
  return pid;
}

void SchedulerPlaneTest::Kill(pid_t pid, int signal) {
  if (pid <= 0) return;
  kill(pid, signal);
  int status = 0;
  waitpid(pid, &status, 0);
  std::erase(children_, pid);
}

std::string SchedulerPlaneTest::GangViolation() {
  json pods = List("pods"), claims = List("resourceclaims"), workloads = List("workloads");
  std::set<std::tuple<std::string, std::string, std::string>> devices;
  std::map<std::string, int> allocated_in_gang;
  for (const json& c : claims) {
    if (!c.contains("status") || !c["status"].contains("allocation")) continue;
    std::string gang = Field(c["metadata"], "labels").value(kGangLabel, "");
    if (!gang.empty()) ++allocated_in_gang[gang];
    for (const json& r : Field(c["status"]["allocation"]["devices"], "results")) {
      if (!devices.emplace(r.value("driver", ""), r.value("pool", ""), r.value("device", ""))
               .second) {
        return util::Cat("device ", r.value("pool", ""), "/", r.value("device", ""),
                         " is allocated to two claims");
      }
    }
  }
  for (const json& w : workloads) {
    std::string name = w["metadata"]["name"];
    if (Field(w["metadata"], "annotations").contains(kGangIntent)) {
      return util::Cat("Workload ", name, " has an open gang intent");
    }
    int members = 0, bound = 0;
    for (const json& p : pods) {
      const json& spec = p["spec"];
      if (!spec.contains("workloadRef") || spec["workloadRef"].value("name", "") != name) continue;
      ++members;
      if (!spec.value("nodeName", "").empty()) ++bound;
    }
    int allocated = allocated_in_gang[name];
    int min = w["spec"]["podGroups"][0]["policy"]["gang"].value("minCount", 1);
    bool none = bound == 0 && allocated == 0;
    bool whole = bound == members && members >= min && allocated == bound;
    if (!none && !whole) {
      return util::Cat("Workload ", name, ": ", bound, " of ", members, " pods bound, ", allocated,
                       " claims allocated (minCount ", min, ")");
    }
  }
  return "";
}

std::string SchedulerPlaneTest::Describe() {
  std::string out;
  for (const json& p : List("pods")) {
    const json& meta = p["metadata"];
    const json& status = Field(p, "status");
    std::string scheduled;
    for (const json& c : Field(status, "conditions")) {
      if (c.value("type", "") == "PodScheduled") scheduled = c.value("status", "");
    }
    out += util::Cat("\npod ", meta.value("name", ""), ": node \"",
                     Field(p, "spec").value("nodeName", ""), "\" nominated \"",
                     status.value("nominatedNodeName", ""), "\" PodScheduled ", scheduled,
                     meta.contains("deletionTimestamp") ? " deleting" : "");
  }
  for (const json& c : List("resourceclaims")) {
    const json& status = Field(c, "status");
    out += util::Cat("\nclaim ", c["metadata"].value("name", ""), ": devices");
    for (const json& r : Field(Field(Field(status, "allocation"), "devices"), "results")) {
      out += util::Cat(" ", r.value("pool", ""), "/", r.value("device", ""));
    }
    out += " reservedFor";
    for (const json& u : Field(status, "reservedFor")) out += " " + u.value("name", "");
  }
  return out;
}

namespace {

constexpr char kQueueCrd[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/queues.gpuplane.io";
constexpr char kQueues[] = "/apis/gpuplane.io/v1alpha1/queues";

// A YAML document as the JSON the API server takes (scalars as Kubernetes resolves them).
nlohmann::json DocJson(const api::Doc& d) {
  switch (d.kind()) {
    case api::Doc::Kind::kNull:
      return nullptr;
    case api::Doc::Kind::kBool:
      return d.bool_value();
    case api::Doc::Kind::kInt:
      return std::stoll(d.text());
    case api::Doc::Kind::kFloat:
      return std::stod(d.text());
    case api::Doc::Kind::kString:
      return d.text();
    case api::Doc::Kind::kMap: {
      nlohmann::json m = nlohmann::json::object();
      for (const api::DocEntry& e : d.entries()) m[e.key] = DocJson(e.value);
      return m;
    }
    case api::Doc::Kind::kSeq: {
      nlohmann::json a = nlohmann::json::array();
      for (const api::Doc& i : d.items()) a.push_back(DocJson(i));
      return a;
    }
  }
  return nullptr;
}

// The collection a manifest's object is created in, by kind (the kinds deploy/ uses).
std::string CollectionOf(const json& obj) {
  static const std::map<std::string, std::pair<std::string, std::string>, std::less<>> kPaths = {
      {"Namespace", {"/api/v1", "namespaces"}},
      {"ServiceAccount", {"/api/v1", "serviceaccounts"}},
      {"ConfigMap", {"/api/v1", "configmaps"}},
      {"ClusterRole", {"/apis/rbac.authorization.k8s.io/v1", "clusterroles"}},
      {"ClusterRoleBinding", {"/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings"}},
      {"Role", {"/apis/rbac.authorization.k8s.io/v1", "roles"}},
      {"RoleBinding", {"/apis/rbac.authorization.k8s.io/v1", "rolebindings"}},
      {"CustomResourceDefinition", {"/apis/apiextensions.k8s.io/v1", "customresourcedefinitions"}},
      {"Service", {"/api/v1", "services"}},
      {"Deployment", {"/apis/apps/v1", "deployments"}},
      {"DaemonSet", {"/apis/apps/v1", "daemonsets"}},
      {"PodDisruptionBudget", {"/apis/policy/v1", "poddisruptionbudgets"}},
  };
  auto it = kPaths.find(Str(obj, "kind"));
  if (it == kPaths.end()) return "";
  std::string_view ns = Str(Field(obj, "metadata"), "namespace");
  if (ns.empty()) return util::Cat(it->second.first, "/", it->second.second);
  return util::Cat(it->second.first, "/namespaces/", ns, "/", it->second.second);
}

}  // namespace

void SchedulerPlaneTest::ApplyManifest(const std::string& file, bool dry_run) {
  const std::string query =
      dry_run ? "?fieldValidation=Strict&dryRun=All" : "?fieldValidation=Strict";
  const std::string path = std::string(GPUPLANE_SOURCE_DIR) + "/" + file;
  absl::StatusOr<std::string> text = util::ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<std::vector<api::Doc>> docs = api::ReadYaml(*text, path);
  ASSERT_TRUE(docs.ok() && !docs->empty()) << path << ": " << docs.status();
  for (const api::Doc& d : *docs) {
    json obj = DocJson(d);
    std::string collection = CollectionOf(obj);
    ASSERT_FALSE(collection.empty()) << path << ": kind " << obj.value("kind", "") << " unknown";
    absl::StatusOr<Response> r = client_->Do("POST", collection + query, obj.dump());
    ASSERT_TRUE(r.ok()) << r.status();
    if (r->status == 409) {  // there: replaced by the manifest's version
      const std::string named = util::Cat(collection, "/", Str(obj["metadata"], "name"));
      json old = Get(named);
      obj["metadata"]["resourceVersion"] = Field(old, "metadata").value("resourceVersion", "");
      r = client_->Do("PUT", named + query, obj.dump());
      ASSERT_TRUE(r.ok()) << r.status();
    }
    ASSERT_TRUE(r->status == 200 || r->status == 201) << path << ": " << StatusMessage(*r);
  }
}

void SchedulerPlaneTest::InstallQueueDefinition() {
  ApplyManifest("deploy/crds/queues.gpuplane.io.yaml");
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<Response> got = client_->Get(kQueues);
    return got.ok() && got->ok();
  }));
}

void SchedulerPlaneTest::RemoveQueueDefinition() {
  absl::StatusOr<Response> r = client_->Do("DELETE", kQueueCrd);
  ASSERT_TRUE(r.ok() && (r->status == 200 || r->status == 404)) << StatusMessage(*r);
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<Response> crd = client_->Get(kQueueCrd);
    absl::StatusOr<Response> got = client_->Get(kQueues);
    return crd.ok() && crd->status == 404 && got.ok() && got->status == 404;
  }));
}

void SchedulerPlaneTest::Queue(const std::string& name, const json& resources) {
  Create(kQueues, {{"apiVersion", "gpuplane.io/v1alpha1"},
                   {"kind", "Queue"},
                   {"metadata", {{"name", name}}},
                   {"spec", {{"namespaces", json::array({ns_})}, {"resources", resources}}}});
}

std::vector<std::string> SchedulerPlaneTest::Refuse(const std::string& name,
                                                    const std::string& group,
                                                    const std::string& resource,
                                                    const std::string& operation,
                                                    const std::string& allowed) {
  const std::string admission = "/apis/admissionregistration.k8s.io/v1/";
  Create(admission + "validatingadmissionpolicies",
         {{"metadata", {{"name", name}}},
          {"spec",
           {{"failurePolicy", "Fail"},
            {"matchConstraints",
             {{"resourceRules", json::array({{{"apiGroups", {group}},
                                              {"apiVersions", {"*"}},
                                              {"operations", {operation}},
                                              {"resources", {resource}}}})}}},
            {"validations",
             json::array({{{"expression", allowed}, {"message", "denied by the test"}}})}}}});
  Create(
      admission + "validatingadmissionpolicybindings",
      {{"metadata", {{"name", name}}},
       {"spec",
        {{"policyName", name},
         {"validationActions", {"Deny"}},
         {"matchResources",
          {{"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", ns_}}}}}}}}}});
  return {admission + "validatingadmissionpolicybindings/" + name,
          admission + "validatingadmissionpolicies/" + name};
}

std::vector<std::string> SchedulerPlaneTest::RefuseClaimUpdates(const std::string& name,
                                                                const std::string& allowed,
                                                                const std::string& probe) {
  std::vector<std::string> paths =
      Refuse(name, "resource.k8s.io", "resourceclaims", "UPDATE", allowed);
  const std::string path = ClaimPath(ns_, probe);
  EXPECT_TRUE(Eventually([&] {
    json c = Get(path);
    if (!c.is_object()) return false;
    c["metadata"]["labels"] = {{"probe", "1"}};
    absl::StatusOr<Response> r = client_->Do("PUT", path, c.dump());
    return r.ok() && !r->ok();
  })) << "the policy "
      << name << " was never in force";
  return paths;
}

std::vector<std::string> SchedulerPlaneTest::RefusePodDeletes(const std::string& name,
                                                              const std::string& pod) {
  std::vector<std::string> paths =
      Refuse(name, "", "pods", "DELETE", util::Cat("oldObject.metadata.name != '", pod, "'"));
  EXPECT_TRUE(Eventually([&] {
    absl::StatusOr<Response> r = client_->Do("DELETE", PodPath(ns_, pod) + "?dryRun=All");
    return r.ok() && !r->ok();
  })) << "the policy "
      << name << " was never in force";
  return paths;
}

}  // namespace gpuplane::kube
