// Cluster inventory: everything the allocator searches over, with dense integer ids, built
// from DeviceClasses, ResourceSlices and Nodes. Only the highest generation of each pool
// counts; a pool is complete once all its slices of that generation are present, and only
// complete pools' devices are allocatable (nodes list them; see NodeInfo). Each device
// knows its pool, the node it is local to (if any), the counters it consumes (resolved to
// counter-set ids), its capacities (names interned to dense CapacityIds, so hot paths compare
// integers). The CEL `device` values selectors read are built by their users on demand
// (alloc::SelectorMemo), most never: a selector's result is shared by devices alike. Each node
// knows every device it can reach (node-local, nodeSelector, allNodes, per-device selection).
// Immutable after Build; safe to read from several threads. Move-only (devices point into slices it
// owns, or borrows: BuildBorrowingSlices).
#ifndef GPUPLANE_MODEL_INVENTORY_H_
#define GPUPLANE_MODEL_INVENTORY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "api/object.h"
#include "api/quantity.h"

namespace gpuplane::model {

using NodeId = uint32_t;
using PoolId = uint32_t;
using DeviceId = uint32_t;
using CounterSetId = uint32_t;
using CapacityId = uint32_t;  // a capacity name as devices publish it ("memory"), interned
inline constexpr uint32_t kNoId = UINT32_MAX;

struct CounterUse {
  CounterSetId set;
  uint32_t counter;  // index into CounterSetInfo::names
  api::Quantity amount;
};

// One capacity a device publishes.
struct DeviceCapacityInfo {
  CapacityId id = kNoId;
  const api::DeviceCapacity* spec = nullptr;  // in a slice the Inventory owns or borrows
};

struct DeviceInfo {
  PoolId pool = kNoId;
  const api::Device* spec = nullptr;          // in a slice the Inventory owns or borrows
  const api::ResourceSlice* slice = nullptr;  // the slice that publishes it, held likewise
  std::vector<CounterUse> consumes;
  // Its capacities in published-name order (the order of spec->capacity). Capacity consumed on
  // a device is a vector parallel to this one.
  std::vector<DeviceCapacityInfo> capacity;
  // Devices that allow multiple allocations: the first of capacity.size() consecutive slots
  // (AllocationState keeps what is consumed per slot); kNoId for the others.
  uint32_t capacity_slot = kNoId;
  bool shareable = false;  // allowMultipleAllocations
  // Some attribute is published with its domain ("d/name"); else Attribute skips looking up
  // a qualified name as written.
  bool qualified_attributes = false;
  NodeId node = kNoId;  // set for node-local devices
};

struct PoolInfo {
  std::string driver;
  std::string name;
  int64_t generation = 0;
  bool complete = false;
  std::vector<DeviceId> devices;
};

struct CounterSetInfo {
  PoolId pool = kNoId;
  std::string name;
  std::vector<std::string> names;       // counter names, sorted
  std::vector<api::Quantity> capacity;  // parallel to names
};

struct NodeInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<DeviceId> devices;  // every device this node can reach, ascending
  // Pools being updated (fewer slices of the current generation than resourceSliceCount) that
  // reach this node. As in Kubernetes' allocator, their devices are not in `devices` (the
  // missing slices may change them), and an allocationMode All request cannot be served here.
  std::vector<PoolId> incomplete_pools;
};

// An attribute's value as its type and value, without copying: the first of int, bool,
// string and version that is set ('i', 'b', 's', 'v'; '-' for none), its number (an int, a
// bool as 0 or 1) or its text (a view into the attribute). Equal views, equal values.
struct AttributeValueView {
  char kind = '-';
  int64_t number = 0;
  std::string_view text;
  bool operator==(const AttributeValueView&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const AttributeValueView& v) {
    return H::combine(std::move(h), v.kind, v.number, v.text);
  }
};
AttributeValueView ValueView(const api::DeviceAttribute& a);

