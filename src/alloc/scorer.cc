#include "alloc/scorer.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace gpuplane::alloc {

using model::CounterSetId;
using model::DeviceId;

DefaultScorer::DefaultScorer(const model::Inventory& inventory,
                             std::vector<std::string> island_attributes)
    : inv_(inventory), attributes_(std::move(island_attributes)) {
  const size_t n = inv_.devices().size();
  for (const std::string& attr : attributes_) {
    std::vector<int32_t>& ids = island_.emplace_back(n, -1);
    std::vector<int32_t>& value_ids = values_.emplace_back(n, -1);
    std::vector<std::vector<DeviceId>>& members = members_.emplace_back();
    absl::flat_hash_map<model::AttributeValueView, int32_t> values;
    absl::flat_hash_map<std::pair<model::NodeId, int32_t>, int32_t> index;
    for (DeviceId d = 0; d < n; ++d) {
      const api::DeviceAttribute* a = inv_.Attribute(d, attr);
      if (a == nullptr) continue;
      value_ids[d] = values.try_emplace(model::ValueView(*a), static_cast<int32_t>(values.size()))
                         .first->second;
      auto [it, fresh] = index.try_emplace({inv_.devices()[d].node, value_ids[d]},
                                           static_cast<int32_t>(members.size()));
      if (fresh) members.emplace_back();
      ids[d] = it->second;
      if (inv_.devices()[d].consumes.empty()) members[it->second].push_back(d);
    }
  }
  size_.assign(n, 0);
  for (DeviceId d = 0; d < n; ++d) {
    double share = 0;
    for (const model::CounterUse& use : inv_.devices()[d].consumes) {
      const model::CounterSetInfo& cs = inv_.counter_sets()[use.set];
      double cap = cs.capacity[use.counter].AsApproximateFloat();
      if (cap > 0) share += use.amount.AsApproximateFloat() / cap / cs.names.size();
    }
    size_[d] = static_cast<int64_t>(share * 1e6);
  }
}

std::pair<int64_t, int64_t> DefaultScorer::Placeable(const model::AllocationState& state,
                                                     const std::vector<Choice>& choices,
                                                     CounterSetId set,
                                                     const std::vector<api::Quantity>& used) const {
  const model::CounterSetInfo& cs = inv_.counter_sets()[set];
  int64_t largest = 0, count = 0;
  for (DeviceId d : inv_.counter_set_devices()[set]) {
    if (state.in_use(d)) continue;
    bool chosen = false;
    for (const Choice& ch : choices) chosen = chosen || (ch.device == d && !ch.admin_access);
    if (chosen) continue;
    bool fits = true;
    for (const model::CounterUse& use : inv_.devices()[d].consumes) {
      if (use.set != set) continue;
      absl::StatusOr<api::Quantity> after = used[use.counter].Add(use.amount);
      if (!after.ok() || cs.capacity[use.counter] < *after) {
        fits = false;
        break;
      }
    }
    if (!fits) continue;
    largest = std::max(largest, size_[d]);
    ++count;
  }
  return {largest, count};
}

void DefaultScorer::Score(const model::AllocationState& state, const std::vector<Choice>& choices,
                          std::vector<int64_t>& out) const {
  out.clear();
  // 1. Islands spanned by the pod's exclusively used devices.
  for (const std::vector<int32_t>& ids : island_) {
    absl::InlinedVector<int32_t, 8> seen;
    for (const Choice& ch : choices) {
      int32_t id = ids[ch.device];
      if (id < 0 || ch.admin_access || Shareable(ch.device)) continue;
      if (std::find(seen.begin(), seen.end(), id) == seen.end()) seen.push_back(id);
    }
    out.push_back(seen.empty() ? 0 : static_cast<int64_t>(seen.size()) - 1);
  }
  // 2. What partitionable placements cost the counter sets they touch.
  absl::InlinedVector<CounterSetId, 8> touched;
  for (const Choice& ch : choices) {
    if (ch.admin_access) continue;
    for (const model::CounterUse& use : inv_.devices()[ch.device].consumes) {
      if (std::find(touched.begin(), touched.end(), use.set) == touched.end()) {
        touched.push_back(use.set);
      }
    }
  }
  int64_t lost_size = 0, lost_count = 0;
  static const std::vector<Choice> kNone;
  for (CounterSetId set : touched) {
    const model::CounterSetInfo& cs = inv_.counter_sets()[set];
    std::vector<api::Quantity> used(cs.names.size());
    for (size_t c = 0; c < used.size(); ++c) used[c] = state.counter_used(set, c);
    auto [size_before, count_before] = Placeable(state, kNone, set, used);
    for (const Choice& ch : choices) {
      if (ch.admin_access) continue;
      for (const model::CounterUse& use : inv_.devices()[ch.device].consumes) {
        if (use.set != set) continue;
        absl::StatusOr<api::Quantity> sum = used[use.counter].Add(use.amount);
        if (sum.ok()) used[use.counter] = *sum;
      }
    }
    auto [size_after, count_after] = Placeable(state, choices, set, used);
    lost_size += size_before - size_after;
    lost_count += count_before - count_after;
  }
  out.push_back(lost_size);
  out.push_back(lost_count);
  // 3. Shareable devices opened although another one already serves someone.
  int64_t opened = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const Choice& ch = choices[i];
    if (ch.admin_access || !Shareable(ch.device)) continue;
    bool empty = true;
    for (const api::Quantity& q : state.capacity_used(inv_, ch.device)) empty = empty && q.IsZero();
    for (size_t j = 0; j < i; ++j) empty = empty && choices[j].device != ch.device;
    opened += empty ? 1 : 0;
  }
  out.push_back(opened);
  // 4. Best fit: free devices left in the islands of the chosen devices.
  for (size_t k = 0; k < island_.size(); ++k) {
    int64_t free_left = 0;
    absl::InlinedVector<int32_t, 8> seen;
    for (const Choice& ch : choices) {
      int32_t id = island_[k][ch.device];
      if (id < 0 || ch.admin_access || !inv_.devices()[ch.device].consumes.empty() ||
          std::find(seen.begin(), seen.end(), id) != seen.end()) {
        continue;
      }
      seen.push_back(id);
      for (DeviceId m : members_[k][id]) {
        if (state.in_use(m)) continue;
        bool chosen = false;
        for (const Choice& other : choices) chosen = chosen || other.device == m;
        free_left += chosen ? 0 : 1;
      }
    }
    out.push_back(free_left);
  }
}

}  // namespace gpuplane::alloc
