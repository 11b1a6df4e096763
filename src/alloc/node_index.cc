#include "alloc/node_index.h"

#include <algorithm>
#include <numeric>

#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

// The most results a claim may have (Kubernetes' AllocationResultsMaxSize).
constexpr int64_t kMaxResultsPerClaim = 32;

// Whether a device may pass an alternative's static filters: no selector returns false and
// every taint is tolerated. A selector that fails (a CEL runtime error) counts as a possible
// match, so the allocator gets to run on the node and report the error as Kubernetes would.
bool Passes(const Alternative& alt, const model::DeviceInfo& info, model::DeviceId d,
            SelectorMemo& memo) {
  for (const Selector& s : alt.selectors) {
    if (memo.Evaluate(s.program, d) == SelectorMemo::Result::kNoMatch) return false;
  }
  for (const api::Taint& t : info.spec->taints) {
    if (!Tolerates(alt.tolerations, t)) return false;
  }
  return true;
}

}  // namespace

NodeIndex::NodeIndex(const model::Inventory& inventory, const model::AllocationState& state,
                     std::vector<model::NodeId> order, SelectorMemo* memo)
    : inv_(inventory), state_(state), order_(std::move(order)), memo_(inventory, memo) {
  size_t nodes = inv_.nodes().size();
  if (order_.empty()) {
    order_.resize(nodes);
    std::iota(order_.begin(), order_.end(), 0);
  }
  position_.assign(nodes, kNoPosition);
  for (size_t p = 0; p < order_.size(); ++p) position_[order_[p]] = p;
  while (leaves_ < order_.size()) leaves_ *= 2;
  reachers_.resize(inv_.devices().size());
  for (model::NodeId n = 0; n < nodes; ++n) {
    for (model::DeviceId d : inv_.nodes()[n].devices) reachers_[d].push_back(n);
  }
  free_.resize(inv_.devices().size());
  for (model::DeviceId d = 0; d < free_.size(); ++d) free_[d] = DeviceFree(d) ? 1 : 0;
}

bool NodeIndex::DeviceFree(model::DeviceId d) const {
  return inv_.devices()[d].spec->allow_multiple_allocations.value_or(false) || !state_.in_use(d);
}

int NodeIndex::Intern(const Alternative& alt) {
  auto it = by_key_.find(*alt.filter_key);
  if (it != by_key_.end()) return it->second;
  Signature s;
  s.admin = alt.admin_access;
  size_t nodes = inv_.nodes().size();
  s.matches.resize(inv_.devices().size());
  s.matching.assign(nodes, 0);
  s.free.assign(nodes, 0);
  s.supply.assign(nodes, 0);
  for (model::DeviceId d = 0; d < s.matches.size(); ++d) {
    if (reachers_[d].empty() || !Passes(alt, inv_.devices()[d], d, *memo_)) continue;
    s.matches[d] = 1;
    const int64_t shares = inv_.devices()[d].shareable ? kMaxResultsPerClaim : 1;
    for (model::NodeId n : reachers_[d]) {
      ++s.matching[n];
      if (s.admin || free_[d] != 0) {
        ++s.free[n];
        s.supply[n] += shares;
      }
    }
  }
  BuildTree(s);
  int id = static_cast<int>(sigs_.size());
  sigs_.push_back(std::move(s));
  by_key_.emplace(*alt.filter_key, id);
  return id;
}

void NodeIndex::BuildTree(Signature& s) const {
  s.tree.assign(2 * leaves_, -1);
  for (size_t p = 0; p < order_.size(); ++p) s.tree[leaves_ + p] = s.supply[order_[p]];
  for (size_t i = leaves_ - 1; i >= 1; --i) s.tree[i] = std::max(s.tree[2 * i], s.tree[2 * i + 1]);
}

