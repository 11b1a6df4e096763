// Fast node choice: per node, how many devices match each request alternative and how many
// of those are free, so nodes that cannot fit a pod are skipped without running the
// allocator. The counts are a necessary condition only (counters, capacity and constraints
// are left to the allocator): a node the index skips is one on which the allocator would
// fail (property-tested against the plain scan), so Kubernetes semantics do not change.
//
// An alternative is interned once (its class and request selectors evaluated on every device,
// taints checked against its tolerations); a segment tree per alternative over the nodes, in
// a caller-given order, finds the first node with enough free matching devices in
// O(log nodes). Free means not in exclusive use; shareable devices always count as free and
// admin-access alternatives count every matching device.
//
// Ownership: borrows the inventory and the allocation state, which must outlive it. The
// caller reports every change of a device's exclusive use with Refresh(device). Not
// thread-safe.
#ifndef GPUPLANE_ALLOC_NODE_INDEX_H_
#define GPUPLANE_ALLOC_NODE_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "alloc/request.h"
#include "alloc/selector_memo.h"
#include "model/allocation_state.h"
#include "model/inventory.h"

namespace gpuplane::alloc {

inline constexpr size_t kNoPosition = SIZE_MAX;

class NodeIndex {
 public:
  // `order`: the node order positions refer to (a permutation of the inventory's node ids);
  // empty means inventory order.
  // `memo` (borrowed, may be null): selector results shared with an Allocator over the same
  // inventory; null: the index keeps its own.
  NodeIndex(const model::Inventory& inventory, const model::AllocationState& state,
            std::vector<model::NodeId> order = {}, SelectorMemo* memo = nullptr);

  const std::vector<model::NodeId>& order() const { return order_; }
  size_t PositionOf(model::NodeId node) const { return position_[node]; }

  // The id of an alternative's interned filter (equal class, selectors, tolerations and
  // admin access share one).
  int Intern(const Alternative& alt);
  int64_t Matching(int sig, model::NodeId node) const { return sigs_[sig].matching[node]; }
  int64_t Free(int sig, model::NodeId node) const { return sigs_[sig].free[node]; }
  bool Matches(int sig, model::DeviceId device) const { return sigs_[sig].matches[device] != 0; }
  // How many devices `alt` needs on one node to possibly fit (0: never skip, All mode).
  static int64_t Need(const Alternative& alt) { return alt.all ? 0 : alt.count; }
  // Whether some node position >= `from` may fit every request of `claims`: the first such
  // position, or kNoPosition. Only each request's first `alternatives` firstAvailable
  // subrequests are considered (a scheduler looking for nodes where earlier ones fit).
  size_t FirstCandidate(const std::vector<const CompiledClaim*>& claims, size_t from,
                        size_t alternatives = SIZE_MAX);
  // Whether `node` passes the counts for every request of `claims`.
  bool MayFit(const std::vector<const CompiledClaim*>& claims, model::NodeId node,
              size_t alternatives = SIZE_MAX);

  // Replaces the node order (a permutation of the inventory's node ids); what is interned
  // stays, only the trees are rebuilt (O(alternatives x nodes)).
  void Reorder(std::vector<model::NodeId> order);

  // Call after a device's exclusive use changed in the state.
  void Refresh(model::DeviceId device);

 private:
  struct Signature {
    bool admin = false;
    std::vector<uint8_t> matches;         // per device
    std::vector<int64_t> matching, free;  // per node id
    // Per node id: devices a request can take from it, counting each shareable device as 32
    // (the most results a claim has): it may serve a request more than once.
    std::vector<int64_t> supply;
    std::vector<int64_t> tree;  // max of supply, over positions
  };
  bool DeviceFree(model::DeviceId d) const;
  static bool AllMayFit(const Signature& s, const Alternative& alt, model::NodeId n);
  void BuildTree(Signature& s) const;
  void Update(Signature& s, size_t position);
  // First position >= from whose supply is >= need.
  size_t FirstAtLeast(const Signature& s, size_t from, int64_t need) const;
  size_t FirstForAlternative(const Alternative& alt, size_t from);

  const model::Inventory& inv_;
  const model::AllocationState& state_;
  std::vector<model::NodeId> order_;
  // The alternatives' selectors, evaluated once per device alike: the borrowed memo or its own.
  MemoRef memo_;
  std::vector<size_t> position_;                      // node id -> position
  std::vector<std::vector<model::NodeId>> reachers_;  // device -> nodes that reach it
  std::vector<uint8_t> free_;                         // device -> counted as free
  size_t leaves_ = 1;                                 // segment tree width
  std::vector<Signature> sigs_;
  std::unordered_map<std::string, int> by_key_;  // Alternative::filter_key -> id
};

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_NODE_INDEX_H_
