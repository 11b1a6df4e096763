#include "model/allocation_state.h"

#include "util/strings.h"

namespace gpuplane::model {

AllocationState::AllocationState(const Inventory& inventory)
    : in_use_(inventory.devices().size(), 0), capacity_used_(inventory.devices().size()) {
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

absl::Status AddAll(std::map<std::string, api::Quantity>& into,
                    const std::map<std::string, api::Quantity>& amounts, bool subtract) {
  for (const auto& [name, q] : amounts) {
    api::Quantity& slot = into[name];
    absl::StatusOr<api::Quantity> next = subtract ? slot.Sub(q) : slot.Add(q);
    if (!next.ok()) return next.status();
    slot = *next;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AllocationState::Allocate(const Inventory& inventory, DeviceId d,
                                       const std::map<std::string, api::Quantity>& consumed) {
  const DeviceInfo& info = inventory.devices()[d];
  for (const CounterUse& use : info.consumes) {
    absl::StatusOr<api::Quantity> next = counters_used_[use.set][use.counter].Add(use.amount);
    if (!next.ok()) return next.status();
    counters_used_[use.set][use.counter] = *next;
  }
  if (info.spec->allow_multiple_allocations.value_or(false)) {
    return AddAll(capacity_used_[d], consumed, false);
  }
  ++in_use_[d];
  return absl::OkStatus();
}

absl::Status AllocationState::Release(const Inventory& inventory, DeviceId d,
                                      const std::map<std::string, api::Quantity>& consumed) {
  const DeviceInfo& info = inventory.devices()[d];
  // Check everything first, so a release of something not allocated changes nothing.
  bool shareable = info.spec->allow_multiple_allocations.value_or(false);
  for (const CounterUse& use : info.consumes) {
    if (counters_used_[use.set][use.counter] < use.amount) {
      return absl::FailedPreconditionError(
          util::Cat("device ", info.spec->name, " releases counters it does not hold"));
    }
  }
  if (shareable) {
    for (const auto& [name, q] : consumed) {
      auto it = capacity_used_[d].find(name);
      if (it == capacity_used_[d].end() || it->second < q) {
        return absl::FailedPreconditionError(util::Cat("device ", info.spec->name, " releases ",
                                                       q.String(), " of ", name,
                                                       " that is not allocated"));
      }
    }
  } else if (in_use_[d] == 0) {
    return absl::FailedPreconditionError(util::Cat("device ", info.spec->name, " is not in use"));
  }
  for (const CounterUse& use : info.consumes) {
    counters_used_[use.set][use.counter] = *counters_used_[use.set][use.counter].Sub(use.amount);
  }
  if (shareable) return AddAll(capacity_used_[d], consumed, true);
  --in_use_[d];
  return absl::OkStatus();
}

std::vector<std::string> AllocationState::ApplyAllocatedClaims(
    const Inventory& inventory, const std::vector<api::SourcedObject>& objects) {
  std::vector<std::string> problems;
  for (const api::SourcedObject& o : objects) {
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
      absl::Status s = Allocate(inventory, *d, r.consumed_capacity);
      if (!s.ok())
        problems.push_back(util::Cat(api::Label(o.object), ": ", std::string(s.message())));
    }
  }
  return problems;
}

}  // namespace gpuplane::model
