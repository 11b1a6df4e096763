// The allocator's search (internal to alloc/; allocator.h is the interface): a depth-first
// search over one node's devices for a set of claims, as Kubernetes' allocator searches, with
// what keeps it fast (candidates per alternative classified once and kept by the Allocator
// between searches, interchangeable devices skipped) and what it reports (results, or why
// nothing fit). One Search runs once and is dropped; it borrows everything it reads and the
// Allocator's SearchCache and SearchScratch.
// search.cc: candidates, capacity, taking devices, the search itself; search_symmetry.cc:
// which devices are interchangeable; search_results.cc: results and explanations.
// Thread-safety: none (a Search and the cache and scratch it borrows belong to one thread).
#ifndef GPUPLANE_ALLOC_SEARCH_H_
#define GPUPLANE_ALLOC_SEARCH_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "alloc/allocator.h"

namespace gpuplane::alloc {

// The first static rule that rejects a device for an alternative.
enum class Reject : uint8_t { kNone, kClassSelector, kRequestSelector, kTainted, kFiltered };

// What an allocator's searches keep between them (internal; filled lazily): per device, what
// symmetry compares of it that no claim or state changes, interned as an id; and per
// (alternative's filter key, node) the node's devices that pass the alternative's static
// filters (selectors, taints), which no state changes either, so the claims of a run that
// ask alike classify a node's devices once. Lists stay where they are until Trim.
struct SearchCache {
  std::vector<int32_t> static_ids;  // per device, -1 until computed
  std::unordered_map<std::string, int32_t> interned;
  std::unordered_map<std::string, uint32_t> filter_keys;  // interned Alternative::filter_key
  // The same by the key's address (copies of a compiled claim share it), each key pinned so
  // that its address is not reused for another key while it is here.
  std::unordered_map<const std::string*, std::pair<std::shared_ptr<const std::string>, uint32_t>>
      filter_key_at;
  uint32_t FilterKeyId(const std::shared_ptr<const std::string>& key);
  // (filter key id << 32 | node) -> candidates, in inventory order
  std::unordered_map<uint64_t, std::vector<model::DeviceId>> candidates;
  size_t candidate_devices = 0;  // in all lists together
  static constexpr size_t kMaxCandidateDevices = size_t{1} << 20;
  // Between searches: starts the candidate lists over once they hold too many devices.
  void Trim();
};

// A search's lists, kept by the Allocator between its searches so that each search reuses
// their memory (each search starts them empty).
struct SearchScratch {
  struct Slot {
    size_t claim;
    size_t request;
    size_t first_alternative;  // its alternatives' index in candidates
  };
  std::vector<Slot> slots;
  std::vector<const std::vector<model::DeviceId>*> candidates;
  std::deque<std::vector<model::DeviceId>> local;
  std::vector<model::DeviceId> admin, exclusive;
  std::vector<Choice> chosen, best;
  std::vector<size_t> current_alt, fixed_alt;
  std::vector<int64_t> best_score, score;
  std::vector<int32_t> classes;

  SearchScratch& Clear() {
    slots.clear();
    candidates.clear();
    local.clear();
    admin.clear();
    exclusive.clear();
    chosen.clear();
    best.clear();
    current_alt.clear();
    fixed_alt.clear();
    best_score.clear();
    score.clear();
    classes.clear();
    return *this;
  }
};

class Search {
  using DeviceId = model::DeviceId;

 public:
  Search(const model::Inventory& inv, const model::AllocationState& state,
         const std::vector<const CompiledClaim*>& claims, model::NodeId node,
         const AllocatorOptions& options, const Scorer& scorer, const DeviceFilter* filter,
         SearchCache* cache, SelectorMemo& memo, SearchScratch& scratch);

  Outcome Run();

 private:
  using Slot = SearchScratch::Slot;

  const std::vector<Alternative>& Alts(const Slot& s) const {
    return claims_[s.claim]->requests[s.request].alternatives;
  }
  const Alternative& Alt(const Slot& s, size_t a) const { return Alts(s)[a]; }

  // Devices of the node that pass the static filters (selectors, taints, the filter), in the
  // scorer's rank order (else inventory order). Without a filter, the list in inventory order
  // is kept in the allocator's cache for later searches of alike alternatives on this node
  // (ranks change between searches: a ranked list is sorted anew each time).
  const std::vector<DeviceId>& Candidates(size_t slot, size_t alt);

  // The node's devices that pass an alternative's static filters, in inventory order.
  std::vector<DeviceId> Classified(const Alternative& a);

