// The live scheduler's writes (kube/scheduler.h): each job's claims, volumes and Binding, a
// gang's intent around its members, and the reports and evictions of preemption.
#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/numbers.h"
#include "api/storage_types.h"
#include "kube/internal/scheduler_job.h"
#include "kube/json_field.h"
#include "util/strings.h"

namespace gpuplane::kube {

using internal::KeyPart;
using internal::Log;
using nlohmann::json;

void Scheduler::WriteAll(std::vector<Job>& jobs) {
  // The writes, in parallel; the cycle ends when all are done.
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  int n = std::max(1, std::min<int>(options_.writers, static_cast<int>(jobs.size())));
  for (int w = 0; w < n && !jobs.empty(); ++w) {
    workers.emplace_back([&] {
      for (size_t j = next++; j < jobs.size(); j = next++) Execute(jobs[j]);
    });
  }
  for (std::thread& t : workers) t.join();
}

bool Scheduler::WritePod(const Job& job, size_t i, std::vector<std::string>& allocated) {
  const Job::Member& m = job.members[i];
  for (const auto& [key, allocation] : m.claims) {
    std::optional<json> claim = cache_->Get("ResourceClaim", key);
    if (!claim) {
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ResourceClaim ", key,
                    " is not in the cache"));
      return false;
    }
    absl::StatusOr<json> written = writer_.AllocateClaim(*claim, allocation, m.pod);
    if (!written.ok()) {
      metrics_.ApiError("claim");
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ",
                    std::string(written.status().message())));
      return false;
    }
    cache_->Assume("ResourceClaim", *written);
    allocated.push_back(key);
  }
  // As kube-scheduler's VolumeBinding does: a volume reserved for each claim, or the node named
  // for its provisioner, which makes the volume where the pod runs.
  for (const sched::VolumeChoice& v : m.volumes) {
    absl::Status s;
    if (v.volume.empty()) {
      s = writer_.Annotate(PersistentVolumeClaimPath(KeyPart(v.claim, 0), KeyPart(v.claim, 1)),
                           api::kSelectedNodeAnnotation, m.node);
    } else {
      std::optional<json> pv = cache_->Get("PersistentVolume", v.volume);
      std::string rv(pv ? Str(Field(*pv, "metadata"), "resourceVersion") : "");
      s = writer_.ReserveVolume(v.volume, rv, KeyPart(v.claim, 0), KeyPart(v.claim, 1), v.uid);
    }
    if (!s.ok()) {
      metrics_.ApiError("volume");
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ", std::string(s.message())));
      return false;
    }
  }
  if (!m.extended_key.empty() &&
      Str(Field(Field(m.cached_pod, "status"), "extendedResourceClaimStatus"),
          "resourceClaimName") != KeyPart(m.extended_key, 1)) {
    absl::Status s =
        writer_.SetExtendedClaimStatus(m.pod, KeyPart(m.extended_key, 1), m.extended_mappings);
    if (!s.ok()) {
      metrics_.ApiError("pod status");
      Log(std::string(s.message()));
      return false;
    }
  }
  absl::Status s = writer_.Bind(m.pod, m.node);
  if (!s.ok() && s.code() != absl::StatusCode::kAlreadyExists) {
    metrics_.ApiError("binding");
    Log(std::string(s.message()));
    return false;
  }
  json pod = m.cached_pod;
  pod["spec"]["nodeName"] = m.node;
  std::string rv(Str(Field(pod, "metadata"), "resourceVersion"));
  int64_t v = 0;
  pod["metadata"]["resourceVersion"] = std::to_string((absl::SimpleAtoi(rv, &v) ? v : 0) + 1);
  cache_->Assume("Pod", std::move(pod));
  metrics_.Attempt("scheduled");
  if (m.created_ago >= 0) metrics_.Latency(m.created_ago);
  return true;
}

