#include "model/allocation_state.h"

#include <map>

#include "util/strings.h"

namespace gpuplane::model {

AllocationState::AllocationState(const Inventory& inventory)
    : in_use_(inventory.devices().size(), 0), capacity_used_(inventory.capacity_slots()) {
  counters_used_.reserve(inventory.counter_sets().size());
  for (const CounterSetInfo& cs : inventory.counter_sets()) {
    counters_used_.emplace_back(cs.names.size());
  }
}

bool AllocationState::CountersFit(const Inventory& inventory, DeviceId d) const {
  for (const CounterUse& use : inventory.devices()[d].consumes) {
    const api::Quantity& capacity = inventory.counter_sets()[use.set].capacity[use.counter];
    absl::StatusOr<api::Quantity> after = counters_used_[use.set][use.counter].Add(use.amount);
    if (!after.ok() || capacity < *after) return false;
  }
  return true;
}

namespace {

absl::Status AddAll(api::Quantity* into, const CapacityAmounts& amounts, bool subtract) {
  for (size_t i = 0; i < amounts.size(); ++i) {
    absl::StatusOr<api::Quantity> next =
        subtract ? into[i].Sub(amounts[i]) : into[i].Add(amounts[i]);
    if (!next.ok()) return next.status();
    into[i] = *next;
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const DeviceInfo& info, const CapacityAmounts& consumed) {
  if (consumed.empty() || consumed.size() == info.capacity.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(util::Cat("device ", info.spec->name, " has ",
                                              info.capacity.size(), " capacities, not ",
                                              consumed.size()));
}

}  // namespace

absl::StatusOr<CapacityAmounts> ConsumedAmounts(
    const Inventory& inventory, DeviceId d, const std::map<std::string, api::Quantity>& by_name) {
  const DeviceInfo& info = inventory.devices()[d];
  if (!info.shareable || by_name.empty()) return CapacityAmounts{};
  CapacityAmounts amounts(info.capacity.size());
  for (const auto& [name, q] : by_name) {
    std::optional<CapacityId> id = inventory.FindCapacity(name);
    std::optional<uint32_t> i = id ? inventory.CapacityIndex(d, *id) : std::nullopt;
    if (!i) {
      return absl::InvalidArgumentError(
          util::Cat("status.allocation consumes capacity ", name, " of device ", info.spec->name,
                    ", which does not publish it; the result is skipped"));
    }
    amounts[*i] = q;
  }
  return amounts;
}

absl::Status AllocationState::Allocate(const Inventory& inventory, DeviceId d,
                                       const CapacityAmounts& consumed) {
  const DeviceInfo& info = inventory.devices()[d];
  if (absl::Status s = CheckShape(info, consumed); !s.ok()) return s;
  for (const CounterUse& use : info.consumes) {
    absl::StatusOr<api::Quantity> next = counters_used_[use.set][use.counter].Add(use.amount);
    if (!next.ok()) return next.status();
    counters_used_[use.set][use.counter] = *next;
  }
  if (info.shareable) return AddAll(capacity_used_.data() + info.capacity_slot, consumed, false);
  ++in_use_[d];
  return absl::OkStatus();
}

absl::Status AllocationState::Release(const Inventory& inventory, DeviceId d,
                                      const CapacityAmounts& consumed) {
  const DeviceInfo& info = inventory.devices()[d];
  if (absl::Status s = CheckShape(info, consumed); !s.ok()) return s;
  // Check everything first, so a release of something not allocated changes nothing.
  const bool shareable = info.shareable;
  for (const CounterUse& use : info.consumes) {
    if (counters_used_[use.set][use.counter] < use.amount) {
      return absl::FailedPreconditionError(
          util::Cat("device ", info.spec->name, " releases counters it does not hold"));
    }
  }
  if (shareable) {
    for (size_t i = 0; i < consumed.size(); ++i) {
      if (capacity_used_[info.capacity_slot + i] < consumed[i]) {
        return absl::FailedPreconditionError(
            util::Cat("device ", info.spec->name, " releases ", consumed[i].String(), " of ",
                      inventory.capacity_names()[info.capacity[i].id], " that is not allocated"));
      }
    }
  } else if (in_use_[d] == 0) {
    return absl::FailedPreconditionError(util::Cat("device ", info.spec->name, " is not in use"));
  }
  for (const CounterUse& use : info.consumes) {
    counters_used_[use.set][use.counter] = *counters_used_[use.set][use.counter].Sub(use.amount);
  }
  if (shareable) return AddAll(capacity_used_.data() + info.capacity_slot, consumed, true);
  --in_use_[d];
  return absl::OkStatus();
}

std::vector<std::string> AllocationState::ApplyAllocatedClaims(const Inventory& inventory,
                                                               const api::ObjectRefs& objects) {
  std::vector<std::string> problems;
  for (const api::SourcedObject* p : objects) {
    const api::SourcedObject& o = *p;
    const auto* claim = std::get_if<api::ResourceClaim>(&o.object);
    if (claim == nullptr || !claim->status.allocation) continue;
    for (const api::DeviceRequestAllocationResult& r : claim->status.allocation->devices.results) {
      if (r.admin_access.value_or(false)) continue;
      std::optional<DeviceId> d = inventory.FindDevice(r.driver, r.pool, r.device);
      if (!d) {
        problems.push_back(util::Cat(o.file, ":", o.line, ": ", api::Label(o.object),
                                     ": status.allocation names device ", r.driver, "/", r.pool,
                                     "/", r.device, ", which no current ResourceSlice publishes"));
        continue;
      }
      absl::StatusOr<CapacityAmounts> consumed =
          ConsumedAmounts(inventory, *d, r.consumed_capacity);
      absl::Status s = consumed.ok() ? Allocate(inventory, *d, *consumed) : consumed.status();
      if (!s.ok()) {
        problems.push_back(util::Cat(o.file, ":", o.line, ": ", api::Label(o.object), ": ",
                                     std::string(s.message())));
      }
    }
  }
  return problems;
}

}  // namespace gpuplane::model