  // An allocationMode All alternative's devices, as Kubernetes computes them before its
  // search: those the selectors (and the filter) admit with room for the request beside what
  // is already allocated. An untolerated taint on one of them fails the request (null), as a
  // device in use or short of counters does when it is taken.
  const std::vector<DeviceId>* AllSet(size_t slot, size_t a);

  // The memo entries of an alternative's selectors, in order (looked up again if the memo
  // started over meanwhile), for classifying many devices.
  using Entries = absl::InlinedVector<SelectorMemo::Entry*, 4>;
  Entries EntriesOf(const Alternative& alt);

  Reject Classify(const Alternative& alt, const Entries& entries, DeviceId d);

  bool Shareable(DeviceId d) const { return inv_.devices()[d].shareable; }

  bool CountersFit(DeviceId d) const;

  bool HasCapacityNames(const Alternative& alt, DeviceId d) const;

  // What a shareable device's capacity must also hold: what the state allocated and this
  // search took, what the state allocated (All's devices are chosen so), or nothing (an
  // adminAccess request takes no capacity, but its request must fit the device).
  enum class Beside : uint8_t { kSearch, kState, kNothing };
  // Capacity a choice of `d` would consume (shareable devices: parallel to its capacity), or
  // nullopt when it does not fit; for other devices, checks requested capacity against the
  // device's capacity.
  std::optional<model::CapacityAmounts> CapacityFit(const Alternative& alt, DeviceId d,
                                                    Beside beside = Beside::kSearch) const;

  void AddCapacityDelta(DeviceId d, const model::CapacityAmounts& amounts, int sign);

  // Whether an ordinary (not admin) request may not take `d`: allocated before, or taken in
  // this search by any request, adminAccess included (Kubernetes' rule).
  bool InUse(DeviceId d) const;

  // Whether an adminAccess request of claim `c` may not take `d`: the claim took it already
  // (a device appears once per claim unless it is shareable).
  bool TakenByClaim(size_t c, DeviceId d) const;

  bool Applies(const CompiledConstraint& c, size_t request, const Alternative& alt) const;

  bool ConstraintsOk(const Slot& s, const Alternative& alt, DeviceId d) const;

  // Tries to take `d` for the slot; false when it is unavailable or breaks a constraint.
  bool Take(size_t slot, size_t alt_index, DeviceId d);

  void Untake();

  // Removes one `d` from a list of devices taken.
  static void Forget(std::vector<DeviceId>& taken, DeviceId d);

  // Whether to stop searching: a fatal error, the effort bound, or enough solutions scored.
  bool Done() const;

  // A complete allocation: score it and keep the best. Returns Done().
  bool Leaf();

  // Depth-first over the slot's alternatives; true means stop searching.
  bool Solve(size_t slot);

  // Chooses `remaining` more devices from cands[start..] in increasing order; a shareable
  // device may be chosen again for the same request (one more share, as Kubernetes allows).
  // After the subtree of one device is exhausted, devices interchangeable with it are skipped
  // at this position: when neither is chosen yet, swapping the two maps any allocation using
  // one to an equally valid, equally scored one using the other, which was already tried.
  bool Choose(size_t slot, size_t a, const std::vector<DeviceId>& cands, size_t start,
              int64_t remaining);

  // The devices whose subtrees one position of Choose has exhausted, for skipping devices
  // interchangeable with them. On nodes of up to options_.pairwise_symmetry_devices devices
  // two devices are compared directly (Alike), which costs less than classifying them all;
  // on larger nodes by class (ClassOf), computed once per search.
  struct Exhausted {
    std::vector<DeviceId> devices;  // pairwise
    std::vector<int32_t> classes;   // by class: the classes with more than one device
  };
  bool Pairwise() const {
    return inv_.nodes()[node_].devices.size() <= options_.pairwise_symmetry_devices;
  }

  bool Covered(const Exhausted& e, DeviceId d);

  void Add(Exhausted& e, DeviceId d);

  // Whether symmetry considers `d` at all: an exclusive device without counters.
  bool Symmetric(DeviceId d) const { return !Shareable(d) && inv_.devices()[d].consumes.empty(); }

  // Whether two devices of the node would share a class (ComputeClasses' rows, compared
  // directly): both symmetric, equally in use, equal static ids, alike for every
  // alternative's static filters, and equal in the constraints' attributes.
  bool Alike(DeviceId x, DeviceId y);

  bool AnyShareable(const std::vector<DeviceId>& cands, size_t from) const;

  bool Chosen(DeviceId d) const;