void NodeIndex::Reorder(std::vector<model::NodeId> order) {
  order_ = std::move(order);
  for (size_t p = 0; p < order_.size(); ++p) position_[order_[p]] = p;
  for (Signature& s : sigs_) BuildTree(s);
}

void NodeIndex::Update(Signature& s, size_t position) {
  size_t i = leaves_ + position;
  s.tree[i] = s.supply[order_[position]];
  for (i /= 2; i >= 1; i /= 2) s.tree[i] = std::max(s.tree[2 * i], s.tree[2 * i + 1]);
}

void NodeIndex::Refresh(model::DeviceId device) {
  uint8_t now = DeviceFree(device) ? 1 : 0;
  if (now == free_[device]) return;
  free_[device] = now;
  int64_t delta = now != 0 ? 1 : -1;
  for (Signature& s : sigs_) {
    if (s.admin || s.matches[device] == 0) continue;
    for (model::NodeId n : reachers_[device]) {
      s.free[n] += delta;
      s.supply[n] += delta;  // shareable devices are always free: they never change here
      Update(s, position_[n]);
    }
  }
}

size_t NodeIndex::FirstAtLeast(const Signature& s, size_t from, int64_t need) const {
  if (from >= order_.size()) return kNoPosition;
  // Walk up from the leaf, then down into the first subtree whose maximum suffices.
  size_t i = leaves_ + from;
  if (s.tree[i] >= need) return from;
  while (true) {
    // Move to the next subtree to the right at this level.
    while (i % 2 == 1) {
      i /= 2;
      if (i == 0) return kNoPosition;
    }
    ++i;
    if (s.tree[i] >= need) break;
  }
  while (i < leaves_) i = s.tree[2 * i] >= need ? 2 * i : 2 * i + 1;
  size_t p = i - leaves_;
  return p < order_.size() ? p : kNoPosition;
}

// All mode: some matching device, and every matching device free (unless the request names
// capacities: then a device in use that lacks room is not among All's devices).
bool NodeIndex::AllMayFit(const Signature& s, const Alternative& alt, model::NodeId n) {
  const bool loose = s.admin || !alt.capacity.empty();
  return s.matching[n] > 0 && (loose || s.free[n] == s.matching[n]);
}

size_t NodeIndex::FirstForAlternative(const Alternative& alt, size_t from) {
  const Signature& s = sigs_[Intern(alt)];
  if (!alt.all) return FirstAtLeast(s, from, alt.count);
  for (size_t p = from; p < order_.size(); ++p) {
    if (AllMayFit(s, alt, order_[p])) return p;
  }
  return kNoPosition;
}

size_t NodeIndex::FirstCandidate(const std::vector<const CompiledClaim*>& claims, size_t from,
                                 size_t alternatives) {
  size_t pos = from;
  while (pos < order_.size()) {
    size_t next = pos;
    for (const CompiledClaim* c : claims) {
      for (const CompiledRequest& r : c->requests) {
        size_t best = kNoPosition;
        for (size_t a = 0; a < r.alternatives.size() && a < alternatives; ++a) {
          best = std::min(best, FirstForAlternative(r.alternatives[a], pos));
          if (best == pos) break;
        }
        if (best == kNoPosition) return kNoPosition;
        next = std::max(next, best);
      }
    }
    if (next == pos) return pos;
    pos = next;
  }
  return kNoPosition;
}

bool NodeIndex::MayFit(const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                       size_t alternatives) {
  for (const CompiledClaim* c : claims) {
    for (const CompiledRequest& r : c->requests) {
      bool any = false;
      for (size_t a = 0; a < r.alternatives.size() && a < alternatives; ++a) {
        const Alternative& alt = r.alternatives[a];
        const Signature& s = sigs_[Intern(alt)];
        any = alt.all ? AllMayFit(s, alt, node) : s.supply[node] >= alt.count;
        if (any) break;
      }
      if (!any) return false;
    }
  }
  return true;
}

}  // namespace gpuplane::alloc
