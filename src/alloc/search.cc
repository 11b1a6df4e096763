#include "alloc/search.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/strings.h"

namespace gpuplane::alloc {

// Members defined `inline` in this file are called only from it (search.h declares them for
// the class): the compiler then inlines them as it did when the search was one file's.

using model::DeviceId;

namespace {

// Whether a capacity request names the published capacity `id` (request.h resolves names).
bool Names(const CapacityRequest& r, model::CapacityId id) {
  return std::find(r.ids.begin(), r.ids.end(), id) != r.ids.end();
}

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

Search::Search(const model::Inventory& inv, const model::AllocationState& state,
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

Outcome Search::Run() {
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

inline const std::vector<DeviceId>& Search::Candidates(size_t slot, size_t alt) {
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

std::vector<DeviceId> Search::Classified(const Alternative& a) {
  std::vector<DeviceId> out;
  const std::vector<DeviceId>& devices = inv_.nodes()[node_].devices;
  out.reserve(devices.size());
  Entries entries = EntriesOf(a);
  for (DeviceId d : devices) {
    if (Classify(a, entries, d) == Reject::kNone && !fatal_) out.push_back(d);
  }
  return out;
}

const std::vector<DeviceId>* Search::AllSet(size_t slot, size_t a) {
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

Search::Entries Search::EntriesOf(const Alternative& alt) {
  Entries out;
  uint64_t generation = 0;
  do {
    generation = memo_.generation();
    out.clear();
    for (const Selector& s : alt.selectors) out.push_back(&memo_.EntryFor(s.program));
  } while (memo_.generation() != generation);
  return out;
}

Reject Search::Classify(const Alternative& alt, const Entries& entries, DeviceId d) {
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

bool Search::CountersFit(DeviceId d) const {
  for (const model::CounterUse& use : inv_.devices()[d].consumes) {
    api::Quantity used = state_.counter_used(use.set, use.counter);
    auto it = counter_delta_.find({use.set, use.counter});
    if (it != counter_delta_.end()) used = *used.Add(it->second);
    absl::StatusOr<api::Quantity> after = used.Add(use.amount);
    if (!after.ok() || inv_.counter_sets()[use.set].capacity[use.counter] < *after) return false;
  }
  return true;
}

bool Search::HasCapacityNames(const Alternative& alt, DeviceId d) const {
  const std::vector<model::DeviceCapacityInfo>& caps = inv_.devices()[d].capacity;
  for (const CapacityRequest& r : alt.capacity_ids) {
    if (std::none_of(caps.begin(), caps.end(), [&](const auto& c) { return Names(r, c.id); })) {
      return false;
    }
  }
  return true;
}

std::optional<model::CapacityAmounts> Search::CapacityFit(const Alternative& alt, DeviceId d,
                                                          Beside beside) const {
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

void Search::AddCapacityDelta(DeviceId d, const model::CapacityAmounts& amounts, int sign) {
  const uint32_t slot = inv_.devices()[d].capacity_slot;
  for (size_t i = 0; i < amounts.size(); ++i) {
    api::Quantity& cd = capacity_delta_[slot + static_cast<uint32_t>(i)];
    cd = sign > 0 ? *cd.Add(amounts[i]) : *cd.Sub(amounts[i]);
  }
}

bool Search::InUse(DeviceId d) const {
  if (Shareable(d)) return false;
  return state_.in_use(d) ||
         std::find(exclusive_.begin(), exclusive_.end(), d) != exclusive_.end() ||
         std::find(admin_.begin(), admin_.end(), d) != admin_.end();
}

bool Search::TakenByClaim(size_t c, DeviceId d) const {
  if (Shareable(d)) return false;
  return std::any_of(chosen_.begin(), chosen_.end(),
                     [&](const Choice& ch) { return ch.claim == c && ch.device == d; });
}

bool Search::Applies(const CompiledConstraint& c, size_t request, const Alternative& alt) const {
  for (const auto& [index, ref] : c.requests) {
    if (index == request && (ref.find('/') == std::string::npos || ref == alt.result_name)) {
      return true;
    }
  }
  return false;
}

inline bool Search::ConstraintsOk(const Slot& s, const Alternative& alt, DeviceId d) const {
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

bool Search::Take(size_t slot, size_t alt_index, DeviceId d) {
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

void Search::Untake() {
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

inline void Search::Forget(std::vector<DeviceId>& taken, DeviceId d) {
  auto it = std::find(taken.rbegin(), taken.rend(), d);
  if (it != taken.rend()) taken.erase(std::next(it).base());
}

bool Search::Done() const {
  return fatal_.has_value() || exhausted_ ||
         (found_ && (solutions_ >= options_.max_solutions || steps_ >= score_deadline_));
}

inline bool Search::Leaf() {
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

bool Search::Solve(size_t slot) {
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

bool Search::Choose(size_t slot, size_t a, const std::vector<DeviceId>& cands, size_t start,
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

inline bool Search::Covered(const Exhausted& e, DeviceId d) {
  if (Pairwise()) {
    return std::any_of(e.devices.begin(), e.devices.end(), [&](DeviceId x) { return Alike(x, d); });
  }
  return !e.classes.empty() &&
         std::find(e.classes.begin(), e.classes.end(), ClassOf(d)) != e.classes.end();
}

inline void Search::Add(Exhausted& e, DeviceId d) {
  if (Pairwise()) {
    if (Symmetric(d)) e.devices.push_back(d);
    return;
  }
  int32_t cls = ClassOf(d);
  if (cls >= 0) e.classes.push_back(cls);
}

bool Search::AnyShareable(const std::vector<DeviceId>& cands, size_t from) const {
  return std::any_of(cands.begin() + static_cast<std::ptrdiff_t>(from), cands.end(),
                     [&](DeviceId d) { return Shareable(d); });
}

bool Search::Chosen(DeviceId d) const {
  for (const Choice& ch : chosen_) {
    if (ch.device == d) return true;
  }
  return false;
}

}  // namespace gpuplane::alloc
