// What the live scheduler's files share inside kube/ (scheduler.cc plans jobs,
// scheduler_writes.cc writes them, scheduler_recovery.cc finishes what a previous leader left):
// the unit of writes, Scheduler::Job, a plain value that owns copies of what it writes; and
// two pure helpers. Log is thread-safe (one fprintf per line). Internal to kube/.
#ifndef GPUPLANE_KUBE_INTERNAL_SCHEDULER_JOB_H_
#define GPUPLANE_KUBE_INTERNAL_SCHEDULER_JOB_H_

#include <string>
#include <utility>
#include <vector>

#include "kube/scheduler.h"
#include "kube/writer.h"
#include "nlohmann/json.hpp"
#include "sched/snapshot.h"

namespace gpuplane::kube {

namespace internal {

// One line on stderr, prefixed "gpuplane scheduler: ".
void Log(const std::string& msg);

// Part `part` of a "ns/name" key (0: the namespace, 1: the name); "" past the end.
std::string KeyPart(const std::string& key, size_t part);

}  // namespace internal

// One unit of writes: a single pod, or the members of one gang object decided together; or
// one pod's unschedulable report.
struct Scheduler::Job {
  struct Member {
    PodRef pod;
    std::string node;
    double created_ago = -1;
    nlohmann::json cached_pod;
    std::vector<std::pair<std::string, nlohmann::json>> claims;  // "ns/name", allocation
    // Unbound WaitForFirstConsumer claims: each reserved its volume, or annotated with the node
    // to provision one, before binding.
    std::vector<sched::VolumeChoice> volumes;
    // The claim for the pod's extended resources backed by DRA, among `claims` ("" when none):
    // created first when `extended_create` is not null (the object to create), and named in
    // the pod's status with `extended_mappings` before binding.
    std::string extended_key;
    nlohmann::json extended_create;
    nlohmann::json extended_mappings;
  };
  std::string gang_kind, gang_ns, gang_name;  // empty for single pods
  std::vector<Member> members;
  std::string unschedulable;  // the reason to report, for a report
  // A report of a pod that preempts: the node it waits for, and the victims this job evicts
  // (with whether a PodDisruptionBudget covers each: then through the Eviction API).
  std::string nominated;
  std::vector<std::pair<PodRef, bool>> victims;
  bool done = false;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_INTERNAL_SCHEDULER_JOB_H_
