// What is already allocated on top of an Inventory: devices in exclusive use, counters
// consumed per counter set (partitionable devices), and capacity consumed on devices that
// allow multiple allocations. A plain value: copying it is the cheap clone for what-if
// searches. Not synchronized.
#ifndef GPUPLANE_MODEL_ALLOCATION_STATE_H_
#define GPUPLANE_MODEL_ALLOCATION_STATE_H_

#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "model/inventory.h"

namespace gpuplane::model {

// Capacity one allocation consumes on a device that allows multiple allocations, parallel to
// the device's DeviceInfo::capacity; empty for other devices.
using CapacityAmounts = std::vector<api::Quantity>;

// A result's consumedCapacity (by name) as amounts parallel to device `d`'s capacity (empty for
// a device that is not shareable). Errors: a capacity the device does not publish.
absl::StatusOr<CapacityAmounts> ConsumedAmounts(
    const Inventory& inventory, DeviceId d, const std::map<std::string, api::Quantity>& by_name);

class AllocationState {
 public:
  explicit AllocationState(const Inventory& inventory);

  bool in_use(DeviceId d) const { return in_use_[d] > 0; }
  const api::Quantity& counter_used(CounterSetId set, uint32_t counter) const {
    return counters_used_[set][counter];
  }
  // Capacity already consumed on a shareable device, parallel to DeviceInfo::capacity (empty
  // for devices that do not allow multiple allocations).
  std::span<const api::Quantity> capacity_used(const Inventory& inventory, DeviceId d) const {
    const DeviceInfo& info = inventory.devices()[d];
    if (info.capacity_slot == kNoId) return {};
    return {capacity_used_.data() + info.capacity_slot, info.capacity.size()};
  }

  // Whether the counters `d` consumes are still available in full.
  bool CountersFit(const Inventory& inventory, DeviceId d) const;

  // Records one allocation of `d`: exclusive use, unless the device allows multiple
  // allocations, in which case `consumed` capacity is added; counters are consumed either
  // way. Admin-access results must not be recorded (they do not count as use).
  // REQUIRES: `consumed` is empty or parallel to the device's capacity.
  absl::Status Allocate(const Inventory& inventory, DeviceId d, const CapacityAmounts& consumed);
  // Undoes one Allocate with the same arguments.
  absl::Status Release(const Inventory& inventory, DeviceId d, const CapacityAmounts& consumed);

  // Records the status.allocation of every ResourceClaim among `objects` (admin-access
  // results excepted). Results that name devices the inventory does not have, or consumed
  // capacity their device does not publish, are returned as messages naming the claim; they
  // are skipped.
  std::vector<std::string> ApplyAllocatedClaims(const Inventory& inventory,
                                                const api::ObjectRefs& objects);
  std::vector<std::string> ApplyAllocatedClaims(const Inventory& inventory,
                                                const std::vector<api::SourcedObject>& objects) {
    return ApplyAllocatedClaims(inventory, api::RefsOf(objects));
  }

 private:
  std::vector<uint32_t> in_use_;
  std::vector<std::vector<api::Quantity>> counters_used_;
  std::vector<api::Quantity> capacity_used_;  // by capacity slot (DeviceInfo::capacity_slot)
};

}  // namespace gpuplane::model

#endif  // GPUPLANE_MODEL_ALLOCATION_STATE_H_
