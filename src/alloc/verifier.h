// An independent, deliberately simple checker of an allocation against the DRA rules. It
// shares no search code with the allocator: it re-evaluates selectors, re-sums counters and
// capacity, and re-checks constraints from scratch. Used on every allocation the tests
// produce, and as the oracle of the brute-force enumerator. Pure function; thread-compatible.
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

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_VERIFIER_H_