  // Interchangeability class of a node device: -1 for a device with no peer. Computed on
  // first use (only searches that backtrack pay for it). Two devices are interchangeable when
  // every static filter of every alternative treats them alike (selector results including
  // errors, taints), both are exclusive devices without counters, equally in use, with equal
  // capacity, and equal in every attribute a constraint or the scorer reads.
  int32_t ClassOf(DeviceId d);

  void ComputeClasses();

  // Equal rows, one class (class_, parallel to the node's devices; -1 for a row no other
  // device has): rows are grouped by a hash, and a hash's devices by equal rows (a collision
  // only splits a class, which prunes less but never wrongly).
  void GroupRows(const std::vector<int32_t>& rows, size_t width,
                 const std::vector<size_t>& eligible);

  // What of a device symmetry compares that no claim changes (its capacity and the attributes
  // the scorer reads) as a small id: devices with equal ids are equal in all of it. Kept by
  // the Allocator across searches (computed once per device).
  int32_t StaticId(DeviceId d) const;

  int32_t ComputeStaticId(DeviceId d) const;

  // How alternative number `index` (`alt`) treats `d` for symmetry, the one rule Alike and
  // ComputeClasses share: when its candidates are known, by membership ('y' or 'n': a device
  // passed its static filters exactly when it is among them, and an error there would have
  // stopped the search), so CEL is not evaluated twice; else its StaticCode.
  char FilterCode(size_t index, const Alternative& alt, DeviceId d) const;

  // FilterCode of the node's eligible devices for one alternative, into column `column` of
  // ComputeClasses' rows (an ineligible device's row starts with -1): with its candidates
  // known, each candidate is found once by position, instead of each device among them.
  void FilterColumn(size_t index, const Alternative& alt, const std::vector<size_t>& eligible,
                    std::vector<int32_t>& rows, size_t width, size_t column) const;

  // How an alternative's static filters treat a device, without recording CEL errors (the
  // search reports those only when it actually needs the device): 'y', 'n' or 'e'.
  char StaticCode(const Alternative& alt, DeviceId d) const;

  void BuildResults(Outcome& out) const;

  // Why nothing fit: per request alternative, what filtered the node's devices.
  void Explain(Outcome& out);

  // A claim whose requests cannot have 32 results or fewer.
  static void TooManyResults(const CompiledClaim& claim, Outcome& out);

  // The node's devices counted by the first rule that rejects them for `alt`.
  struct Tally {
    int cls = 0, sel = 0, tainted = 0, filtered = 0, in_use = 0, counters = 0, capacity = 0, ok = 0;
  };
  Tally Count(const Alternative& alt);

  // allocationMode All on a node that a pool being updated reaches.
  void ExplainIncompletePools(Outcome& out) const;

  void ExplainAlternative(const CompiledClaim& claim, size_t request, const Alternative& alt,
                          Outcome& out);

  const model::Inventory& inv_;
  const model::AllocationState& state_;
  const std::vector<const CompiledClaim*>& claims_;
  model::NodeId node_;
  AllocatorOptions options_;
  const DeviceFilter* filter_;
  SearchCache* cache_;
  SelectorMemo& memo_;
  // The lists are the Allocator's SearchScratch, started empty.
  std::vector<Slot>& slots_;
  // Per alternative (Slot::first_alternative + index), its candidates once computed: in the
  // allocator's cache, or in local_.
  std::vector<const std::vector<DeviceId>*>& candidates_;
  std::deque<std::vector<DeviceId>>& local_;
  std::map<std::pair<size_t, size_t>, std::optional<std::vector<DeviceId>>> all_sets_;
  std::vector<DeviceId>& admin_;  // devices adminAccess requests took in this search, per take
  std::vector<Choice>& chosen_;
  std::map<std::pair<model::CounterSetId, uint32_t>, api::Quantity> counter_delta_;
  std::map<uint32_t, api::Quantity> capacity_delta_;  // by capacity slot
  std::vector<DeviceId>& exclusive_;  // exclusive devices taken in this search, per take
  std::optional<std::string> fatal_;
  bool exhausted_ = false;
  int64_t steps_ = 0;
  // Scoring.
  const Scorer& scorer_;
  std::vector<size_t>& current_alt_;  // per slot, the alternative being tried
  std::vector<size_t>& fixed_alt_;    // per slot, the first solution's alternative
  bool found_ = false;
  int solutions_ = 0;
  int64_t score_deadline_ = 0;
  std::vector<Choice>& best_;
  std::vector<int64_t>& best_score_;
  std::vector<int64_t>& score_;
  // Symmetry.
  bool classes_ready_ = false;
  std::vector<int32_t>& class_;  // parallel to the node's devices
};

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_SEARCH_H_
