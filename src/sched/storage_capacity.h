// Storage capacity, as kube-scheduler's VolumeBinding checks it before a volume is provisioned
// on a node: a CSI driver that publishes its free storage (CSIDriver spec.storageCapacity)
// provisions a volume of a StorageClass on a node only when one of the class's
// CSIStorageCapacity objects selects the node (its nodeTopology label selector; none: no node)
// and its maximumVolumeSize, else its capacity, holds the claim's storage request.
// StorageCapacities finds the objects that may select a node by the node's labels (an object is
// filed under the first label its matchLabels asks), so a check costs the node's labels, not
// the number of objects (drivers of node-local storage publish one per node and class).
// Built once, then read-only: safe to read from several threads; borrows the objects.
#ifndef GPUPLANE_SCHED_STORAGE_CAPACITY_H_
#define GPUPLANE_SCHED_STORAGE_CAPACITY_H_

#include <map>
#include <string>
#include <vector>

#include "api/object.h"

namespace gpuplane::sched {

// The CSIStorageCapacity objects of one StorageClass.
class StorageCapacities {
 public:
  // Objects without nodeTopology select no node and are left out.
  void Add(const api::CSIStorageCapacity& c);
  // Whether some object selects the node with these labels and has room for `want`.
  bool HasRoom(const std::map<std::string, std::string>& labels, const api::Quantity& want) const;

 private:
  using Objects = std::vector<const api::CSIStorageCapacity*>;
  std::map<std::string, std::map<std::string, Objects, std::less<>>, std::less<>> by_label_;
  Objects unlabelled_;  // no matchLabels: tried for every node
};

// Whether `driver` (the CSIDriver named as the class's provisioner, or null when there is none)
// publishes storage capacity for the scheduler to check.
inline bool PublishesCapacity(const api::CSIDriver* driver) {
  return driver != nullptr && driver->spec.storage_capacity.value_or(false);
}

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_STORAGE_CAPACITY_H_
