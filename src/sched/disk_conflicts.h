// Inline disks two pods on one node may not share, as kube-scheduler's VolumeRestrictions
// plugin checks them: a pod's inline (not PersistentVolumeClaim) GCE PD, AWS EBS, iSCSI and RBD
// volumes. Two conflict when they name the same disk: a GCE PD by pdName unless both are
// read-only; an AWS EBS volume by volumeID (as written) even read-only; iSCSI by IQN unless both
// are read-only; RBD by pool and image with a Ceph monitor in common unless both are read-only.
// Pure functions; thread-safe.
#ifndef GPUPLANE_SCHED_DISK_CONFLICTS_H_
#define GPUPLANE_SCHED_DISK_CONFLICTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/core_types.h"

namespace gpuplane::sched {

struct InlineDisk {
  enum class Kind : uint8_t { kGcePd, kAwsEbs, kIscsi, kRbd };
  Kind kind = Kind::kGcePd;
  std::string id;                     // pdName, volumeID, IQN, or "<pool>/<image>" for RBD
  std::vector<std::string> monitors;  // RBD's Ceph monitors
  bool read_only = false;
  bool operator==(const InlineDisk&) const = default;
};

// The pod's inline disks, in the order of its volumes.
std::vector<InlineDisk> InlineDisksOf(const api::PodSpec& spec);

bool Conflict(const InlineDisk& a, const InlineDisk& b);

// The first disk of `used` a disk of `want` conflicts with; null when none does.
const InlineDisk* FirstDiskConflict(const std::vector<InlineDisk>& want,
                                    const std::vector<InlineDisk>& used);
inline bool AnyDiskConflict(const std::vector<InlineDisk>& want,
                            const std::vector<InlineDisk>& used) {
  return FirstDiskConflict(want, used) != nullptr;
}

// "GCE PD data (read-write)", for messages.
std::string Describe(const InlineDisk& d);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_DISK_CONFLICTS_H_