void Scheduler::Report(Job& job) {
  const PodRef& pod = job.members[0].pod;
  // The preemptor's report and nomination first: a pass that sees a victim leaving then also
  // sees the node held for the pod it leaves for (pods come in one watch stream, in order),
  // so it waits instead of preempting another victim; and no victim goes for a preemptor
  // that could not be told (deleted, say).
  absl::Status s = writer_.MarkUnschedulable(pod, job.unschedulable, options_.name, job.nominated);
  metrics_.Attempt("unschedulable");
  if (!s.ok()) {
    if (s.code() != absl::StatusCode::kNotFound) {
      metrics_.ApiError("unschedulable");
      Log(std::string(s.message()));
    }
    return;
  }
  // Every victim marked before any is evicted: a leader that finds a marked victim still
  // running finishes the preemption of its whole job (Recover).
  std::string why = util::Cat("preempted by ", pod.ns, "/", pod.name, " (", options_.name,
                              "), which will run on node ", job.nominated);
  for (const auto& [victim, eviction] : job.victims) {
    if (!leading_()) return;
    if (absl::Status m = writer_.MarkPreempted(victim, why, options_.name); !m.ok()) {
      metrics_.ApiError("preemption");
      Log(std::string(m.message()));
    }
  }
  bool evicted = true;  // else the job is tried again after its backoff, victims and all
  for (const auto& [victim, eviction] : job.victims) {
    if (!leading_()) return;
    if (absl::Status e = writer_.Evict(victim, eviction); e.ok()) {
      ++metrics_.victims;
    } else {
      evicted = false;
      metrics_.ApiError("preemption");
      Log(std::string(e.message()));
    }
  }
  if (!job.victims.empty() && evicted) ++metrics_.preemptions;
  job.done = evicted;
}

bool Scheduler::CreateExtendedClaims(Job& job) {
  for (Job::Member& m : job.members) {
    if (m.extended_create.is_null()) continue;
    if (!leading_()) return false;
    absl::StatusOr<json> made = writer_.CreateClaim(m.pod.ns, m.extended_create);
    if (!made.ok()) {
      metrics_.ApiError("claim");
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ", std::string(made.status().message())));
      return false;
    }
    std::string key = util::Cat(m.pod.ns, "/", Str(Field(*made, "metadata"), "name"));
    for (auto& [claim, allocation] : m.claims) {
      if (claim == m.extended_key) claim = key;
    }
    m.extended_key = key;
    m.extended_create = json();
    cache_->Assume("ResourceClaim", std::move(*made));
  }
  return true;
}

void Scheduler::Execute(Job& job) {
  if (!leading_()) return;
  if (!job.unschedulable.empty()) return Report(job);
  // Made before anything is written for the pods: a claim made and not used is found again
  // (by its owner) in the next cycle, and the garbage collector deletes it with its pod.
  if (!CreateExtendedClaims(job)) {
    metrics_.Attempt("error");
    return;
  }
  if (job.gang_kind.empty()) {
    std::vector<std::string> allocated;
    if (WritePod(job, 0, allocated)) {
      job.done = true;
      return;
    }
    for (const std::string& key : allocated) {
      absl::Status s =
          writer_.ReleaseClaim(KeyPart(key, 0), KeyPart(key, 1), job.members[0].pod.uid);
      if (!s.ok()) Log(std::string(s.message()));
    }
    metrics_.Attempt("error");
    return;
  }
  // A gang: the intent first, then every member, then the intent removed.
  json intent = IntentOf(job);
  std::string path = GangObjectPath(job.gang_kind, job.gang_ns, job.gang_name);
  if (absl::Status s = writer_.Annotate(path, kGangIntent, intent.dump()); !s.ok()) {
    metrics_.ApiError("intent");
    Log(std::string(s.message()));
    return;
  }
  bool all = true;
  for (size_t i = 0; i < job.members.size() && all; ++i) {
    std::vector<std::string> allocated;
    all = leading_() && WritePod(job, i, allocated);
  }
  if (!all) {
    if (!leading_()) return;  // the next leader finishes the intent
    RollBack(job.gang_ns, intent);
    metrics_.Attempt("error");
  }
  if (absl::Status s = writer_.Annotate(path, kGangIntent, std::nullopt); !s.ok()) {
    metrics_.ApiError("intent");
    Log(std::string(s.message()));
    return;
  }
  job.done = all;
}

}  // namespace gpuplane::kube
