// An independent, deliberately simple checker of an allocation against the DRA rules. It
// shares no search code with the allocator: it re-evaluates selectors, re-sums counters and
// capacity, and re-checks constraints from scratch. Used on every allocation the tests
// produce, on allocations other allocators return (Kubernetes' own, in the differential test),
// and as the oracle of the brute-force enumerator. Pure functions; thread-compatible.
#ifndef GPUPLANE_ALLOC_VERIFIER_H_
#define GPUPLANE_ALLOC_VERIFIER_H_

#include <string>
#include <vector>

#include "alloc/allocator.h"
#include "alloc/request.h"
#include "model/allocation_state.h"
#include "model/inventory.h"

namespace gpuplane::alloc {

// Returns "" when `choices` is a valid allocation of `claims` on `node` on top of `state`,
// else the first rule it breaks.
std::string Verify(const model::Inventory& inventory, const model::AllocationState& state,
                   const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                   const std::vector<Choice>& choices);

// Checks allocation results another allocator produced (Kubernetes', a cluster's): one
// AllocationResult per claim, each result mapped to its request, alternative ("gpu" or
// "gpu/small") and device, then Verify. "" when valid, else the first problem (a result
// naming a request the claim lacks or a device no slice publishes is one).
std::string VerifyResults(const model::Inventory& inventory, const model::AllocationState& state,
                          const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                          const std::vector<api::AllocationResult>& results);

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_VERIFIER_H_
