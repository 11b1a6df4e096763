#include "kube/writer.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/writer.h"
#include "kube/json_field.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

using nlohmann::json;

constexpr int kAttempts = 8;  // conflicts in a row before giving up on a claim

std::string Now() { return absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone()); }

// A failed response as a status: the HTTP code's kind, naming what was written.
absl::Status Failed(const std::string& what, const Response& r) {
  std::string msg = util::Cat(what, ": HTTP ", r.status, ": ", StatusMessage(r));
  switch (r.status) {
    case 404:
      return absl::NotFoundError(msg);
    case 409:
      return absl::AbortedError(msg);
    case 401:
    case 403:
      return absl::PermissionDeniedError(msg);
    case 422:
    case 400:
      return absl::InvalidArgumentError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

// The devices of an allocation as a set, so two allocations compare whatever their order.
std::set<std::tuple<std::string, std::string, std::string, std::string>> Devices(const json& a) {
  std::set<std::tuple<std::string, std::string, std::string, std::string>> out;
  for (const json& r : Field(Field(a, "devices"), "results")) {
    out.emplace(Str(r, "request"), Str(r, "driver"), Str(r, "pool"), Str(r, "device"));
  }
  return out;
}

bool HasFinalizer(const json& obj) {
  const json& f = Field(Field(obj, "metadata"), "finalizers");
  return std::find(f.begin(), f.end(), kClaimFinalizer) != f.end();
}

bool ReservedFor(const json& claim, const std::string& uid) {
  for (const json& r : Field(Field(claim, "status"), "reservedFor")) {
    if (Str(r, "uid") == uid) return true;
  }
  return false;
}

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

// A response body that must be an object (the claim as written).
absl::StatusOr<json> ObjectOf(const std::string& what, const Response& r) {
  json j = json::parse(r.body, nullptr, false);
  if (!j.is_object()) return absl::UnavailableError(what + ": the server's answer is not JSON");
  return j;
}

}  // namespace

std::string ClaimPath(const std::string& ns, const std::string& name) {
  return util::Cat("/apis/resource.k8s.io/v1/namespaces/", ns, "/resourceclaims/", name);
}

std::string PodPath(const std::string& ns, const std::string& name) {
  return util::Cat("/api/v1/namespaces/", ns, "/pods/", name);
}

std::string PersistentVolumeClaimPath(const std::string& ns, const std::string& name) {
  return util::Cat("/api/v1/namespaces/", ns, "/persistentvolumeclaims/", name);
}

std::string GangObjectPath(const std::string& kind, const std::string& ns,
                           const std::string& name) {
  if (kind == "Workload") {
    return util::Cat("/apis/scheduling.k8s.io/v1alpha1/namespaces/", ns, "/workloads/", name);
  }
  return util::Cat("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/", ns, "/podgroups/", name);
}

json AllocationJson(const api::AllocationResult& a) {
  api::ResourceClaim c;
  c.api_version = api::kResourceApiVersion;
  c.kind = "ResourceClaim";
  c.metadata.name = "x";
  c.status.allocation = a;
  json j = json::parse(api::ToJson(api::EncodeObject(api::Object(c))));
  return j["status"]["allocation"];
}

absl::StatusOr<json> Writer::AllocateClaim(json claim, const json& allocation,
                                           const PodRef& pod) const {
  const std::string ns(Str(Field(claim, "metadata"), "namespace"));
  const std::string name(Str(Field(claim, "metadata"), "name"));
  const std::string path = ClaimPath(ns, name);
  const std::string what = util::Cat("ResourceClaim ", Key(ns, name));
  auto refresh = [&]() -> absl::Status {
    absl::StatusOr<Response> r = client_.Get(path);
    if (!r.ok()) return r.status();
    if (!r->ok()) return Failed(what, *r);
    claim = json::parse(r->body, nullptr, false);
    return claim.is_object() ? absl::OkStatus() : absl::InternalError(what + ": not JSON");
  };
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    json& status = claim["status"];
    bool allocated = status.contains("allocation") && !status["allocation"].is_null();
    if (allocated && Devices(status["allocation"]) != Devices(allocation)) {
      return absl::AbortedError(
          util::Cat(what, " was allocated to other devices meanwhile (another scheduler?)"));
    }
    if (!HasFinalizer(claim)) {
      claim["metadata"]["finalizers"].push_back(kClaimFinalizer);
      absl::StatusOr<Response> r = client_.Do("PUT", path, claim.dump(), "application/json");
      if (!r.ok()) return r.status();
      if (r->status == 409) {
        if (absl::Status s = refresh(); !s.ok()) return s;
        continue;
      }
      if (!r->ok()) return Failed(what + " (finalizer)", *r);
      absl::StatusOr<json> got = ObjectOf(what, *r);
      if (!got.ok()) return got.status();
      claim = std::move(*got);
    }
    if (allocated && ReservedFor(claim, pod.uid)) return claim;
    json& st = claim["status"];
    if (!allocated) st["allocation"] = allocation;
    st["reservedFor"].push_back({{"resource", "pods"}, {"name", pod.name}, {"uid", pod.uid}});
    absl::StatusOr<Response> r =
        client_.Do("PUT", path + "/status", claim.dump(), "application/json");
    if (!r.ok()) return r.status();
    if (r->status == 409) {
      if (absl::Status s = refresh(); !s.ok()) return s;
      continue;
    }
    if (!r->ok()) return Failed(what + " (status)", *r);
    return ObjectOf(what, *r);
  }
  return absl::AbortedError(util::Cat(what, ": ", kAttempts, " conflicts in a row"));
}

