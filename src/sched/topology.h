// Topology domains for gangs. A level is named by a node label key (every node with that
// label is in the domain of its value: a zone, a rack, a block) or by a DRA device attribute
// (every device with that attribute value: an NVLink domain or clique, possibly spanning
// nodes; unqualified names are qualified by each device's driver). `Domains` lists a level's
// domains with their free devices, least free first, so a gang takes the fullest domain that
// fits and big domains stay whole. A DomainFilter restricts the allocator to one domain's
// devices (devices of other drivers, such as NICs, are not restricted).
//
// Pure functions over a Snapshot; DomainFilter borrows the inventory. Not thread-safe.
#ifndef GPUPLANE_SCHED_TOPOLOGY_H_
#define GPUPLANE_SCHED_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloc/allocator.h"
#include "sched/snapshot.h"

namespace gpuplane::sched {

struct TopologyLevel {
  std::string name;         // as the gang asked
  bool node_label = false;  // else a device attribute
};

struct Domain {
  std::string value;
  std::vector<model::NodeId> nodes;  // ascending
  int64_t free = 0;                  // devices not in exclusive use
  int64_t devices = 0;
};

// NotFound (with the level's name) when no node has the label and no device the attribute.
absl::StatusOr<TopologyLevel> ResolveLevel(const Snapshot& s, const std::string& name);

// The level's domains, least free first (ties by value).
std::vector<Domain> Domains(const Snapshot& s, const TopologyLevel& level);

// The value a device has for an attribute level ("" when absent).
std::string DeviceDomain(const model::Inventory& inv, model::DeviceId d, const std::string& name);

class DomainFilter : public alloc::DeviceFilter {
 public:
  DomainFilter(const model::Inventory& inv, std::string attribute, std::string value);
  bool Allows(model::DeviceId device) const override;
  std::string Describe() const override;

 private:
  const model::Inventory& inv_;
  std::string attribute_, value_, driver_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_TOPOLOGY_H_
