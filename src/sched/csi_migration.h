// In-tree volume plugins migrated to CSI, as kube-scheduler's NodeVolumeLimits counts their
// volumes (through csi-translation-lib): an AWS EBS, GCE PD, Azure Disk or OpenStack Cinder
// volume (a PersistentVolume's source, or a pod's inline volume) counts as a volume of the CSI
// driver that took the plugin over, named by the handle that driver would give it; a claim not
// bound yet, of a StorageClass whose provisioner is one of those plugins, counts under that
// driver too. Other in-tree plugins (Azure File, vSphere, Portworx) are not counted, as in kube
// for the first two; Portworx, which kube counts on nodes whose CSINode lists the plugin as
// migrated, is not counted here (docs/SCHEDULING.md, "Not built yet").
// Pure functions over API values; thread-safe.
#ifndef GPUPLANE_SCHED_CSI_MIGRATION_H_
#define GPUPLANE_SCHED_CSI_MIGRATION_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/meta.h"
#include "sched/volume_limits.h"

namespace gpuplane::sched {

// The CSI volume an in-tree volume source stands for: `sources` holds the source by its field
// name (awsElasticBlockStore, gcePersistentDisk, azureDisk, cinder), as a PersistentVolume's
// spec or a pod's volume keeps it; `pv_labels`: the PersistentVolume's labels (a GCE PD's zone
// names its handle), null for an inline volume. nullopt: none of those sources, or one whose
// volume id kube cannot translate (then it is not counted).
std::optional<CsiVolume> MigratedVolume(const api::Passthrough& sources,
                                        const std::map<std::string, std::string>* pv_labels);

// The driver a StorageClass's provisioner's volumes count under: the CSI driver of a migrated
// in-tree plugin, nullopt for an in-tree plugin whose volumes are not counted, else the
// provisioner itself.
std::optional<std::string> ProvisionerDriver(std::string_view provisioner);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_CSI_MIGRATION_H_