absl::Status Writer::ReleaseClaim(const std::string& ns, const std::string& name,
                                  const std::string& pod_uid) const {
  const std::string path = ClaimPath(ns, name);
  const std::string what = util::Cat("ResourceClaim ", Key(ns, name));
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    absl::StatusOr<Response> got = client_.Get(path);
    if (!got.ok()) return got.status();
    if (got->status == 404) return absl::OkStatus();
    if (!got->ok()) return Failed(what, *got);
    absl::StatusOr<json> read = ObjectOf(what, *got);
    if (!read.ok()) return read.status();
    json claim = std::move(*read);
    json& st = claim["status"];
    if (!st.is_object()) st = json::object();
    json kept = json::array();
    for (const json& r : Field(st, "reservedFor")) {
      if (Str(r, "uid") != pod_uid) kept.push_back(r);
    }
    bool changed = kept.size() != Field(st, "reservedFor").size();
    if (kept.empty() && st.contains("allocation")) {
      st.erase("allocation");
      changed = true;
    }
    if (changed) {
      if (kept.empty()) {
        st.erase("reservedFor");
      } else {
        st["reservedFor"] = kept;
      }
      absl::StatusOr<Response> r =
          client_.Do("PUT", path + "/status", claim.dump(), "application/json");
      if (!r.ok()) return r.status();
      if (r->status == 409) continue;
      if (r->status == 404) return absl::OkStatus();
      if (!r->ok()) return Failed(what + " (status)", *r);
      absl::StatusOr<json> written = ObjectOf(what, *r);
      if (!written.ok()) return written.status();
      claim = std::move(*written);
    }
    if (!kept.empty() || !HasFinalizer(claim)) return absl::OkStatus();
    json& f = claim["metadata"]["finalizers"];
    f.erase(std::remove(f.begin(), f.end(), kClaimFinalizer), f.end());
    absl::StatusOr<Response> r = client_.Do("PUT", path, claim.dump(), "application/json");
    if (!r.ok()) return r.status();
    if (r->status == 409) continue;
    if (r->ok() || r->status == 404) return absl::OkStatus();
    return Failed(what + " (finalizer)", *r);
  }
  return absl::AbortedError(util::Cat(what, ": ", kAttempts, " conflicts in a row"));
}

absl::StatusOr<json> Writer::CreateClaim(const std::string& ns, const json& claim) const {
  std::string what = util::Cat("ResourceClaim ", ns, "/",
                               Str(Field(claim, "metadata"), "generateName"), "* (creating it)");
  absl::StatusOr<Response> r =
      client_.Do("POST", util::Cat("/apis/resource.k8s.io/v1/namespaces/", ns, "/resourceclaims"),
                 claim.dump(), "application/json");
  if (!r.ok()) return r.status();
  if (!r->ok()) return Failed(what, *r);
  return ObjectOf(what, *r);
}

