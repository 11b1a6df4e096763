// The scheduler's writes to the API server, each as Kubernetes' own scheduler makes it:
// allocating a claim (the delete-protection finalizer, then status.allocation and a
// reservedFor entry, with the object's resourceVersion; on 409 Conflict the claim is read
// again and the write retried, unless someone else allocated it differently meanwhile),
// releasing one, creating the claim for a pod's extended resources and naming it in the pod's
// status, binding a pod to a node, marking a pod unschedulable (PodScheduled=False
// with the reason, and nominatedNodeName when it preempted) with a FailedScheduling Event,
// preempting a pod (DisruptionTarget, then the Eviction API or a graceful delete), deleting a
// pod, and annotating a gang object (PodGroup or Workload) with the gang's intent. Errors name the
// object and carry the server's message. Thread-safety: stateless apart from the Client; any
// thread. Borrows nothing.
#ifndef GPUPLANE_KUBE_WRITER_H_
#define GPUPLANE_KUBE_WRITER_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/resource_types.h"
#include "kube/client.h"

namespace gpuplane::kube {

inline constexpr char kClaimFinalizer[] = "resource.kubernetes.io/delete-protection";

struct PodRef {
  std::string ns, name, uid;
};

// The API path of a claim, a pod, or a gang object (kind "PodGroup" or "Workload").
std::string ClaimPath(const std::string& ns, const std::string& name);
std::string PodPath(const std::string& ns, const std::string& name);
std::string PersistentVolumeClaimPath(const std::string& ns, const std::string& name);
std::string GangObjectPath(const std::string& kind, const std::string& ns, const std::string& name);

// The allocation as the API writes it (status.allocation).
nlohmann::json AllocationJson(const api::AllocationResult& a);

class Writer {
 public:
  explicit Writer(Client client) : client_(std::move(client)) {}

  // Allocates the claim (`claim` as cached; read again on conflict) to `pod` with `allocation`
  // and returns the claim as written. A claim already allocated with the same devices only
  // gains the reservedFor entry. Aborted when it is allocated to other devices; NotFound when
  // it is gone.
  absl::StatusOr<nlohmann::json> AllocateClaim(nlohmann::json claim,
                                               const nlohmann::json& allocation,
                                               const PodRef& pod) const;
  // Removes `pod`'s reservedFor entry; when no other consumer remains, also the allocation and
  // the finalizer. A claim already gone is fine.
  absl::Status ReleaseClaim(const std::string& ns, const std::string& name,
                            const std::string& pod_uid) const;
  // Creates the claim made for a pod's extended resources backed by DRA (`claim`: the object
  // with metadata.generateName, no name) and returns it as created, its name the server's.
  absl::StatusOr<nlohmann::json> CreateClaim(const std::string& ns,
                                             const nlohmann::json& claim) const;
  // Names that claim, and which request serves which container's resource (`mappings`:
  // requestMappings), in the pod's status.extendedResourceClaimStatus, as kube-scheduler does
  // before binding (the kubelet prepares the claim's devices from it).
  absl::Status SetExtendedClaimStatus(const PodRef& pod, const std::string& claim,
                                      const nlohmann::json& mappings) const;
  // POST pods/NAME/binding. AlreadyExists when the pod is bound already (409).
  absl::Status Bind(const PodRef& pod, const std::string& node) const;
  // PodScheduled=False (reason Unschedulable, `message`) and a FailedScheduling Event; with
  // `nominated`, also status.nominatedNodeName (the node it waits for after preempting).
  absl::Status MarkUnschedulable(const PodRef& pod, const std::string& message,
                                 const std::string& component,
                                 const std::string& nominated = "") const;
  // Preemption as kube-scheduler does it, in two steps: the DisruptionTarget condition (reason
  // PreemptionByScheduler, `message`) and a Preempted Event; then the Eviction API
  // (`eviction`: a PodDisruptionBudget covers it; ResourceExhausted when the budget refuses)
  // or a delete with the pod's own grace period. A pod already gone (or recreated) is fine.
  absl::Status MarkPreempted(const PodRef& victim, const std::string& message,
                             const std::string& component) const;
  absl::Status Evict(const PodRef& victim, bool eviction) const;
  // Deletes the pod (its uid as precondition); a pod already gone is fine.
  absl::Status DeletePod(const PodRef& pod) const;
  // Reserves the PersistentVolume `volume` (as cached at `resource_version`) for the claim, as
  // kube-scheduler's volume binder does: spec.claimRef and the annotation
  // pv.kubernetes.io/bound-by-controller; the PersistentVolume controller then binds the claim.
  // Aborted when the volume changed since (someone else may have taken it).
  absl::Status ReserveVolume(const std::string& volume, const std::string& resource_version,
                             const std::string& claim_ns, const std::string& claim_name,
                             const std::string& claim_uid) const;
  // Sets (or, with nullopt, removes) one annotation with a JSON merge patch.
  absl::Status Annotate(const std::string& path, const std::string& key,
                        const std::optional<std::string>& value) const;

 private:
  absl::Status PatchCondition(const PodRef& pod, const nlohmann::json& condition,
                              const std::string& nominated) const;
  absl::Status PostEvent(const nlohmann::json& event) const;
  Client client_;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_WRITER_H_
