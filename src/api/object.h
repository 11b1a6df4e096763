// The objects gpuplane understands, as one variant, with decoding from Doc trees (any
// supported apiVersion; resource.k8s.io v1beta1/v1beta2 converted to v1) and encoding to v1.
// Plain value types and pure functions; thread-safe.
#ifndef GPUPLANE_API_OBJECT_H_
#define GPUPLANE_API_OBJECT_H_

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/core_types.h"
#include "api/diagnostic.h"
#include "api/doc.h"
#include "api/queue_types.h"
#include "api/resource_types.h"
#include "api/storage_types.h"

namespace gpuplane::api {

using Object =
    std::variant<DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate, Pod, Node,
                 PodGroup, Workload, Queue, PersistentVolumeClaim, PersistentVolume, StorageClass,
                 Namespace, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment>;

// An object with where it came from.
struct SourcedObject {
  Object object;
  std::string file;
  uint32_t line = 0;
  bool valid = true;  // false when decoding reported errors for it
  bool operator==(const SourcedObject&) const = default;
};

// Objects held elsewhere, borrowed for a pass over them (the owner keeps them alive).
using ObjectRefs = std::vector<const SourcedObject*>;
ObjectRefs RefsOf(const std::vector<SourcedObject>& objects);

std::string_view KindOf(const Object& o);
const ObjectMeta& MetaOf(const Object& o);
// "ResourceSlice node-a-gpus" or "ResourceClaim team-a/train".
std::string Label(const Object& o);

// Decodes one top-level document (a `kind: List` yields its items). Problems go to `sink`;
// objects of kinds gpuplane does not model are skipped with a warning.
std::vector<SourcedObject> DecodeObjects(const Doc& doc, std::string_view file,
                                         std::vector<Diagnostic>& sink);

// v1 encoding: apiVersion, kind, metadata, spec, status as Kubernetes writes them.
Doc EncodeObject(const Object& o);

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_OBJECT_H_
