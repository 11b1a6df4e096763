// Topology domains for gangs. A level is named by a node label key (every node with that
// label is in the domain of its value: a zone, a rack, a block) or by a DRA device attribute
// (every device with that attribute value: an NVLink domain or clique, possibly spanning
// nodes; unqualified names are qualified by each device's driver). A Topology maps a level's
// devices and nodes to dense domain ids once per session; `Domains` lists the domains with
// their free devices, least free first, so a gang takes the fullest domain that fits and big
// domains stay whole. A DomainFilter restricts the allocator to one domain's devices (devices
// of other drivers, such as NICs, are not restricted).
//
// A Topology borrows the inventory, which must outlive it (and its filters). Not thread-safe.
#ifndef GPUPLANE_SCHED_TOPOLOGY_H_
#define GPUPLANE_SCHED_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloc/allocator.h"
#include "model/allocation_state.h"
#include "model/inventory.h"

namespace gpuplane::sched {

// A domain as `Topology::Domains` lists it; its value and nodes are the Topology's.
struct Domain {
  int id = -1;
  int64_t free = 0;  // devices not in exclusive use
  int64_t devices = 0;
};

// The value a device has for an attribute level ("" when absent).
std::string DeviceDomain(const model::Inventory& inv, model::DeviceId d, const std::string& name);

class Topology {
 public:
  // NotFound (with the level's name) when no node has the label and no device the attribute.
  static absl::StatusOr<Topology> Resolve(const model::Inventory& inv, const std::string& name);

  const std::string& name() const { return name_; }
  bool node_label() const { return node_label_; }
  // The domains with their free devices now, least free first (ties in inventory order).
  std::vector<Domain> Domains(const model::AllocationState& state) const;
  const std::string& value(int id) const { return values_[id]; }
  const std::vector<model::NodeId>& nodes(int id) const { return nodes_[id]; }  // ascending
  // Whether `device` may serve a gang confined to domain `id` (attribute levels).
  bool Allows(int id, model::DeviceId device) const;

 private:
  Topology(const model::Inventory& inv, std::string name) : inv_(&inv), name_(std::move(name)) {}
  void IndexNodes();
  void IndexDevices();

  const model::Inventory* inv_;
  std::string name_;
  bool node_label_ = false;
  std::string driver_;                                 // the attribute's driver, when qualified
  std::vector<std::string> values_;                    // domain id -> value
  std::vector<std::vector<model::NodeId>> nodes_;      // domain id -> nodes, ascending
  std::vector<std::vector<model::DeviceId>> devices_;  // domain id -> devices
  std::vector<int> device_domain_;                     // device -> domain id, -1 none
  std::vector<uint8_t> device_driver_match_;           // device -> of the attribute's driver
};

class DomainFilter : public alloc::DeviceFilter {
 public:
  DomainFilter(const Topology& topology, const Domain& domain)
      : topology_(topology), id_(domain.id) {}
  bool Allows(model::DeviceId device) const override { return topology_.Allows(id_, device); }
  std::string Describe() const override;

 private:
  const Topology& topology_;
  int id_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_TOPOLOGY_H_