absl::Status Writer::SetExtendedClaimStatus(const PodRef& pod, const std::string& claim,
                                            const json& mappings) const {
  json patch = {{"metadata", {{"uid", pod.uid}}},
                {"status",
                 {{"extendedResourceClaimStatus",
                   {{"resourceClaimName", claim}, {"requestMappings", mappings}}}}}};
  std::string what =
      util::Cat("Pod ", Key(pod.ns, pod.name), " (status.extendedResourceClaimStatus)");
  absl::StatusOr<Response> r = client_.Do("PATCH", PodPath(pod.ns, pod.name) + "/status",
                                          patch.dump(), "application/merge-patch+json");
  if (!r.ok()) return r.status();
  return r->ok() ? absl::OkStatus() : Failed(what, *r);
}

absl::Status Writer::Bind(const PodRef& pod, const std::string& node) const {
  json b = {{"apiVersion", "v1"},
            {"kind", "Binding"},
            {"metadata", {{"name", pod.name}, {"namespace", pod.ns}, {"uid", pod.uid}}},
            {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  std::string what = util::Cat("Pod ", Key(pod.ns, pod.name), " binding to ", node);
  absl::StatusOr<Response> r =
      client_.Do("POST", PodPath(pod.ns, pod.name) + "/binding", b.dump(), "application/json");
  if (!r.ok()) return r.status();
  if (r->status == 409) return absl::AlreadyExistsError(what + ": " + StatusMessage(*r));
  return r->ok() ? absl::OkStatus() : Failed(what, *r);
}

namespace {

json PodEvent(const PodRef& pod, const std::string& reason, const std::string& message,
              const std::string& type, const std::string& component, const std::string& now) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"generateName", pod.name + "."}, {"namespace", pod.ns}}},
          {"involvedObject",
           {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"namespace", pod.ns},
            {"name", pod.name},
            {"uid", pod.uid}}},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"source", {{"component", component}}},
          {"reportingComponent", component},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"count", 1}};
}

}  // namespace

absl::Status Writer::PatchCondition(const PodRef& pod, const json& condition,
                                    const std::string& nominated) const {
  json status = {{"conditions", json::array({condition})}};
  if (!nominated.empty()) status["nominatedNodeName"] = nominated;
  json patch = {{"status", status}};
  std::string what =
      util::Cat("Pod ", Key(pod.ns, pod.name), " (", condition.value("type", ""), " condition)");
  absl::StatusOr<Response> r = client_.Do("PATCH", PodPath(pod.ns, pod.name) + "/status",
                                          patch.dump(), "application/strategic-merge-patch+json");
  if (!r.ok()) return r.status();
  return r->ok() ? absl::OkStatus() : Failed(what, *r);
}

absl::Status Writer::PostEvent(const json& event) const {
  const json& o = event["involvedObject"];
  std::string ns = o.value("namespace", "");
  absl::StatusOr<Response> r = client_.Do("POST", util::Cat("/api/v1/namespaces/", ns, "/events"),
                                          event.dump(), "application/json");
  if (!r.ok()) return r.status();
  return r->ok() ? absl::OkStatus()
                 : Failed(util::Cat("Pod ", Key(ns, o.value("name", "")), " (",
                                    event.value("reason", ""), " Event)"),
                          *r);
}

