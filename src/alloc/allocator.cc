#include "alloc/allocator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>

#include "absl/container/inlined_vector.h"
#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

using model::DeviceId;

// Whether a capacity request names the published capacity `id` (request.h resolves names).
bool Names(const CapacityRequest& r, model::CapacityId id) {
  return std::find(r.ids.begin(), r.ids.end(), id) != r.ids.end();
}

enum class Reject : uint8_t { kNone, kClassSelector, kRequestSelector, kTainted, kFiltered };

// Amount a request consumes from one capacity of a shareable device, rounded per the
// capacity's requestPolicy; nullopt when no allowed amount satisfies the request.
std::optional<api::Quantity> Consumption(const api::DeviceCapacity& cap,
                                         const api::Quantity* requested) {
  const std::optional<api::CapacityRequestPolicy>& policy = cap.request_policy;
  if (requested == nullptr) {
    return policy && policy->default_value ? *policy->default_value : cap.value;
  }
  if (!policy) return *requested;
  if (!policy->valid_values.empty()) {
    for (const api::Quantity& v : policy->valid_values) {
      if (!(v < *requested)) return v;
    }
    return std::nullopt;
  }
  if (policy->valid_range) {
    const api::CapacityRequestPolicyRange& r = *policy->valid_range;
    api::Int128 amount = std::max(requested->nano(), r.min.nano());
    if (r.step && r.step->nano() > 0) {
      api::Int128 over = amount - r.min.nano();
      api::Int128 steps = (over + r.step->nano() - 1) / r.step->nano();
      amount = r.min.nano() + steps * r.step->nano();
    }
    if (r.max && amount > r.max->nano()) return std::nullopt;
    return api::Quantity::FromNano(amount, requested->format());
  }
  return *requested;
}

}  // namespace

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

namespace {

class Search {
 public:
  Search(const model::Inventory& inv, const model::AllocationState& state,
         const std::vector<const CompiledClaim*>& claims, model::NodeId node,
         const AllocatorOptions& options, const Scorer& scorer, const DeviceFilter* filter,
         SearchCache* cache, SelectorMemo& memo, SearchScratch& scratch)
      : inv_(inv),
        state_(state),
        claims_(claims),
        node_(node),
        options_(options),
        filter_(filter),
        cache_(cache),
        memo_(memo),
        slots_(scratch.slots),
        candidates_(scratch.candidates),
        local_(scratch.local),
        admin_(scratch.admin),
        chosen_(scratch.chosen),
        exclusive_(scratch.exclusive),
        scorer_(scorer),
        current_alt_(scratch.current_alt),
        fixed_alt_(scratch.fixed_alt),
        best_(scratch.best),
        best_score_(scratch.best_score),
        score_(scratch.score),
        class_(scratch.classes) {
    size_t alternatives = 0;
    for (size_t c = 0; c < claims.size(); ++c) {
      for (size_t r = 0; r < claims[c]->requests.size(); ++r) {
        slots_.push_back({c, r, alternatives});
        alternatives += claims[c]->requests[r].alternatives.size();
      }
    }
    candidates_.assign(alternatives, nullptr);
    current_alt_.assign(slots_.size(), 0);
  }

  Outcome Run() {
    Outcome out;
    Solve(0);
    out.allocated = found_ && !fatal_;
    out.steps = steps_;
    if (out.allocated) {
      chosen_ = best_;
      out.choices = best_;
      BuildResults(out);
    } else if (options_.explain) {
      Explain(out);
    } else if (fatal_) {
      out.reasons.push_back(*fatal_);
    }
    return out;
  }

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
  const std::vector<DeviceId>& Candidates(size_t slot, size_t alt) {
    const std::vector<DeviceId>*& known = candidates_[slots_[slot].first_alternative + alt];
    if (known != nullptr) return *known;
    const Alternative& a = Alt(slots_[slot], alt);
    const std::vector<DeviceId>* found = nullptr;
    std::vector<DeviceId>* own = nullptr;  // this search's own list (sortable in place)
    if (filter_ == nullptr && a.filter_key != nullptr) {
      const uint64_t key = uint64_t{cache_->FilterKeyId(a.filter_key)} << 32 | node_;
      auto it = cache_->candidates.find(key);
      if (it != cache_->candidates.end()) {
        found = &it->second;
      } else {
        std::vector<DeviceId> out = Classified(a);
        if (!fatal_) {  // else not kept: whichever search meets the error reports it
          cache_->candidate_devices += out.size();
          found = &(cache_->candidates[key] = std::move(out));
        } else {
          found = own = &local_.emplace_back(std::move(out));
        }
      }
    } else {
      found = own = &local_.emplace_back(Classified(a));
    }
    if (!scorer_.ranks()) return *(known = found);
    if (own == nullptr) own = &local_.emplace_back(*found);
    std::stable_sort(own->begin(), own->end(),
                     [&](DeviceId x, DeviceId y) { return scorer_.Rank(x) < scorer_.Rank(y); });
    return *(known = own);
  }