// A compact string that identifies an attribute value (its ValueView), for hashing and maps.
std::string AttributeKey(const api::DeviceAttribute& a);

class Inventory {
 public:
  // Problems that make devices unusable (for example a counter set a device consumes is not
  // defined in its pool) are returned in `warnings`; they do not fail the build.
  static Inventory Build(const std::vector<api::SourcedObject>& objects);
  // The same, taking the ResourceSlices out of `objects` instead of copying them (they are
  // left moved-from; the other objects are untouched and still usable).
  static Inventory BuildTakingSlices(std::vector<api::SourcedObject>& objects);
  // The same, reading the ResourceSlices where they are: `objects` must outlive the inventory
  // unchanged (a run that holds both, as alloc::AllocateInOrder does, frees nothing of them).
  static Inventory BuildBorrowingSlices(const std::vector<api::SourcedObject>& objects);
  static Inventory BuildBorrowingSlices(const api::ObjectRefs& objects);

  Inventory(Inventory&&) = default;
  Inventory& operator=(Inventory&&) = default;
  Inventory(const Inventory&) = delete;
  Inventory& operator=(const Inventory&) = delete;

  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const std::vector<PoolInfo>& pools() const { return pools_; }
  const std::vector<DeviceInfo>& devices() const { return devices_; }
  const std::vector<CounterSetInfo>& counter_sets() const { return counter_sets_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Published capacity names by CapacityId, and how many capacity slots shareable devices have.
  const std::vector<std::string>& capacity_names() const { return capacity_names_; }
  uint32_t capacity_slots() const { return capacity_slots_; }
  // The id of a published capacity name; nullopt when no device publishes it.
  std::optional<CapacityId> FindCapacity(std::string_view name) const;
  // The index into devices()[d].capacity of capacity `id`; nullopt when `d` lacks it.
  std::optional<uint32_t> CapacityIndex(DeviceId d, CapacityId id) const;
  // Devices that consume each counter set, ascending (parallel to counter_sets()).
  const std::vector<std::vector<DeviceId>>& counter_set_devices() const {
    return counter_set_devices_;
  }

  // A device's attribute by qualified name ("gpu.nvidia.com/index"); an unqualified published
  // name counts as qualified by the device's driver. Null when absent.
  const api::DeviceAttribute* Attribute(DeviceId d, const std::string& qualified) const;

  std::optional<NodeId> FindNode(const std::string& name) const;
  const api::DeviceClass* FindClass(const std::string& name) const;
  // Every DeviceClass name, sorted (for "did you mean" in errors).
  std::vector<std::string> ClassNames() const;
  // "driver/pool/device", as allocation results name devices.
  std::optional<DeviceId> FindDevice(const std::string& driver, const std::string& pool,
                                     const std::string& device) const;

 private:
  friend class InventoryBuilder;  // inventory.cc: the four phases of a build
  Inventory() = default;

  // Owned copies that DeviceInfo::spec points into (unique_ptr keeps addresses stable).
  std::vector<std::unique_ptr<api::ResourceSlice>> slices_;
  absl::flat_hash_map<std::string, api::DeviceClass> classes_;
  std::vector<NodeInfo> nodes_;
  std::vector<PoolInfo> pools_;
  std::vector<DeviceInfo> devices_;
  std::vector<CounterSetInfo> counter_sets_;
  std::vector<std::vector<DeviceId>> counter_set_devices_;
  absl::flat_hash_map<std::string, NodeId> node_index_;
  // (driver, pool, device) -> id; the names are views into the owned slices.
  using DeviceKey = std::tuple<std::string_view, std::string_view, std::string_view>;
  absl::flat_hash_map<DeviceKey, DeviceId> device_index_;
  std::vector<std::string> capacity_names_;
  std::map<std::string, CapacityId, std::less<>> capacity_index_;
  uint32_t capacity_slots_ = 0;
  std::vector<std::string> warnings_;
};

}  // namespace gpuplane::model

#endif  // GPUPLANE_MODEL_INVENTORY_H_