absl::Status Writer::MarkUnschedulable(const PodRef& pod, const std::string& message,
                                       const std::string& component,
                                       const std::string& nominated) const {
  std::string now = Now();
  json condition = {{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", message},
                    {"lastTransitionTime", now}};
  if (absl::Status s = PatchCondition(pod, condition, nominated); !s.ok()) return s;
  return PostEvent(PodEvent(pod, "FailedScheduling", message, "Warning", component, now));
}

absl::Status Writer::MarkPreempted(const PodRef& victim, const std::string& message,
                                   const std::string& component) const {
  std::string now = Now();
  json condition = {{"type", "DisruptionTarget"},
                    {"status", "True"},
                    {"reason", "PreemptionByScheduler"},
                    {"message", message},
                    {"lastTransitionTime", now}};
  absl::Status s = PatchCondition(victim, condition, "");
  if (s.code() == absl::StatusCode::kNotFound) return absl::OkStatus();  // gone already
  if (!s.ok()) return s;
  return PostEvent(PodEvent(victim, "Preempted", message, "Normal", component, now));
}

absl::Status Writer::Evict(const PodRef& victim, bool eviction) const {
  std::string what = util::Cat("Pod ", Key(victim.ns, victim.name));
  absl::StatusOr<Response> r;
  if (eviction) {
    json e = {{"apiVersion", "policy/v1"},
              {"kind", "Eviction"},
              {"metadata", {{"name", victim.name}, {"namespace", victim.ns}}},
              {"deleteOptions", {{"preconditions", {{"uid", victim.uid}}}}}};
    r = client_.Do("POST", PodPath(victim.ns, victim.name) + "/eviction", e.dump(),
                   "application/json");
    what += " (eviction)";
  } else {
    // The pod's own terminationGracePeriodSeconds applies.
    json opts = {
        {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", victim.uid}}}};
    r = client_.Do("DELETE", PodPath(victim.ns, victim.name), opts.dump(), "application/json");
    what += " (delete)";
  }
  if (!r.ok()) return r.status();
  if (r->ok() || r->status == 404 || r->status == 409) return absl::OkStatus();
  if (r->status == 429) {
    return absl::ResourceExhaustedError(
        util::Cat(what, ": a PodDisruptionBudget allows no disruption now: ", StatusMessage(*r)));
  }
  return Failed(what, *r);
}

absl::Status Writer::DeletePod(const PodRef& pod) const {
  json opts = {{"apiVersion", "v1"},
               {"kind", "DeleteOptions"},
               {"gracePeriodSeconds", 0},
               {"preconditions", {{"uid", pod.uid}}}};
  absl::StatusOr<Response> r =
      client_.Do("DELETE", PodPath(pod.ns, pod.name), opts.dump(), "application/json");
  if (!r.ok()) return r.status();
  // 409: the uid differs, the pod is another (recreated) one.
  if (r->ok() || r->status == 404 || r->status == 409) return absl::OkStatus();
  return Failed(util::Cat("Pod ", Key(pod.ns, pod.name), " (delete)"), *r);
}

absl::Status Writer::ReserveVolume(const std::string& volume, const std::string& resource_version,
                                   const std::string& claim_ns, const std::string& claim_name,
                                   const std::string& claim_uid) const {
  // The resourceVersion in a merge patch makes it conditional (409 when the volume changed).
  json patch = {{"metadata",
                 {{"resourceVersion", resource_version},
                  {"annotations", {{"pv.kubernetes.io/bound-by-controller", "yes"}}}}},
                {"spec",
                 {{"claimRef",
                   {{"kind", "PersistentVolumeClaim"},
                    {"apiVersion", "v1"},
                    {"namespace", claim_ns},
                    {"name", claim_name},
                    {"uid", claim_uid}}}}}};
  std::string path = "/api/v1/persistentvolumes/" + volume;
  absl::StatusOr<Response> r =
      client_.Do("PATCH", path, patch.dump(), "application/merge-patch+json");
  if (!r.ok()) return r.status();
  return r->ok() ? absl::OkStatus()
                 : Failed(util::Cat("PersistentVolume ", volume, " (for claim ", claim_ns, "/",
                                    claim_name, ")"),
                          *r);
}

absl::Status Writer::Annotate(const std::string& path, const std::string& key,
                              const std::optional<std::string>& value) const {
  json v = value ? json(*value) : json(nullptr);
  json patch = {{"metadata", {{"annotations", {{key, v}}}}}};
  absl::StatusOr<Response> r =
      client_.Do("PATCH", path, patch.dump(), "application/merge-patch+json");
  if (!r.ok()) return r.status();
  return r->ok() ? absl::OkStatus() : Failed(util::Cat(path, " (annotation ", key, ")"), *r);
}

}  // namespace gpuplane::kube
