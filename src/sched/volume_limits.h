// CSI volume limits, as kube-scheduler's NodeVolumeLimits plugin counts them: a node's CSINode
// gives, per CSI driver, how many volumes the node may have attached (allocatable.count); every
// volume of a pod placed there counts once however many pods use it, named by its driver and
// volume handle (a bound claim's CSI PersistentVolume; an unbound claim counts as a volume of
// its StorageClass's provisioner, by the claim's name), and so does every volume a
// VolumeAttachment attaches there, used by a pod or not (a volume still being detached). A pod
// fits when, for every driver with a limit, the volumes attached plus the pod's new ones stay
// within it. In-tree volumes of plugins migrated to CSI count as their CSI driver's
// (sched/csi_migration.h); Portworx's only on nodes whose CSINode says the plugin migrated.
// Plain values and pure functions; not synchronized.
#ifndef GPUPLANE_SCHED_VOLUME_LIMITS_H_
#define GPUPLANE_SCHED_VOLUME_LIMITS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpuplane::sched {

struct CsiVolume {
  std::string driver;
  std::string id;  // unique among every driver's volumes: "<driver>/<volume handle>"
  // Non-empty: an in-tree plugin's volume that counts only on nodes whose CSINode lists the
  // plugin as migrated (kMigratedPluginsAnnotation); kube does so for Portworx only.
  std::string migrated_plugin;
  bool operator==(const CsiVolume&) const = default;
};

// The CSINode annotation listing the in-tree plugins migrated to CSI on the node, separated by
// commas (kubelet sets it).
inline constexpr char kMigratedPluginsAnnotation[] = "storage.alpha.kubernetes.io/migrated-plugins";

// The CSI volumes attached to one node by the pods placed there.
class AttachedVolumes {
 public:
  // The node's CSINode's migrated plugins (kMigratedPluginsAnnotation's value), set before any
  // volume is added: a volume whose migrated_plugin it does not list is not counted here.
  void SetMigratedPlugins(const std::string& annotation);
  // Whether `v` counts on this node.
  bool Counts(const CsiVolume& v) const {
    return v.migrated_plugin.empty() || migrated_.contains(v.migrated_plugin);
  }
  void Add(const std::vector<CsiVolume>& volumes);
  void Remove(const std::vector<CsiVolume>& volumes);
  // A volume a VolumeAttachment attaches: attached whatever pods come and go.
  void Attach(const CsiVolume& volume);
  bool Has(const std::string& id) const { return users_.contains(id); }
  int64_t Count(const std::string& driver) const;

 private:
  std::set<std::string, std::less<>> migrated_;
  std::map<std::string, int> users_;                // by id: how many placed pods use it
  std::map<std::string, int64_t> count_by_driver_;  // volumes with users, per driver
};

// Whether `want` (a pod's volumes, or a gang's members' together) would take some driver of
// `limits` (driver -> volumes the node may attach) past its limit on a node with `attached`.
bool OverVolumeLimits(const std::vector<CsiVolume>& want, const AttachedVolumes& attached,
                      const std::map<std::string, int64_t>& limits);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_VOLUME_LIMITS_H_
