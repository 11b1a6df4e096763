// What a new leader of the live scheduler finishes (kube/scheduler.h): preemptions a previous
// leader began, and open gang intents rolled forward or back.
#include <set>
#include <tuple>

#include "kube/disruption_budget.h"
#include "kube/informer.h"
#include "kube/internal/scheduler_job.h"
#include "kube/json_field.h"
#include "sched/pod_set.h"
#include "util/strings.h"

namespace gpuplane::kube {

using internal::KeyPart;
using internal::Log;
using nlohmann::json;

namespace {

using DeviceId = std::tuple<std::string, std::string, std::string>;  // driver, pool, device

void AddDevices(const json& allocation, std::set<DeviceId>& out) {
  if (!allocation.is_object() || !allocation.contains("devices")) return;
  for (const json& r : Field(allocation["devices"], "results")) {
    out.emplace(Str(r, "driver"), Str(r, "pool"), Str(r, "device"));
  }
}

// The job a running pod (as the API serves it) belongs to: its PodGroup or Workload pod group
// and replica, else the pod itself (as sched/preempt.cc groups victims).
std::string JobOf(const json& pod) {
  const json& meta = Field(pod, "metadata");
  std::string_view ns = Str(meta, "namespace");
  const json& labels = Field(meta, "labels");
  if (labels.contains(sched::kPodGroupLabel) && labels[sched::kPodGroupLabel].is_string()) {
    return util::Cat("PodGroup/", ns, "/", labels[sched::kPodGroupLabel].get<std::string>());
  }
  const json& spec = Field(pod, "spec");
  if (spec.contains("workloadRef") && spec["workloadRef"].is_object()) {
    const json& w = spec["workloadRef"];
    return util::Cat("Workload/", ns, "/", Str(w, "name"), "/", Str(w, "podGroup"), "/",
                     Str(w, "podGroupReplicaKey"));
  }
  return util::Cat("Pod/", ns, "/", Str(meta, "name"));
}

// Whether this scheduler marked the pod preempted (DisruptionTarget, PreemptionByScheduler,
// naming it).
bool MarkedBy(const json& pod, const std::string& scheduler) {
  const json& status = Field(pod, "status");
  for (const json& c : Field(status, "conditions")) {
    if (Str(c, "type") == "DisruptionTarget" && Str(c, "status") == "True" &&
        Str(c, "reason") == "PreemptionByScheduler" &&
        Str(c, "message").find(util::Cat("(", scheduler, ")")) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

json Scheduler::IntentOf(const Job& job) {
  json intent = {{"members", json::array()}};
  for (const Job::Member& m : job.members) {
    json claims = json::array();
    for (const auto& [key, allocation] : m.claims) {
      claims.push_back({{"name", KeyPart(key, 1)}, {"allocation", allocation}});
    }
    json member = {{"pod", m.pod.name}, {"uid", m.pod.uid}, {"node", m.node}, {"claims", claims}};
    if (!m.extended_key.empty()) {
      member["extended"] = {{"claim", KeyPart(m.extended_key, 1)},
                            {"mappings", m.extended_mappings}};
    }
    for (const sched::VolumeChoice& v : m.volumes) {
      json choice = {{"claim", KeyPart(v.claim, 1)}, {"uid", v.uid}};
      if (!v.volume.empty()) choice["volume"] = v.volume;
      member["volumes"].push_back(std::move(choice));
    }
    intent["members"].push_back(std::move(member));
  }
  return intent;
}

void Scheduler::FinishPreemptions() {
  std::vector<json> pods = cache_->List("Pod");
  std::set<std::string> jobs;  // jobs with a victim this scheduler marked and that still runs
  auto running = [](const json& p) {
    return !Str(Field(p, "spec"), "nodeName").empty() &&
           !Field(p, "metadata").contains("deletionTimestamp");
  };
  for (const json& p : pods) {
    if (running(p) && MarkedBy(p, options_.name)) jobs.insert(JobOf(p));
  }
  if (jobs.empty()) return;
  std::vector<DisruptionBudget> budgets = Budgets(cache_->List("PodDisruptionBudget"));
  for (const json& p : pods) {
    if (!running(p) || !jobs.contains(JobOf(p))) continue;
    const json& meta = Field(p, "metadata");
    PodRef ref{std::string(Str(meta, "namespace")), std::string(Str(meta, "name")),
               std::string(Str(meta, "uid"))};
    std::map<std::string, std::string> labels;
    for (const auto& [k, v] : Field(meta, "labels").items()) {
      if (v.is_string()) labels[k] = v.get<std::string>();
    }
    bool covered = false;
    for (const DisruptionBudget& b : budgets) covered = covered || Covers(b, ref.ns, labels);
    if (!MarkedBy(p, options_.name)) {
      std::string why = util::Cat("preempted (", options_.name,
                                  "): a member of a job whose preemption a previous leader began");
      if (absl::Status s = writer_.MarkPreempted(ref, why, options_.name); !s.ok()) {
        Log(std::string(s.message()));
      }
    }
    if (absl::Status s = writer_.Evict(ref, covered); s.ok()) {
      ++metrics_.victims;
      Log(util::Cat("pod ", ref.ns, "/", ref.name,
                    ": a preemption a previous leader began is finished (its job goes whole)"));
    } else {
      Log(std::string(s.message()));
    }
  }
}

void Scheduler::Recover() {
  FinishPreemptions();
  for (const char* kind : {"PodGroup", "Workload"}) {
    for (const json& obj : cache_->List(kind)) {
      const json& meta = Field(obj, "metadata");
      const json& annotations = Field(meta, "annotations");
      if (!annotations.contains(kGangIntent)) continue;
      std::string ns(Str(meta, "namespace"));
      std::string name(Str(meta, "name"));
      const json& text = annotations[kGangIntent];
      std::optional<json> intent =
          text.is_string() ? ReadIntent(text.get<std::string>()) : std::nullopt;
      if (!intent) {
        Log(util::Cat(kind, " ", ns, "/", name, ": the annotation ", kGangIntent,
                      " is not an intent this scheduler wrote; removed without acting on it"));
      } else {
        bool forward = RollForward(ns, *intent);
        if (!forward) RollBack(ns, *intent);
        Log(util::Cat(kind, " ", ns, "/", name, ": an open gang intent rolled ",
                      forward ? "forward (every member bound as planned)"
                              : "back (claims released, bound members deleted)"));
        ++(forward ? metrics_.intents_forward : metrics_.intents_back);
      }
      if (absl::Status s =
              writer_.Annotate(GangObjectPath(kind, ns, name), kGangIntent, std::nullopt);
          !s.ok()) {
        Log(std::string(s.message()));
      }
    }
  }
}

bool Scheduler::RollForward(const std::string& ns, const json& intent) {
  // Devices held by claims outside the intent: any of them in the plan makes it invalid.
  std::set<std::string> planned;
  for (const json& m : intent["members"]) {
    for (const json& c : Field(m, "claims")) {
      planned.insert(util::Cat(ns, "/", Str(c, "name")));
    }
  }
  std::set<DeviceId> taken, wanted;
  for (const json& c : cache_->List("ResourceClaim")) {
    if (planned.contains(Informer::KeyOf(c))) continue;
    if (c.contains("status") && c["status"].contains("allocation")) {
      AddDevices(c["status"]["allocation"], taken);
    }
  }
  Job job;
  for (const json& m : intent["members"]) {
    const std::string name(Str(m, "pod")), uid(Str(m, "uid")), node(Str(m, "node"));
    std::optional<json> pod = cache_->Get("Pod", util::Cat(ns, "/", name));
    if (!pod || Str(Field(*pod, "metadata"), "uid") != uid) return false;
    std::string_view bound = Str(Field(*pod, "spec"), "nodeName");
    if (!bound.empty() && bound != node) return false;
    Job::Member member{{ns, name, uid}, node, -1, *pod, {}};
    for (const json& c : Field(m, "claims")) {
      AddDevices(c["allocation"], wanted);
      member.claims.emplace_back(util::Cat(ns, "/", Str(c, "name")), c["allocation"]);
    }
    if (const json& e = Field(m, "extended"); e.is_object()) {
      member.extended_key = util::Cat(ns, "/", Str(e, "claim"));
      member.extended_mappings = Field(e, "mappings");
    }
    for (const json& v : Field(m, "volumes")) {
      member.volumes.push_back({util::Cat(ns, "/", Str(v, "claim")), std::string(Str(v, "uid")),
                                std::string(Str(v, "volume"))});
    }
    job.members.push_back(std::move(member));
  }
  for (const DeviceId& d : wanted) {
    if (taken.contains(d)) return false;
  }
  for (size_t i = 0; i < job.members.size(); ++i) {
    std::vector<std::string> allocated;
    if (!WritePod(job, i, allocated)) return false;
  }
  return true;
}

void Scheduler::RollBack(const std::string& ns, const json& intent) {
  for (const json& m : intent["members"]) {
    PodRef pod{ns, std::string(Str(m, "pod")), std::string(Str(m, "uid"))};
    std::optional<json> cached = cache_->Get("Pod", ns + "/" + pod.name);
    // A member bound meanwhile is deleted (its controller makes a new one); the API is asked,
    // not the cache, which may not have seen the binding yet.
    absl::StatusOr<Response> live = client_.Get(PodPath(ns, pod.name));
    json got = live.ok() && live->ok() ? json::parse(live->body, nullptr, false) : json();
    bool bound = !Str(Field(got, "spec"), "nodeName").empty();
    if (bound || (cached && !Str(Field(*cached, "spec"), "nodeName").empty())) {
      if (absl::Status s = writer_.DeletePod(pod); !s.ok()) Log(std::string(s.message()));
    }
    for (const json& c : Field(m, "claims")) {
      if (absl::Status s = writer_.ReleaseClaim(ns, std::string(Str(c, "name")), pod.uid);
          !s.ok()) {
        Log(std::string(s.message()));
      }
    }
  }
}

}  // namespace gpuplane::kube
