// In-tree volume plugins migrated to CSI, as kube-scheduler's NodeVolumeLimits counts their
// volumes (through csi-translation-lib): an AWS EBS, GCE PD, Azure Disk or OpenStack Cinder
// volume (a PersistentVolume's source, or a pod's inline volume) counts as a volume of the CSI
// driver that took the plugin over, named by the handle that driver would give it; a claim not
// bound yet, of a StorageClass whose provisioner is one of those plugins, counts under that
// driver too. A Portworx volume counts as pxd.portworx.com's only on nodes whose CSINode lists
// the plugin as migrated (CsiVolume::migrated_plugin), as in kube. Azure File and vSphere
// volumes are not counted, as in kube.
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

// The volume a claim not bound yet (`claim`: "ns/name") stands for when its StorageClass's
// provisioner is `provisioner`: one of the CSI driver of a migrated in-tree plugin, else of the
// provisioner itself, named by the claim (no driver's handle looks like it); nullopt for an
// in-tree plugin whose volumes are not counted.
std::optional<CsiVolume> ProvisionedVolume(std::string_view provisioner, std::string_view claim);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_CSI_MIGRATION_H_
