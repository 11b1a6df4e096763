// Scoring of feasible allocations. The allocator enumerates feasible allocations of one pod's
// claims on a node (within a bounded effort, with earlier firstAvailable subrequests always
// preferred) and keeps the one with the lowest score. A Scorer is pluggable; DefaultScorer
// prefers, in this order:
//   1. multi-device pods on as few islands as possible (NVLink domain, then PCIe root);
//   2. partitionable (MIG) placements that keep the largest profiles of the touched GPUs
//      placeable, then the most placements;
//   3. shareable devices that already serve someone over empty ones;
//   4. devices in the islands with the fewest free devices left (best fit), so whole islands
//      stay free for large requests.
// Scorers are interfaces the allocator calls; an implementation is owned by its caller and
// borrowed by the Allocator (it must outlive it), called from one thread at a time, and must
// be deterministic. PreferScorer holds the devices to prefer (set before each call).
#ifndef GPUPLANE_ALLOC_SCORER_H_
#define GPUPLANE_ALLOC_SCORER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/quantity.h"
#include "model/allocation_state.h"
#include "model/inventory.h"

namespace gpuplane::alloc {

// One device chosen for one request (alternative) of one claim.
struct Choice {
  size_t claim;
  size_t request;
  size_t alternative;
  model::DeviceId device;
  model::CapacityAmounts consumed;  // shareable devices: parallel to the device's capacity
  bool admin_access = false;
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  // Qualified attribute names the score reads. The allocator treats two devices as
  // interchangeable only when they agree on these (and on everything feasibility reads).
  virtual const std::vector<std::string>& attributes() const = 0;
  // Writes the score of a complete allocation (`choices`, on top of `state`) to `out`:
  // lower is better, compared lexicographically.
  virtual void Score(const model::AllocationState& state, const std::vector<Choice>& choices,
                     std::vector<int64_t>& out) const = 0;
  // Search order: when `ranks()` is true, each request's candidates are tried in increasing
  // Rank (stable), so the first feasible allocation is the preferred one. A caller that has
  // already chosen devices (a scheduler policy) uses this with max_solutions = 1.
  virtual bool ranks() const { return false; }
  virtual int64_t Rank(model::DeviceId /*device*/) const { return 0; }
  // Optionally, attribute k's values interned per device ([device] -> an id equal for equal
  // model::AttributeKey values, -1 when absent), so the allocator need not look them up;
  // null (the default) when the scorer does not keep them.
  virtual const std::vector<int32_t>* ValueIds(size_t /*k*/) const { return nullptr; }
};

// Prefers the given devices, in the given order, and scores nothing else: with
// max_solutions = 1 the allocator takes exactly these devices when they are feasible and
// falls back to inventory order otherwise. Not thread-safe (set per allocation).
class PreferScorer : public Scorer {
 public:
  void Prefer(std::vector<model::DeviceId> devices) { preferred_ = std::move(devices); }
  const std::vector<std::string>& attributes() const override { return attributes_; }
  void Score(const model::AllocationState& /*state*/, const std::vector<Choice>& /*choices*/,
             std::vector<int64_t>& out) const override {
    out.clear();
  }
  bool ranks() const override { return true; }
  int64_t Rank(model::DeviceId device) const override {
    for (size_t i = 0; i < preferred_.size(); ++i) {
      if (preferred_[i] == device) return static_cast<int64_t>(i);
    }
    return static_cast<int64_t>(preferred_.size());
  }

 private:
  std::vector<model::DeviceId> preferred_;
  std::vector<std::string> attributes_;
};

class DefaultScorer : public Scorer {
 public:
  // Island attributes, most important first.
  static std::vector<std::string> DefaultIslands() {
    return {"gpu.nvidia.com/nvlinkDomain", "resource.kubernetes.io/pcieRoot"};
  }
  explicit DefaultScorer(const model::Inventory& inventory,
                         std::vector<std::string> island_attributes = DefaultIslands());

  const std::vector<std::string>& attributes() const override { return attributes_; }
  void Score(const model::AllocationState& state, const std::vector<Choice>& choices,
             std::vector<int64_t>& out) const override;
  const std::vector<int32_t>* ValueIds(size_t k) const override { return &values_[k]; }

 private:
  bool Shareable(model::DeviceId d) const {
    return inv_.devices()[d].spec->allow_multiple_allocations.value_or(false);
  }
  // Largest size and number of devices on `set` that still fit with `used` counters.
  std::pair<int64_t, int64_t> Placeable(const model::AllocationState& state,
                                        const std::vector<Choice>& choices, model::CounterSetId set,
                                        const std::vector<api::Quantity>& used) const;

  const model::Inventory& inv_;
  std::vector<std::string> attributes_;
  std::vector<std::vector<int32_t>> island_;  // [attribute][device] -> island id or -1
  std::vector<std::vector<int32_t>> values_;  // [attribute][device] -> value id or -1
  // [attribute][island] -> devices without counters in it (the ones packing counts)
  std::vector<std::vector<std::vector<model::DeviceId>>> members_;
  std::vector<int64_t> size_;  // per device: share of its counter set it consumes, in ppm
};

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_SCORER_H_