  // The node's devices that pass an alternative's static filters, in inventory order.
  std::vector<DeviceId> Classified(const Alternative& a) {
    std::vector<DeviceId> out;
    const std::vector<DeviceId>& devices = inv_.nodes()[node_].devices;
    out.reserve(devices.size());
    Entries entries = EntriesOf(a);
    for (DeviceId d : devices) {
      if (Classify(a, entries, d) == Reject::kNone && !fatal_) out.push_back(d);
    }
    return out;
  }

  // An allocationMode All alternative's devices, as Kubernetes computes them before its
  // search: those the selectors (and the filter) admit with room for the request beside what
  // is already allocated. An untolerated taint on one of them fails the request (null), as a
  // device in use or short of counters does when it is taken.
  const std::vector<DeviceId>* AllSet(size_t slot, size_t a) {
    auto key = std::make_pair(slot, a);
    auto it = all_sets_.find(key);
    if (it == all_sets_.end()) {
      const Alternative& alt = Alt(slots_[slot], a);
      std::optional<std::vector<DeviceId>> set(std::in_place);
      Entries entries = EntriesOf(alt);
      for (DeviceId d : inv_.nodes()[node_].devices) {
        const Reject r = Classify(alt, entries, d);
        if (fatal_) break;
        if ((r != Reject::kNone && r != Reject::kTainted) || !CapacityFit(alt, d, Beside::kState))
          continue;
        if (r == Reject::kTainted) {
          set.reset();
          break;
        }
        set->push_back(d);
      }
      it = all_sets_.emplace(key, std::move(set)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  // The memo entries of an alternative's selectors, in order (looked up again if the memo
  // started over meanwhile), for classifying many devices.
  using Entries = absl::InlinedVector<SelectorMemo::Entry*, 4>;
  Entries EntriesOf(const Alternative& alt) {
    Entries out;
    uint64_t generation = 0;
    do {
      generation = memo_.generation();
      out.clear();
      for (const Selector& s : alt.selectors) out.push_back(&memo_.EntryFor(s.program));
    } while (memo_.generation() != generation);
    return out;
  }

  Reject Classify(const Alternative& alt, const Entries& entries, DeviceId d) {
    const model::DeviceInfo& info = inv_.devices()[d];
    for (size_t i = 0; i < alt.selectors.size(); ++i) {
      const Selector& s = alt.selectors[i];
      const SelectorMemo::Result r = memo_.Evaluate(*entries[i], d);
      if (r == SelectorMemo::Result::kError && !fatal_) {
        const model::PoolInfo& p = inv_.pools()[info.pool];
        fatal_ = util::Cat("CEL runtime error in selector \"", s.program.source(), "\" on device ",
                           p.driver, "/", p.name, "/", info.spec->name, ": ",
                           memo_.ErrorText(s.program, d));
      }
      if (r != SelectorMemo::Result::kMatch) {
        return s.from_class ? Reject::kClassSelector : Reject::kRequestSelector;
      }
    }
    for (const api::Taint& t : info.spec->taints) {
      if (!Tolerates(alt.tolerations, t)) return Reject::kTainted;
    }
    if (filter_ != nullptr && !filter_->Allows(d)) return Reject::kFiltered;
    return Reject::kNone;
  }

  bool Shareable(DeviceId d) const { return inv_.devices()[d].shareable; }

  bool CountersFit(DeviceId d) const {
    for (const model::CounterUse& use : inv_.devices()[d].consumes) {
      api::Quantity used = state_.counter_used(use.set, use.counter);
      auto it = counter_delta_.find({use.set, use.counter});
      if (it != counter_delta_.end()) used = *used.Add(it->second);
      absl::StatusOr<api::Quantity> after = used.Add(use.amount);
      if (!after.ok() || inv_.counter_sets()[use.set].capacity[use.counter] < *after) return false;
    }
    return true;
  }

  bool HasCapacityNames(const Alternative& alt, DeviceId d) const {
    const std::vector<model::DeviceCapacityInfo>& caps = inv_.devices()[d].capacity;
    for (const CapacityRequest& r : alt.capacity_ids) {
      if (std::none_of(caps.begin(), caps.end(), [&](const auto& c) { return Names(r, c.id); })) {
        return false;
      }
    }
    return true;
  }

  // Capacity a choice of `d` would consume (shareable devices: parallel to its capacity), or
  // nullopt when it does not fit; for other devices, checks requested capacity against the
  // device's capacity.
  // What a shareable device's capacity must also hold: what the state allocated and this
  // search took, what the state allocated (All's devices are chosen so), or nothing (an
  // adminAccess request takes no capacity, but its request must fit the device).
  enum class Beside : uint8_t { kSearch, kState, kNothing };
  std::optional<model::CapacityAmounts> CapacityFit(const Alternative& alt, DeviceId d,
                                                    Beside beside = Beside::kSearch) const {
    const model::DeviceInfo& info = inv_.devices()[d];
    model::CapacityAmounts consumed;
    if (!HasCapacityNames(alt, d)) return std::nullopt;
    std::span<const api::Quantity> used_before = state_.capacity_used(inv_, d);
    if (info.shareable) consumed.reserve(info.capacity.size());
    for (size_t i = 0; i < info.capacity.size(); ++i) {
      const model::DeviceCapacityInfo& cap = info.capacity[i];
      const api::Quantity* requested = nullptr;  // the last request naming it, as before
      for (const CapacityRequest& r : alt.capacity_ids) {
        if (Names(r, cap.id)) requested = &r.amount;
      }
      if (!info.shareable) {
        if (requested != nullptr && cap.spec->value < *requested) return std::nullopt;
        continue;
      }
      std::optional<api::Quantity> amount = Consumption(*cap.spec, requested);
      if (!amount) return std::nullopt;
      api::Quantity used = beside == Beside::kNothing ? api::Quantity() : used_before[i];
      auto dt = capacity_delta_.find(info.capacity_slot + static_cast<uint32_t>(i));
      if (beside == Beside::kSearch && dt != capacity_delta_.end()) used = *used.Add(dt->second);
      absl::StatusOr<api::Quantity> after = used.Add(*amount);
      if (!after.ok() || cap.spec->value < *after) return std::nullopt;
      consumed.push_back(*amount);
    }
    return consumed;
  }

  void AddCapacityDelta(DeviceId d, const model::CapacityAmounts& amounts, int sign) {
    const uint32_t slot = inv_.devices()[d].capacity_slot;
    for (size_t i = 0; i < amounts.size(); ++i) {
      api::Quantity& cd = capacity_delta_[slot + static_cast<uint32_t>(i)];
      cd = sign > 0 ? *cd.Add(amounts[i]) : *cd.Sub(amounts[i]);
    }
  }

  // Whether an ordinary (not admin) request may not take `d`: allocated before, or taken in
  // this search by any request, adminAccess included (Kubernetes' rule).
  bool InUse(DeviceId d) const {
    if (Shareable(d)) return false;
    return state_.in_use(d) ||
           std::find(exclusive_.begin(), exclusive_.end(), d) != exclusive_.end() ||
           std::find(admin_.begin(), admin_.end(), d) != admin_.end();
  }

  // Whether an adminAccess request of claim `c` may not take `d`: the claim took it already
  // (a device appears once per claim unless it is shareable).
  bool TakenByClaim(size_t c, DeviceId d) const {
    if (Shareable(d)) return false;
    return std::any_of(chosen_.begin(), chosen_.end(),
                       [&](const Choice& ch) { return ch.claim == c && ch.device == d; });
  }

  bool Applies(const CompiledConstraint& c, size_t request, const Alternative& alt) const {
    for (const auto& [index, ref] : c.requests) {
      if (index == request && (ref.find('/') == std::string::npos || ref == alt.result_name)) {
        return true;
      }
    }
    return false;
  }

  bool ConstraintsOk(const Slot& s, const Alternative& alt, DeviceId d) const {
    const CompiledClaim& claim = *claims_[s.claim];
    for (const CompiledConstraint& c : claim.constraints) {
      if (!Applies(c, s.request, alt)) continue;
      const api::DeviceAttribute* mine = inv_.Attribute(d, c.attribute);
      if (mine == nullptr) return false;  // a device lacking the attribute violates it
      for (const Choice& ch : chosen_) {
        if (ch.claim != s.claim) continue;
        const Alternative& other =
            claims_[ch.claim]->requests[ch.request].alternatives[ch.alternative];
        if (!Applies(c, ch.request, other)) continue;
        const api::DeviceAttribute* theirs = inv_.Attribute(ch.device, c.attribute);
        if (theirs == nullptr) return false;
        if (c.distinct ? *mine == *theirs : !(*mine == *theirs)) return false;
      }
    }
    return true;
  }

  // Tries to take `d` for the slot; false when it is unavailable or breaks a constraint.
  bool Take(size_t slot, size_t alt_index, DeviceId d) {
    const Slot& s = slots_[slot];
    const Alternative& alt = Alt(s, alt_index);
    if (!alt.admin_access && (InUse(d) || !CountersFit(d))) return false;
    if (alt.admin_access && TakenByClaim(s.claim, d)) return false;
    // Admin access neither uses the device nor consumes its capacity; the requested capacity
    // must still fit the device.
    std::optional<model::CapacityAmounts> consumed =
        alt.admin_access
            ? (CapacityFit(alt, d, Beside::kNothing) ? std::make_optional(model::CapacityAmounts{})
                                                     : std::nullopt)
            : CapacityFit(alt, d);
    if (!consumed || !ConstraintsOk(s, alt, d)) return false;
    if (!alt.admin_access) {
      for (const model::CounterUse& use : inv_.devices()[d].consumes) {
        api::Quantity& slot_delta = counter_delta_[{use.set, use.counter}];
        slot_delta = *slot_delta.Add(use.amount);
      }
      if (Shareable(d)) {
        AddCapacityDelta(d, *consumed, +1);
      } else {
        exclusive_.push_back(d);
      }
    }
    if (alt.admin_access) admin_.push_back(d);
    chosen_.push_back(
        Choice{s.claim, s.request, alt_index, d, std::move(*consumed), alt.admin_access});
    return true;
  }

  void Untake() {
    const Choice ch = chosen_.back();
    chosen_.pop_back();
    const Alternative& alt = claims_[ch.claim]->requests[ch.request].alternatives[ch.alternative];
    if (alt.admin_access) {
      Forget(admin_, ch.device);
      return;
    }
    for (const model::CounterUse& use : inv_.devices()[ch.device].consumes) {
      api::Quantity& slot_delta = counter_delta_[{use.set, use.counter}];
      slot_delta = *slot_delta.Sub(use.amount);
    }
    if (Shareable(ch.device)) {
      AddCapacityDelta(ch.device, ch.consumed, -1);
    } else {
      Forget(exclusive_, ch.device);
    }
  }

  // Removes one `d` from a list of devices taken.
  static void Forget(std::vector<DeviceId>& taken, DeviceId d) {
    auto it = std::find(taken.rbegin(), taken.rend(), d);
    if (it != taken.rend()) taken.erase(std::next(it).base());
  }

  // Whether to stop searching: a fatal error, the effort bound, or enough solutions scored.
  bool Done() const {
    return fatal_.has_value() || exhausted_ ||
           (found_ && (solutions_ >= options_.max_solutions || steps_ >= score_deadline_));
  }

  // A complete allocation: score it and keep the best. Returns Done().
  bool Leaf() {
    if (chosen_.size() > 32) {  // at most 32 results per claim
      std::vector<size_t> per_claim(claims_.size(), 0);
      for (const Choice& ch : chosen_) {
        if (++per_claim[ch.claim] > 32) return false;
      }
    }
    scorer_.Score(state_, chosen_, score_);
    ++solutions_;
    if (!found_) {
      found_ = true;
      fixed_alt_ = current_alt_;  // later solutions keep these firstAvailable choices
      score_deadline_ = steps_ + options_.score_steps;
      best_ = chosen_;
      best_score_ = score_;
    } else if (score_ < best_score_) {
      best_ = chosen_;
      best_score_ = score_;
    }
    return Done();
  }

  // Depth-first over the slot's alternatives; true means stop searching.
  bool Solve(size_t slot) {
    if (slot == slots_.size()) return Leaf();
    const Slot& s = slots_[slot];
    const CompiledRequest& req = claims_[s.claim]->requests[s.request];
    for (size_t a = 0; a < req.alternatives.size(); ++a) {
      if (found_ && a != fixed_alt_[slot]) continue;
      current_alt_[slot] = a;
      const Alternative& alt = req.alternatives[a];
      if (alt.all) {
        const std::vector<DeviceId>* all = AllSet(slot, a);
        if (Done()) return true;
        // A pool being updated may hide matching devices: All cannot be served here.
        if (all == nullptr || all->empty() || !inv_.nodes()[node_].incomplete_pools.empty()) {
          continue;
        }
        size_t taken = 0;
        for (DeviceId d : *all) {
          if (!Take(slot, a, d)) break;
          ++taken;
        }
        if (taken == all->size() && taken <= 32 && Solve(slot + 1)) return true;
        for (size_t i = 0; i < taken; ++i) Untake();
        continue;
      }
      const std::vector<DeviceId>& cands = Candidates(slot, a);
      if (Done()) return true;
      if (alt.count > 32) continue;
      if (!alt.admin_access) {  // prune before trying combinations
        int64_t free = 0;
        for (DeviceId d : cands) free += InUse(d) ? 0 : (Shareable(d) ? alt.count : 1);
        if (free < alt.count) continue;
      }
      if (Choose(slot, a, cands, 0, alt.count)) return true;
    }
    return false;
  }

  // Chooses `remaining` more devices from cands[start..] in increasing order; a shareable
  // device may be chosen again for the same request (one more share, as Kubernetes allows).
  // After the subtree of one device is exhausted, devices interchangeable with it are skipped
  // at this position: when neither is chosen yet, swapping the two maps any allocation using
  // one to an equally valid, equally scored one using the other, which was already tried.
  bool Choose(size_t slot, size_t a, const std::vector<DeviceId>& cands, size_t start,
              int64_t remaining) {
    if (remaining == 0) return Solve(slot + 1);
    Exhausted exhausted;
    for (size_t i = start; i < cands.size(); ++i) {
      if (i + static_cast<size_t>(remaining) > cands.size() && !AnyShareable(cands, i)) break;
      // Devices already chosen (admin access may choose one twice) are not interchangeable
      // with the others.
      bool fresh = options_.symmetry && !Chosen(cands[i]);
      if (fresh && Covered(exhausted, cands[i])) continue;
      if (++steps_ > options_.max_steps) {
        exhausted_ = true;
        return true;
      }
      if (!Take(slot, a, cands[i])) continue;
      const size_t next = Shareable(cands[i]) ? i : i + 1;
      if (Choose(slot, a, cands, next, remaining - 1)) return true;
      Untake();
      if (fresh) Add(exhausted, cands[i]);
    }
    return false;
  }

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

  bool Covered(const Exhausted& e, DeviceId d) {
    if (Pairwise()) {
      return std::any_of(e.devices.begin(), e.devices.end(),
                         [&](DeviceId x) { return Alike(x, d); });
    }
    return !e.classes.empty() &&
           std::find(e.classes.begin(), e.classes.end(), ClassOf(d)) != e.classes.end();
  }

  void Add(Exhausted& e, DeviceId d) {
    if (Pairwise()) {
      if (Symmetric(d)) e.devices.push_back(d);
      return;
    }
    int32_t cls = ClassOf(d);
    if (cls >= 0) e.classes.push_back(cls);
  }

  // Whether symmetry considers `d` at all: an exclusive device without counters.
  bool Symmetric(DeviceId d) const { return !Shareable(d) && inv_.devices()[d].consumes.empty(); }

  // Whether two devices of the node would share a class (ComputeClasses' rows, compared
  // directly): both symmetric, equally in use, equal static ids, alike for every
  // alternative's static filters, and equal in the constraints' attributes.
  bool Alike(DeviceId x, DeviceId y) {
    if (!Symmetric(x) || !Symmetric(y) || state_.in_use(x) != state_.in_use(y) ||
        StaticId(x) != StaticId(y)) {
      return false;
    }
    for (const Slot& slot : slots_) {
      const std::vector<Alternative>& alts = Alts(slot);
      for (size_t a = 0; a < alts.size(); ++a) {
        const size_t index = slot.first_alternative + a;
        if (FilterCode(index, alts[a], x) != FilterCode(index, alts[a], y)) return false;
      }
    }
    for (const CompiledClaim* c : claims_) {
      for (const CompiledConstraint& k : c->constraints) {
        const api::DeviceAttribute* vx = inv_.Attribute(x, k.attribute);
        const api::DeviceAttribute* vy = inv_.Attribute(y, k.attribute);
        if ((vx == nullptr) != (vy == nullptr)) return false;
        if (vx != nullptr && model::AttributeKey(*vx) != model::AttributeKey(*vy)) return false;
      }
    }
    return true;
  }

  bool AnyShareable(const std::vector<DeviceId>& cands, size_t from) const {
    return std::any_of(cands.begin() + static_cast<std::ptrdiff_t>(from), cands.end(),
                       [&](DeviceId d) { return Shareable(d); });
  }

  bool Chosen(DeviceId d) const {
    for (const Choice& ch : chosen_) {
      if (ch.device == d) return true;
    }
    return false;
  }

  // Interchangeability class of a node device: -1 for a device with no peer. Computed on
  // first use (only searches that backtrack pay for it). Two devices are interchangeable when
  // every static filter of every alternative treats them alike (selector results including
  // errors, taints), both are exclusive devices without counters, equally in use, with equal
  // capacity, and equal in every attribute a constraint or the scorer reads.
  int32_t ClassOf(DeviceId d) {
    if (!classes_ready_) ComputeClasses();
    const std::vector<DeviceId>& devs = inv_.nodes()[node_].devices;
    size_t pos = std::lower_bound(devs.begin(), devs.end(), d) - devs.begin();
    return class_[pos];
  }

  void ComputeClasses() {
    classes_ready_ = true;
    const std::vector<DeviceId>& devs = inv_.nodes()[node_].devices;
    std::vector<const std::string*> attrs;  // read by constraints (StaticId has the scorer's)
    for (const CompiledClaim* c : claims_) {
      for (const CompiledConstraint& k : c->constraints) attrs.push_back(&k.attribute);
    }
    // Per device a row of small integers: in use, its static id, how each alternative's static
    // filters treat it (FilterCode), the constraint attributes' values (interned); equal rows,
    // one class.
    size_t alternatives = 0;
    for (const Slot& slot : slots_) alternatives += Alts(slot).size();
    const size_t width = 2 + alternatives + attrs.size();
    std::vector<int32_t> rows(devs.size() * width, -1);
    std::vector<size_t> eligible;
    eligible.reserve(devs.size());
    for (size_t pos = 0; pos < devs.size(); ++pos) {
      DeviceId d = devs[pos];
      if (Shareable(d) || !inv_.devices()[d].consumes.empty()) continue;
      eligible.push_back(pos);
      rows[pos * width] = state_.in_use(d) ? 1 : 0;
      rows[pos * width + 1] = StaticId(d);
    }
    size_t column = 2;
    for (const Slot& slot : slots_) {
      const std::vector<Alternative>& alts = Alts(slot);
      for (size_t a = 0; a < alts.size(); ++a, ++column) {
        FilterColumn(slot.first_alternative + a, alts[a], eligible, rows, width, column);
      }
    }
    std::unordered_map<std::string, int32_t> values;
    for (size_t i = 0; i < attrs.size(); ++i, ++column) {
      for (size_t pos : eligible) {
        const api::DeviceAttribute* v = inv_.Attribute(devs[pos], *attrs[i]);
        rows[pos * width + column] =
            v == nullptr
                ? -1
                : values.emplace(model::AttributeKey(*v), static_cast<int32_t>(values.size()))
                      .first->second;
      }
    }
    GroupRows(rows, width, eligible);
  }

  // Equal rows, one class (class_, parallel to the node's devices; -1 for a row no other
  // device has): rows are grouped by a hash, and a hash's devices by equal rows (a collision
  // only splits a class, which prunes less but never wrongly).
  void GroupRows(const std::vector<int32_t>& rows, size_t width,
                 const std::vector<size_t>& eligible) {
    auto row = [&](size_t pos) { return rows.begin() + static_cast<std::ptrdiff_t>(pos * width); };
    std::vector<std::pair<uint64_t, size_t>> keyed;
    keyed.reserve(eligible.size());
    for (size_t pos : eligible) {
      uint64_t h = 1469598103934665603ULL;  // FNV-1a over the row's integers
      for (auto it = row(pos); it != row(pos) + static_cast<std::ptrdiff_t>(width); ++it) {
        h = (h ^ static_cast<uint32_t>(*it)) * 1099511628211ULL;
      }
      keyed.emplace_back(h, pos);
    }
    std::sort(keyed.begin(), keyed.end());
    class_.assign(inv_.nodes()[node_].devices.size(), -1);
    int32_t next = 0;
    for (size_t i = 0; i < keyed.size();) {
      size_t j = i + 1;
      while (j < keyed.size() && keyed[j].first == keyed[i].first &&
             std::equal(row(keyed[i].second),
                        row(keyed[i].second) + static_cast<std::ptrdiff_t>(width),
                        row(keyed[j].second))) {
        ++j;
      }
      if (j - i >= 2) {
        for (size_t k = i; k < j; ++k) class_[keyed[k].second] = next;
        ++next;
      }
      i = j;
    }
  }

  // What of a device symmetry compares that no claim changes (its capacity and the attributes
  // the scorer reads) as a small id: devices with equal ids are equal in all of it. Kept by
  // the Allocator across searches (computed once per device).
  int32_t StaticId(DeviceId d) const {
    const std::vector<int32_t>& ids = cache_->static_ids;
    return !ids.empty() && ids[d] >= 0 ? ids[d] : ComputeStaticId(d);
  }

  int32_t ComputeStaticId(DeviceId d) const {
    SearchCache& keys = *cache_;
    if (keys.static_ids.empty()) keys.static_ids.assign(inv_.devices().size(), -1);
    // Raw bytes: a fixed-size part (the capacities' count, each capacity's interned name and
    // value (its nano amount), each scorer attribute's value id or its value's length), then
    // the values of attributes the scorer has no ids for.
    const std::vector<model::DeviceCapacityInfo>& caps = inv_.devices()[d].capacity;
    const std::vector<std::string>& attrs = scorer_.attributes();
    std::string key(sizeof(uint32_t) +
                        caps.size() * (sizeof(model::CapacityId) + sizeof(api::Int128)) +
                        attrs.size() * (1 + sizeof(uint32_t)),
                    '\0');
    char* out = key.data();
    auto put = [&out](const auto& v) {
      std::memcpy(out, &v, sizeof v);
      out += sizeof v;
    };
    put(static_cast<uint32_t>(caps.size()));
    for (const model::DeviceCapacityInfo& cap : caps) {
      put(cap.id);
      put(cap.spec->value.nano());
    }
    std::string values;
    for (size_t k = 0; k < attrs.size(); ++k) {
      if (const std::vector<int32_t>* ids = scorer_.ValueIds(k)) {
        *out++ = '#';
        put((*ids)[d]);
        continue;
      }
      const api::DeviceAttribute* v = inv_.Attribute(d, attrs[k]);
      const std::string value = v == nullptr ? "-" : model::AttributeKey(*v);
      *out++ = '|';
      put(static_cast<uint32_t>(value.size()));
      values += value;
    }
    key += values;
    auto it = keys.interned.find(key);
    if (it == keys.interned.end()) {
      it = keys.interned.emplace(std::move(key), static_cast<int32_t>(keys.interned.size())).first;
    }
    keys.static_ids[d] = it->second;
    return it->second;
  }

  // How alternative number `index` (`alt`) treats `d` for symmetry, the one rule Alike and
  // ComputeClasses share: when its candidates are known, by membership ('y' or 'n': a device
  // passed its static filters exactly when it is among them, and an error there would have
  // stopped the search), so CEL is not evaluated twice; else its StaticCode.
  char FilterCode(size_t index, const Alternative& alt, DeviceId d) const {
    const std::vector<DeviceId>* known = candidates_[index];
    if (known == nullptr) return StaticCode(alt, d);
    return std::find(known->begin(), known->end(), d) != known->end() ? 'y' : 'n';
  }

  // FilterCode of the node's eligible devices for one alternative, into column `column` of
  // ComputeClasses' rows (an ineligible device's row starts with -1): with its candidates
  // known, each candidate is found once by position, instead of each device among them.
  void FilterColumn(size_t index, const Alternative& alt, const std::vector<size_t>& eligible,
                    std::vector<int32_t>& rows, size_t width, size_t column) const {
    const std::vector<DeviceId>& devs = inv_.nodes()[node_].devices;
    const std::vector<DeviceId>* known = candidates_[index];
    for (size_t pos : eligible) {
      rows[pos * width + column] =
          static_cast<unsigned char>(known == nullptr ? StaticCode(alt, devs[pos]) : 'n');
    }
    if (known == nullptr) return;
    for (DeviceId d : *known) {
      const size_t pos = std::lower_bound(devs.begin(), devs.end(), d) - devs.begin();
      if (rows[pos * width] >= 0) rows[pos * width + column] = static_cast<unsigned char>('y');
    }
  }

  // How an alternative's static filters treat a device, without recording CEL errors (the
  // search reports those only when it actually needs the device): 'y', 'n' or 'e'.
  char StaticCode(const Alternative& alt, DeviceId d) const {
    const model::DeviceInfo& info = inv_.devices()[d];
    for (const Selector& s : alt.selectors) {
      const SelectorMemo::Result r = memo_.Evaluate(s.program, d);
      if (r == SelectorMemo::Result::kError) return 'e';
      if (r == SelectorMemo::Result::kNoMatch) return 'n';
    }
    for (const api::Taint& t : info.spec->taints) {
      if (!Tolerates(alt.tolerations, t)) return 'n';
    }
    return 'y';
  }

  void BuildResults(Outcome& out) const {
    out.results.resize(claims_.size());
    for (size_t c = 0; c < claims_.size(); ++c) {
      api::AllocationResult& r = out.results[c];
      // class -> its requests' result names (borrowed from the compiled claim)
      std::vector<std::pair<const std::string*, std::vector<const std::string*>>> classes;
      bool node_local = false;
      for (size_t i = 0; i < chosen_.size(); ++i) {
        const Choice& ch = chosen_[i];
        if (ch.claim != c) continue;
        const Alternative& alt = claims_[c]->requests[ch.request].alternatives[ch.alternative];
        const model::DeviceInfo& info = inv_.devices()[ch.device];
        const model::PoolInfo& pool = inv_.pools()[info.pool];
        api::DeviceRequestAllocationResult& res = r.devices.results.emplace_back();
        res.request = alt.result_name;
        res.driver = pool.driver;
        res.pool = pool.name;
        res.device = info.spec->name;
        if (alt.admin_access) res.admin_access = true;
        res.tolerations = alt.tolerations;
        if (Shareable(ch.device) && !alt.admin_access) {
          char id[32];
          std::snprintf(id, sizeof id, "%08x",
                        static_cast<unsigned>(std::hash<std::string>{}(util::Cat(
                            claims_[c]->ns, "/", claims_[c]->name, "/", alt.result_name, "/", i))));
          res.share_id = id;
          for (size_t k = 0; k < ch.consumed.size(); ++k) {
            res.consumed_capacity[inv_.capacity_names()[info.capacity[k].id]] = ch.consumed[k];
          }
        }
        node_local = node_local || info.node != model::kNoId;
        if (!alt.class_config) continue;
        auto it = std::find_if(classes.begin(), classes.end(),
                               [&](const auto& p) { return *p.first == alt.class_name; });
        if (it == classes.end()) {
          classes.emplace_back(&alt.class_name, std::vector<const std::string*>{&alt.result_name});
        } else if (std::none_of(it->second.begin(), it->second.end(),
                                [&](const std::string* n) { return *n == alt.result_name; })) {
          it->second.push_back(&alt.result_name);
        }
      }
      for (const auto& [cls, requests] : classes) {  // FromClass entries come first
        const api::DeviceClass* dc = inv_.FindClass(*cls);
        std::vector<std::string> names;
        names.reserve(requests.size());
        for (const std::string* n : requests) names.push_back(*n);
        for (const api::DeviceClassConfiguration& cfg : dc->spec.config) {
          r.devices.config.push_back(
              api::DeviceAllocationConfiguration{"FromClass", names, cfg.opaque});
        }
      }
      for (const api::DeviceClaimConfiguration& cfg : claims_[c]->config) {
        r.devices.config.push_back(
            api::DeviceAllocationConfiguration{"FromClaim", cfg.requests, cfg.opaque});
      }
      if (node_local) {
        api::NodeSelectorRequirement& field = r.node_selector.emplace()
                                                  .node_selector_terms.emplace_back()
                                                  .match_fields.emplace_back();
        field.key = "metadata.name";
        field.op = "In";
        field.values.push_back(inv_.nodes()[node_].name);
      }
    }
  }

  // Why nothing fit: per request alternative, what filtered the node's devices.
  void Explain(Outcome& out) {
    const std::string& node = inv_.nodes()[node_].name;
    if (fatal_) out.reasons.push_back(*fatal_);
    if (exhausted_) {
      out.reasons.push_back(
          util::Cat("search effort exhausted after ", steps_, " steps on node ", node));
    }
    for (const CompiledClaim* claim : claims_) TooManyResults(*claim, out);
    for (const Slot& s : slots_) {
      const CompiledClaim& claim = *claims_[s.claim];
      for (const Alternative& alt : claim.requests[s.request].alternatives) {
        ExplainAlternative(claim, s.request, alt, out);
      }
    }
  }

  // A claim whose requests cannot have 32 results or fewer.
  static void TooManyResults(const CompiledClaim& claim, Outcome& out) {
    int64_t least = 0;  // the fewest results the claim's requests can have
    for (const CompiledRequest& req : claim.requests) {
      int64_t fewest = INT64_MAX;
      for (const Alternative& alt : req.alternatives) {
        fewest = std::min(fewest, alt.all ? 1 : alt.count);
      }
      least += fewest;
    }
    if (least > 32) {
      out.reasons.push_back(util::Cat("ResourceClaim ", claim.ns, "/", claim.name,
                                      " asks for at least ", least,
                                      " devices, more than 32 results per claim"));
    }
  }

  // The node's devices counted by the first rule that rejects them for `alt`.
  struct Tally {
    int cls = 0, sel = 0, tainted = 0, filtered = 0, in_use = 0, counters = 0, capacity = 0, ok = 0;
  };
  Tally Count(const Alternative& alt) {
    Tally t;
    Entries entries = EntriesOf(alt);
    for (DeviceId d : inv_.nodes()[node_].devices) {
      switch (Classify(alt, entries, d)) {
        case Reject::kClassSelector:
          ++t.cls;
          continue;
        case Reject::kRequestSelector:
          ++t.sel;
          continue;
        case Reject::kTainted:
          ++t.tainted;
          continue;
        case Reject::kFiltered:
          ++t.filtered;
          continue;
        case Reject::kNone:
          break;
      }
      if (!alt.admin_access && InUse(d)) {
        ++t.in_use;
      } else if (!alt.admin_access && !CountersFit(d)) {
        ++t.counters;
      } else if (!CapacityFit(alt, d)) {
        ++t.capacity;
      } else {
        ++t.ok;
      }
    }
    return t;
  }

  // allocationMode All on a node that a pool being updated reaches.
  void ExplainIncompletePools(Outcome& out) const {
    for (model::PoolId p : inv_.nodes()[node_].incomplete_pools) {
      const model::PoolInfo& pool = inv_.pools()[p];
      out.reasons.push_back(
          util::Cat("  pool ", pool.driver, "/", pool.name,
                    " is being updated (not all its ResourceSlices of generation ", pool.generation,
                    " are published): all matching devices "
                    "cannot be known; retry when it is complete"));
    }
  }

  void ExplainAlternative(const CompiledClaim& claim, size_t request, const Alternative& alt,
                          Outcome& out) {
    const Tally t = Count(alt);
    std::string want = alt.all ? "all matching devices" : util::Cat(alt.count, " device(s)");
    out.reasons.push_back(
        util::Cat("ResourceClaim ", claim.ns.empty() ? "" : claim.ns + "/", claim.name, " request ",
                  alt.result_name, " (", alt.class_name, ", ", want, ") on node ",
                  inv_.nodes()[node_].name, ": of ", inv_.nodes()[node_].devices.size(),
                  " devices, ", t.cls, " rejected by the class selectors, ", t.sel,
                  " by the request selectors, ", t.tainted, " tainted, ",
                  filter_ == nullptr ? "" : util::Cat(t.filtered, " ", filter_->Describe(), ", "),
                  t.in_use, " in use, ", t.counters, " lacked shared counters, ", t.capacity,
                  " lacked capacity; ", t.ok, " available"));
    const int matching = t.in_use + t.counters + t.capacity + t.ok;
    if (alt.all && matching > 32) {
      out.reasons.push_back(util::Cat("  all matching devices would be ", matching,
                                      " results, more than 32 results per claim"));
    }
    if (alt.all) ExplainIncompletePools(out);
    if (alt.all || t.ok < alt.count) return;
    for (const CompiledConstraint& c : claim.constraints) {
      if (Applies(c, request, alt)) {
        out.reasons.push_back(util::Cat("  enough devices are available, but no choice meets ",
                                        c.distinct ? "distinctAttribute " : "matchAttribute ",
                                        c.attribute));
      }
    }
  }

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

}  // namespace

void SearchCache::Trim() {
  if (candidate_devices <= kMaxCandidateDevices) return;
  candidates.clear();
  filter_keys.clear();
  filter_key_at.clear();
  candidate_devices = 0;
}

uint32_t SearchCache::FilterKeyId(const std::shared_ptr<const std::string>& key) {
  auto at = filter_key_at.find(key.get());
  if (at != filter_key_at.end()) return at->second.second;
  auto [it, added] = filter_keys.try_emplace(*key, static_cast<uint32_t>(filter_keys.size()));
  filter_key_at.emplace(key.get(), std::make_pair(key, it->second));
  return it->second;
}

Allocator::Allocator(const model::Inventory& inventory, AllocatorOptions options)
    : inventory_(inventory),
      options_(options),
      cache_(std::make_unique<SearchCache>()),
      scratch_(std::make_unique<SearchScratch>()),
      memo_(inventory, options.memo) {
  if (options_.scorer == nullptr) default_scorer_ = std::make_unique<DefaultScorer>(inventory);
}

Allocator::~Allocator() = default;
Allocator::Allocator(Allocator&&) noexcept = default;

Outcome Allocator::Allocate(const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                            const model::AllocationState& state, const DeviceFilter* filter) const {
  if (node >= inventory_.nodes().size()) {
    Outcome out;
    out.reasons.push_back(util::Cat("node id ", node, " is not in the inventory"));
    return out;
  }
  cache_->Trim();
  return Search(inventory_, state, claims, node, options_,
                options_.scorer != nullptr ? *options_.scorer : *default_scorer_, filter,
                cache_.get(), *memo_, scratch_->Clear())
      .Run();
}

absl::Status Allocator::Commit(const Outcome& outcome,
                               const std::vector<const CompiledClaim*>& claims,
                               model::AllocationState& state) const {
  for (const Choice& ch : outcome.choices) {
    const Alternative& alt = claims[ch.claim]->requests[ch.request].alternatives[ch.alternative];
    if (alt.admin_access) continue;
    absl::Status s = state.Allocate(inventory_, ch.device, ch.consumed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Allocator::Release(const std::vector<Choice>& choices,
                                model::AllocationState& state) const {
  for (const Choice& ch : choices) {
    if (ch.admin_access) continue;
    absl::Status s = state.Release(inventory_, ch.device, ch.consumed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gpuplane::alloc
