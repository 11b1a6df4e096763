// core/v1 PersistentVolumeClaim and PersistentVolume, storage.k8s.io/v1 StorageClass, CSINode,
// CSIDriver, CSIStorageCapacity and VolumeAttachment: the fields the scheduler reads to place a
// pod where its volumes can be used (a bound volume's node affinity and CSI driver, an unbound
// claim's binding mode and its class's allowed topologies, how many volumes of each CSI driver a
// node may attach and which it has attached, which drivers publish their free storage and how
// much each topology segment has); every other field Kubernetes defines is kept in `extra` and
// written back unchanged.
// Plain value types; copyable; not synchronized.
#ifndef GPUPLANE_API_STORAGE_TYPES_H_
#define GPUPLANE_API_STORAGE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/quantity.h"

namespace gpuplane::api {

// The annotation kube-scheduler (and gpuplane) puts on an unbound WaitForFirstConsumer claim
// to ask its provisioner for a volume reachable from that node.
inline constexpr char kSelectedNodeAnnotation[] = "volume.kubernetes.io/selected-node";

struct PersistentVolumeClaimSpec {
  std::optional<std::string> storage_class_name;  // unset: no class ("" too)
  std::string volume_name;                        // set once bound
  std::optional<LabelSelector> selector;          // the labels a volume must have to bind it
  Passthrough extra;  // accessModes, resources, volumeMode, dataSource, ...
  bool operator==(const PersistentVolumeClaimSpec&) const = default;
};

struct PersistentVolumeClaimStatus {
  std::string phase;  // Pending, Bound, Lost
  Passthrough extra;
  bool operator==(const PersistentVolumeClaimStatus&) const = default;
};

struct PersistentVolumeClaim {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  PersistentVolumeClaimSpec spec;
  PersistentVolumeClaimStatus status;
  bool operator==(const PersistentVolumeClaim&) const = default;
};

struct VolumeNodeAffinity {
  std::optional<NodeSelector> required;
  bool operator==(const VolumeNodeAffinity&) const = default;
};

// spec.csi: a volume a CSI driver serves, by the driver's name and its own handle.
struct CSIPersistentVolumeSource {
  std::string driver;
  std::string volume_handle;
  Passthrough extra;  // readOnly, fsType, volumeAttributes, the secret references
  bool operator==(const CSIPersistentVolumeSource&) const = default;
};

struct PersistentVolumeSpec {
  std::string storage_class_name;
  std::optional<VolumeNodeAffinity> node_affinity;
  std::optional<CSIPersistentVolumeSource> csi;
  Passthrough extra;  // capacity, accessModes, claimRef, the other volume sources, ...
  bool operator==(const PersistentVolumeSpec&) const = default;
};

struct PersistentVolumeStatus {
  std::string phase;  // Pending, Available, Bound, Released, Failed
  Passthrough extra;
  bool operator==(const PersistentVolumeStatus&) const = default;
};

struct PersistentVolume {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  PersistentVolumeSpec spec;
  PersistentVolumeStatus status;
  bool operator==(const PersistentVolume&) const = default;
};

struct TopologySelectorRequirement {  // key In values
  std::string key;
  std::vector<std::string> values;
  bool operator==(const TopologySelectorRequirement&) const = default;
};

struct TopologySelectorTerm {
  std::vector<TopologySelectorRequirement> match_label_expressions;
  bool operator==(const TopologySelectorTerm&) const = default;
};

// A StorageClass has no spec: its fields are at the top level.
struct StorageClass {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  std::string provisioner;
  std::string volume_binding_mode;  // Immediate (the default) or WaitForFirstConsumer
  std::vector<TopologySelectorTerm> allowed_topologies;
  Passthrough extra;  // parameters, reclaimPolicy, mountOptions, allowVolumeExpansion
  bool operator==(const StorageClass&) const = default;
};

// storage.k8s.io/v1 CSINode, named as its Node: the CSI drivers running there, and how many
// volumes of each the node may have attached (allocatable.count; unset: no limit).
struct VolumeNodeResources {
  std::optional<int32_t> count;
  bool operator==(const VolumeNodeResources&) const = default;
};

struct CSINodeDriver {
  std::string name;
  std::string node_id;
  std::vector<std::string> topology_keys;
  std::optional<VolumeNodeResources> allocatable;
  bool operator==(const CSINodeDriver&) const = default;
};

struct CSINodeSpec {
  std::vector<CSINodeDriver> drivers;
  bool operator==(const CSINodeSpec&) const = default;
};

struct CSINode {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  CSINodeSpec spec;
  bool operator==(const CSINode&) const = default;
};

// storage.k8s.io/v1 CSIDriver, named as the driver registers itself: whether the scheduler
// checks the driver's published storage capacity before a volume is provisioned on a node.
struct CSIDriverSpec {
  std::optional<bool> storage_capacity;  // unset: false, as the API server defaults it
  std::string fs_group_policy;           // ReadWriteOnceWithFSType, File or None; "" unset
  std::vector<std::string> volume_lifecycle_modes;                // Persistent, Ephemeral
  std::optional<int64_t> node_allocatable_update_period_seconds;  // at least 10
  Passthrough extra;  // attachRequired, podInfoOnMount, tokenRequests, requiresRepublish, ...
  bool operator==(const CSIDriverSpec&) const = default;
};

struct CSIDriver {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  CSIDriverSpec spec;
  bool operator==(const CSIDriver&) const = default;
};

// storage.k8s.io/v1 CSIStorageCapacity (namespaced; its fields at the top level): the storage a
// CSI driver can still provision for a StorageClass on the nodes its nodeTopology selects
// (unset: none); maximumVolumeSize, when set, is the largest volume it can make there.
struct CSIStorageCapacity {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  std::string storage_class_name;
  std::optional<LabelSelector> node_topology;
  std::optional<Quantity> capacity;
  std::optional<Quantity> maximum_volume_size;
  bool operator==(const CSIStorageCapacity&) const = default;
};

// storage.k8s.io/v1 VolumeAttachment: a volume the attacher (a CSI driver) attaches to a node,
// or still has attached after its last pod left (until it is detached and the object deleted).
// Exactly one source: a PersistentVolume by name, or an inline volume's spec.
struct VolumeAttachmentSource {
  std::optional<std::string> persistent_volume_name;
  Passthrough extra;  // inlineVolumeSpec
  bool operator==(const VolumeAttachmentSource&) const = default;
};

struct VolumeAttachmentSpec {
  std::string attacher;
  std::string node_name;
  VolumeAttachmentSource source;
  bool operator==(const VolumeAttachmentSpec&) const = default;
};

struct VolumeAttachmentStatus {
  std::optional<bool> attached;
  Passthrough extra;  // attachmentMetadata, attachError, detachError
  bool operator==(const VolumeAttachmentStatus&) const = default;
};

struct VolumeAttachment {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  VolumeAttachmentSpec spec;
  VolumeAttachmentStatus status;
  bool operator==(const VolumeAttachment&) const = default;
};

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_STORAGE_TYPES_H_
