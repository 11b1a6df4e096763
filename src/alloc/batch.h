// Allocating a sequence of claims against a cluster, in order, each committed before the next
// (what `gpuplane allocate` and the scenario tests do): ResourceClaims, Pods (their claims
// allocated together; a template claim is named <pod>-<claim>) and ResourceClaimTemplates no
// Pod uses (one claim each, named <template>-1). A ResourceClaim that Pods name is allocated
// with the first such Pod only; later Pods sharing it run on its node. A Pod bound to a node
// (spec.nodeName) has its claims allocated there only. Results are values;
// AllocationUnits borrows its objects; AllocateInOrder moves the claims out of its work.
// Not thread-safe.
#ifndef GPUPLANE_ALLOC_BATCH_H_
#define GPUPLANE_ALLOC_BATCH_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"

namespace gpuplane::alloc {

// One unit of allocation: a claim, or all claims of a pod (allocated together).
struct AllocationUnit {
  // For messages: "pod ns/name", or "ns/name" of the claim (before its claims move on).
  std::string Label() const;
  std::vector<api::ResourceClaim> claims;
  // Claims ("ns/name") this pod shares with an earlier pod, which allocated them: they are
  // not allocated again, and the pod must run where they are.
  std::vector<std::string> shared;
  std::string node;  // a Pod's spec.nodeName: its claims are allocated on that node only
  const api::SourcedObject* source = nullptr;  // the Pod, claim or template, in `objects`
};

// The units of `objects` in order, with the rules above (templates instantiated per Pod,
// claims Pods name allocated with the first such Pod). Errors name a Pod's missing claim or
// template with file and line.
absl::StatusOr<std::vector<AllocationUnit>> AllocationUnits(
    const std::vector<api::SourcedObject>& objects);

struct ClaimOutcome {
  api::ResourceClaim claim;  // with status.allocation when allocated
  bool allocated = false;
  std::string node;
  std::vector<std::string> reasons;
};

struct BatchResult {
  std::vector<ClaimOutcome> claims;
  std::vector<std::string> warnings;  // inventory problems, unknown allocated devices
};

// `cluster`: DeviceClasses, ResourceSlices, Nodes and allocated ResourceClaims, read in place.
// `work`: what to allocate; its claims move into the result (they are left empty). Both stay
// the caller's, to free when done with them. `node`: only this node
// (and explain failures), else every node in order. kVerify: check every allocation with the
// independent verifier before committing it. Errors: an unknown node, a Pod naming a claim or
// template that `work` lacks, and (with kVerify) an allocation the verifier rejects.
enum class Verification { kOff, kVerify };
absl::StatusOr<BatchResult> AllocateInOrder(const std::vector<api::SourcedObject>& cluster,
                                            std::vector<api::SourcedObject>& work,
                                            const std::optional<std::string>& node,
                                            Verification verification = Verification::kOff);

// Checks claims allocated elsewhere (Kubernetes' allocator, a cluster's scheduler) as one
// pod's claims on `node`, on top of `cluster` (taken by value, as above) and its allocated
// claims: "" when the verifier accepts every `allocated` ResourceClaim's status.allocation
// together, else the first problem. Errors: an unknown node, a claim without status.allocation
// or whose spec does not compile (naming the claim).
absl::StatusOr<std::string> VerifyAllocatedClaims(std::vector<api::SourcedObject> cluster,
                                                  const std::vector<api::SourcedObject>& allocated,
                                                  const std::string& node);

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_BATCH_H_
