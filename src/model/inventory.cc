#include "model/inventory.h"

#include <algorithm>
#include <set>

#include "model/node_selector.h"
#include "util/strings.h"

namespace gpuplane::model {
namespace {

struct PoolKey {
  std::string driver;
  std::string name;
  bool operator<(const PoolKey& o) const {
    return std::tie(driver, name) < std::tie(o.driver, o.name);
  }
  bool operator==(const PoolKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const PoolKey& k) {
    return H::combine(std::move(h), k.driver, k.name);
  }
};

// Each pool's slices, the pools in key order.
using Pools = std::vector<std::pair<PoolKey, std::vector<const api::ResourceSlice*>>>;

// What the inventory does with the ResourceSlices it reads: keeps a copy, takes them (moves
// them out of the objects), or reads the caller's in place.
enum class Slices { kCopy, kTake, kBorrow };

}  // namespace

// Builds an Inventory in four phases: nodes, classes and each pool's generation; the slices
// of each pool's current generation; each pool's counter sets and devices; then which devices
// consume each counter set and which nodes reach each device.
class InventoryBuilder {
 public:
  InventoryBuilder(api::ObjectRefs objects, Slices slices)
      : objects_(std::move(objects)), slices_(slices) {}

  Inventory Build() && {
    NodesAndClasses();
    Pools pools = CurrentSlices();
    size_t devices = 0;
    for (const auto& [key, slices] : pools) {
      for (const api::ResourceSlice* s : slices) devices += s->spec.devices.size();
    }
    inv_.devices_.reserve(devices);
    inv_.device_index_.reserve(devices);
    for (auto& [key, slices] : pools) AddPool(key, slices);
    CounterSetDevices();
    Reachability();
    return std::move(inv_);
  }

 private:
  // Nodes: Node objects, plus names that slices and devices mention (simulations often have
  // slices without Node objects).
  NodeId AddNode(const std::string& name) {
    auto it = inv_.node_index_.find(name);
    if (it != inv_.node_index_.end()) return it->second;
    NodeId id = static_cast<NodeId>(inv_.nodes_.size());
    inv_.nodes_.push_back(NodeInfo{name, {}, {}});
    inv_.node_index_.emplace(name, id);
    return id;
  }

  void NodesAndClasses() {
    for (const api::SourcedObject* p : objects_) {
      const api::SourcedObject& o = *p;
      if (!o.valid) continue;
      if (const auto* n = std::get_if<api::Node>(&o.object)) {
        inv_.nodes_[AddNode(n->metadata.name)].labels = n->metadata.labels;
      } else if (const auto* c = std::get_if<api::DeviceClass>(&o.object)) {
        inv_.classes_.emplace(c->metadata.name, *c);
      } else if (const auto* s = std::get_if<api::ResourceSlice>(&o.object)) {
        PoolKey key{s->spec.driver, s->spec.pool.name};
        auto [it, inserted] = generation_.try_emplace(key, s->spec.pool.generation);
        if (!inserted) it->second = std::max(it->second, s->spec.pool.generation);
      }
    }
  }

