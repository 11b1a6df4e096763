// The structured allocator: allocates the claims of one pod on one node with Kubernetes' DRA
// feasibility rules (pools reaching the node, class and request selectors, ExactCount and
// All, firstAvailable in order, matchAttribute / distinctAttribute, counters of
// partitionable devices, taints and tolerations, admin access, capacity of shareable
// devices) and returns results in the status.allocation shape, or per-request reasons.
// The search is depth-first over requests, alternatives and device combinations, with a
// bounded effort. One Allocator per thread (it caches per-device and per-node data as it
// searches and reuses its lists, so it is not reentrant: no scorer or filter may call it); the
// inventory and state are borrowed.
#ifndef GPUPLANE_ALLOC_ALLOCATOR_H_
#define GPUPLANE_ALLOC_ALLOCATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloc/request.h"
#include "alloc/scorer.h"
#include "alloc/selector_memo.h"
#include "api/resource_types.h"
#include "model/allocation_state.h"
#include "model/inventory.h"

namespace gpuplane::alloc {

struct Outcome {
  bool allocated = false;
  std::vector<api::AllocationResult> results;  // one per claim, when allocated
  std::vector<Choice> choices;                 // what to commit to an AllocationState
  std::vector<std::string> reasons;            // when not allocated
  int64_t steps = 0;                           // search effort spent
};

struct AllocatorOptions {
  int64_t max_steps = 1'000'000;  // bound on candidate devices tried per pod and node
  bool explain = true;            // compute per-request reasons when nothing fits
  // Scoring: after the first feasible allocation (which fixes the firstAvailable choices),
  // up to `max_solutions` feasible allocations, or `score_steps` more steps, are compared by
  // the scorer; null means a DefaultScorer over the inventory. Borrowed.
  const Scorer* scorer = nullptr;
  int max_solutions = 64;
  int64_t score_steps = 4096;
  // Interchangeable devices (equal in everything the rules and the scorer read) are tried
  // once per position; off only to test that this never loses an allocation.
  bool symmetry = true;
  // On nodes of up to this many devices symmetry compares two devices directly when the
  // search needs it; on larger nodes it classifies all of the node's devices once per search.
  // Both use the same relation (tests set 0 to check the classes on small nodes).
  size_t pairwise_symmetry_devices = 16;
  // Selector results shared with a NodeIndex (or another Allocator) over the same inventory,
  // borrowed: each (selector, device) pair is then evaluated once for all of them. Null: the
  // Allocator keeps its own.
  SelectorMemo* memo = nullptr;
};

// Restricts which devices a search may take (a topology domain, say). Devices it refuses are
// treated like devices a selector rejects. Implementations must be cheap and pure.
class DeviceFilter {
 public:
  virtual ~DeviceFilter() = default;
  virtual bool Allows(model::DeviceId device) const = 0;
  // Names the restriction in explanations ("outside nvlinkDomain a-0").
  virtual std::string Describe() const = 0;
};

// What an allocator's searches keep between them (allocator.cc): per-device and per-node
// data no claim or state changes, and the lists a search reuses.
struct SearchCache;
struct SearchScratch;

class Allocator {
 public:
  explicit Allocator(const model::Inventory& inventory, AllocatorOptions options = {});
  ~Allocator();
  Allocator(Allocator&&) noexcept;

  // `filter` (borrowed, may be null) restricts the devices the search may take.
  Outcome Allocate(const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                   const model::AllocationState& state, const DeviceFilter* filter = nullptr) const;

  // Records an outcome's choices in `state` (admin-access choices are not recorded).
  absl::Status Commit(const Outcome& outcome, const std::vector<const CompiledClaim*>& claims,
                      model::AllocationState& state) const;
  // Rolls back a Commit of the same choices (a pod leaving, a what-if undone).
  absl::Status Release(const std::vector<Choice>& choices, model::AllocationState& state) const;

 private:
  const model::Inventory& inventory_;
  AllocatorOptions options_;
  std::unique_ptr<DefaultScorer> default_scorer_;  // when options_.scorer is null
  // Not const through Allocate: each search reads and fills the cache and reuses the lists.
  std::unique_ptr<SearchCache> cache_;
  std::unique_ptr<SearchScratch> scratch_;
  // Selector results per device: options_.memo, or its own.
  MemoRef memo_;
};

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_ALLOCATOR_H_