  // Slices of the current generation, grouped by pool in a stable order.
  Pools CurrentSlices() {
    absl::flat_hash_map<PoolKey, size_t> index;  // into by_pool
    Pools by_pool;
    for (const api::SourcedObject* o : objects_) {
      const auto* s = std::get_if<api::ResourceSlice>(&o->object);
      if (s == nullptr || !o->valid) continue;
      PoolKey key{s->spec.driver, s->spec.pool.name};
      if (s->spec.pool.generation != generation_[key]) continue;
      auto [it, added] = index.try_emplace(key, by_pool.size());
      if (added) by_pool.emplace_back(std::move(key), std::vector<const api::ResourceSlice*>());
      by_pool[it->second].second.push_back(s);
    }
    std::sort(by_pool.begin(), by_pool.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return by_pool;
  }

  void AddPool(const PoolKey& key, const std::vector<const api::ResourceSlice*>& slices) {
    const PoolId pool_id = static_cast<PoolId>(inv_.pools_.size());
    PoolInfo pool{key.driver, key.name, generation_[key], false, {}};
    // Slices that disagree on resourceSliceCount (a driver mid-update) count as the largest.
    int64_t expected = 0;
    for (const api::ResourceSlice* sl : slices) {
      expected = std::max(expected, sl->spec.pool.resource_slice_count);
    }
    pool.complete = static_cast<int64_t>(slices.size()) >= expected;
    // Counter sets first: devices refer to them by name.
    std::map<std::string, CounterSetId, std::less<>> sets;
    for (const api::ResourceSlice* s : slices) {
      for (const api::CounterSet& cs : s->spec.shared_counters) {
        CounterSetInfo info{pool_id, cs.name, {}, {}};
        for (const auto& [name, counter] : cs.counters) {
          info.names.push_back(name);
          info.capacity.push_back(counter.value);
        }
        sets.emplace(cs.name, static_cast<CounterSetId>(inv_.counter_sets_.size()));
        inv_.counter_sets_.push_back(std::move(info));
      }
    }
    for (const api::ResourceSlice* s : slices) {
      // Slices the caller gave up are moved (their devices are the bulk of the inventory).
      if (slices_ == Slices::kTake) {
        inv_.slices_.push_back(
            std::make_unique<api::ResourceSlice>(std::move(const_cast<api::ResourceSlice&>(*s))));
      } else if (slices_ == Slices::kCopy) {
        inv_.slices_.push_back(std::make_unique<api::ResourceSlice>(*s));
      }
      const api::ResourceSlice& owned = slices_ == Slices::kBorrow ? *s : *inv_.slices_.back();
      for (const api::Device& d : owned.spec.devices) AddDevice(key, pool_id, owned, d, sets, pool);
      if (!pool.complete) incomplete_slices_.emplace_back(pool_id, &owned);
    }
    inv_.pools_.push_back(std::move(pool));
  }

  void AddDevice(const PoolKey& key, PoolId pool_id, const api::ResourceSlice& owned,
                 const api::Device& d, const std::map<std::string, CounterSetId, std::less<>>& sets,
                 PoolInfo& pool) {
    DeviceInfo info;
    info.pool = pool_id;
    info.spec = &d;
    info.slice = &owned;
    if (!CounterUses(key, d, sets, info.consumes)) return;
    const std::optional<std::string>& node_name =
        owned.spec.node_name ? owned.spec.node_name : d.node_name;
    if (node_name) {
      // A slice's devices name its node: looked up once per run of equal names.
      if (last_node_name_ == nullptr || *last_node_name_ != *node_name) {
        last_node_ = AddNode(*node_name);
        last_node_name_ = &*node_name;
      }
      info.node = last_node_;
    }
    Capacities(d, info);
    info.qualified_attributes =
        std::any_of(d.attributes.begin(), d.attributes.end(),
                    [](const auto& a) { return a.first.find('/') != std::string::npos; });
    DeviceId id = static_cast<DeviceId>(inv_.devices_.size());
    inv_.device_index_.emplace(
        Inventory::DeviceKey(owned.spec.driver, owned.spec.pool.name, d.name), id);
    pool.devices.push_back(id);
    inv_.devices_.push_back(std::move(info));
  }

  // The device's capacities by interned name, and its consumption slots when it is shareable.
  void Capacities(const api::Device& d, DeviceInfo& info) {
    info.shareable = d.allow_multiple_allocations.value_or(false);
    info.capacity.reserve(d.capacity.size());
    for (const auto& [name, cap] : d.capacity) {
      auto [it, inserted] = inv_.capacity_index_.try_emplace(
          name, static_cast<CapacityId>(inv_.capacity_names_.size()));
      if (inserted) inv_.capacity_names_.push_back(name);
      info.capacity.push_back(DeviceCapacityInfo{it->second, &cap});
    }
    if (info.shareable) {
      info.capacity_slot = inv_.capacity_slots_;
      inv_.capacity_slots_ += static_cast<uint32_t>(info.capacity.size());
    }
  }

  // The device's counter consumption by counter set and counter index; false (with a
  // warning: the device cannot be allocated) when it names a set or counter the pool lacks.
  bool CounterUses(const PoolKey& key, const api::Device& d,
                   const std::map<std::string, CounterSetId, std::less<>>& sets,
                   std::vector<CounterUse>& uses) {
    bool usable = true;
    for (const api::DeviceCounterConsumption& use : d.consumes_counters) {
      auto set = sets.find(use.counter_set);
      if (set == sets.end()) {
        inv_.warnings_.push_back(util::Cat("device ", key.driver, "/", key.name, "/", d.name,
                                           " consumes counter set \"", use.counter_set,
                                           "\", which pool \"", key.name,
                                           "\" does not define; it cannot be allocated"));
        return false;
      }
      const CounterSetInfo& cs = inv_.counter_sets_[set->second];
      for (const auto& [name, counter] : use.counters) {
        auto pos = std::find(cs.names.begin(), cs.names.end(), name);
        if (pos == cs.names.end()) {
          inv_.warnings_.push_back(util::Cat("device ", key.driver, "/", key.name, "/", d.name,
                                             " consumes counter \"", name, "\" that counter set \"",
                                             use.counter_set, "\" lacks; it cannot be allocated"));
          usable = false;
          break;  // the device's next counter set may be reported too
        }
        uses.push_back(
            CounterUse{set->second, static_cast<uint32_t>(pos - cs.names.begin()), counter.value});
      }
    }
    return usable;
  }

  void CounterSetDevices() {
    inv_.counter_set_devices_.resize(inv_.counter_sets_.size());
    for (DeviceId id = 0; id < inv_.devices_.size(); ++id) {
      for (const CounterUse& use : inv_.devices_[id].consumes) {
        std::vector<DeviceId>& list = inv_.counter_set_devices_[use.set];
        if (list.empty() || list.back() != id) list.push_back(id);
      }
    }
  }

  // Reachability: node-local devices, then selector-based and all-node devices, of complete
  // pools; nodes reached by an incomplete pool's slice (or device) note the pool.
  void Reachability() {
    for (const auto& [pool, slice] : incomplete_slices_) {
      for (NodeInfo& n : inv_.nodes_) {
        bool reaches = SliceReaches(*slice, n);
        for (const api::Device& d : slice->spec.devices) reaches = reaches || DeviceReaches(d, n);
        std::vector<PoolId>& marked = n.incomplete_pools;
        if (reaches && (marked.empty() || marked.back() != pool)) marked.push_back(pool);
      }
    }
    for (DeviceId id = 0; id < inv_.devices_.size(); ++id) {
      const DeviceInfo& d = inv_.devices_[id];
      if (!inv_.pools_[d.pool].complete) continue;
      if (d.node != kNoId) {
        inv_.nodes_[d.node].devices.push_back(id);
        continue;
      }
      const api::ResourceSlice* slice = d.slice;
      const std::optional<api::NodeSelector>& selector =
          slice != nullptr && slice->spec.node_selector ? slice->spec.node_selector
                                                        : d.spec->node_selector;
      bool all = (slice != nullptr && slice->spec.all_nodes.value_or(false)) ||
                 d.spec->all_nodes.value_or(false);
      for (NodeInfo& n : inv_.nodes_) {
        if (all || (selector && MatchesNodeSelector(*selector, n.name, n.labels))) {
          n.devices.push_back(id);
        }
      }
    }
  }

  static bool SliceReaches(const api::ResourceSlice& s, const NodeInfo& n) {
    return (s.spec.node_name && *s.spec.node_name == n.name) || s.spec.all_nodes.value_or(false) ||
           (s.spec.node_selector && MatchesNodeSelector(*s.spec.node_selector, n.name, n.labels));
  }
  static bool DeviceReaches(const api::Device& d, const NodeInfo& n) {
    return (d.node_name && *d.node_name == n.name) || d.all_nodes.value_or(false) ||
           (d.node_selector && MatchesNodeSelector(*d.node_selector, n.name, n.labels));
  }

  const api::ObjectRefs objects_;
  Slices slices_;
  std::vector<std::pair<PoolId, const api::ResourceSlice*>> incomplete_slices_;
  Inventory inv_;
  absl::flat_hash_map<PoolKey, int64_t> generation_;
  const std::string* last_node_name_ = nullptr;  // the node AddDevice looked up last
  NodeId last_node_ = kNoId;
};

Inventory Inventory::Build(const std::vector<api::SourcedObject>& objects) {
  return InventoryBuilder(api::RefsOf(objects), Slices::kCopy).Build();
}

Inventory Inventory::BuildTakingSlices(std::vector<api::SourcedObject>& objects) {
  return InventoryBuilder(api::RefsOf(objects), Slices::kTake).Build();
}

Inventory Inventory::BuildBorrowingSlices(const std::vector<api::SourcedObject>& objects) {
  return InventoryBuilder(api::RefsOf(objects), Slices::kBorrow).Build();
}

Inventory Inventory::BuildBorrowingSlices(const api::ObjectRefs& objects) {
  return InventoryBuilder(objects, Slices::kBorrow).Build();
}

AttributeValueView ValueView(const api::DeviceAttribute& a) {
  if (a.int_value) return {'i', *a.int_value, {}};
  if (a.bool_value) return {'b', *a.bool_value ? 1 : 0, {}};
  if (a.string_value) return {'s', 0, *a.string_value};
  if (a.version_value) return {'v', 0, *a.version_value};
  return {};
}

std::string AttributeKey(const api::DeviceAttribute& a) {
  const AttributeValueView v = ValueView(a);
  switch (v.kind) {
    case 'i':
      return util::Cat("i", v.number);
    case 'b':
      return v.number != 0 ? "b1" : "b0";
    case 's':
    case 'v':
      return util::Cat(std::string(1, v.kind), v.text);
    default:
      return "-";
  }
}

const api::DeviceAttribute* Inventory::Attribute(DeviceId d, const std::string& qualified) const {
  const DeviceInfo& info = devices_[d];
  const api::Device& dev = *info.spec;
  const size_t slash = qualified.find('/');
  if (slash == std::string::npos || info.qualified_attributes) {  // as written
    auto it = dev.attributes.find(qualified);
    if (it != dev.attributes.end()) return &it->second;
  }
  if (slash != std::string::npos && qualified.compare(0, slash, pools_[info.pool].driver) == 0) {
    auto it = dev.attributes.find(std::string_view(qualified).substr(slash + 1));
    if (it != dev.attributes.end()) return &it->second;
  }
  return nullptr;
}

std::optional<CapacityId> Inventory::FindCapacity(std::string_view name) const {
  auto it = capacity_index_.find(name);
  if (it == capacity_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> Inventory::CapacityIndex(DeviceId d, CapacityId id) const {
  const std::vector<DeviceCapacityInfo>& caps = devices_[d].capacity;
  for (uint32_t i = 0; i < caps.size(); ++i) {
    if (caps[i].id == id) return i;
  }
  return std::nullopt;
}

std::optional<NodeId> Inventory::FindNode(const std::string& name) const {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

const api::DeviceClass* Inventory::FindClass(const std::string& name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

std::vector<std::string> Inventory::ClassNames() const {
  std::vector<std::string> names;
  names.reserve(classes_.size());
  for (const auto& [name, cls] : classes_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<DeviceId> Inventory::FindDevice(const std::string& driver, const std::string& pool,
                                              const std::string& device) const {
  auto it = device_index_.find(DeviceKey(driver, pool, device));
  if (it == device_index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpuplane::model
