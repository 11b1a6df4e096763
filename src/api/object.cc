#include "api/object.h"

#include "api/internal/decoder.h"
#include "api/internal/schemas.h"
#include "api/names.h"
#include "util/strings.h"

namespace gpuplane::api {
namespace {

using internal::Decoder;

std::string ScalarText(const Doc& map, std::string_view key) {
  const Doc* v = map.Find(key);
  return (v != nullptr && v->is_scalar()) ? v->text() : "";
}

// The label used in messages, read before decoding so every message can carry it.
std::string PeekLabel(const Doc& doc, std::string_view kind) {
  std::string name, ns;
  if (const Doc* meta = doc.Find("metadata"); meta != nullptr && meta->is_map()) {
    name = ScalarText(*meta, "name");
    ns = ScalarText(*meta, "namespace");
    if (name.empty()) name = ScalarText(*meta, "generateName");
  }
  if (name.empty()) name = "(unnamed)";
  return util::Cat(kind, " ", ns.empty() ? "" : ns + "/", name);
}

enum class Group { kResource, kCore, kScheduling, kWorkload, kGpuplane, kStorage, kOther };

Group GroupOf(std::string_view api_version, std::string* version) {
  size_t slash = api_version.find('/');
  std::string_view group = slash == api_version.npos ? "" : api_version.substr(0, slash);
  *version = std::string(slash == api_version.npos ? api_version : api_version.substr(slash + 1));
  if (group == "resource.k8s.io") return Group::kResource;
  if (group.empty()) return Group::kCore;
  if (group == "scheduling.x-k8s.io" || group == "scheduling.sigs.k8s.io") {
    return Group::kScheduling;
  }
  if (group == "scheduling.k8s.io") return Group::kWorkload;
  if (group == "gpuplane.io") return Group::kGpuplane;
  if (group == "storage.k8s.io") return Group::kStorage;
  return Group::kOther;
}

template <typename T>
T DecodeAs(Decoder& d, const Doc& doc) {
  T out;
  internal::DecodeStruct(d, doc, out);
  return out;
}

void CheckMeta(Decoder& d, const Doc& doc, const ObjectMeta& meta, bool namespaced) {
  const Doc* m = doc.Find("metadata");
  uint32_t line = m != nullptr ? m->line() : doc.line();
  bool has_name = m != nullptr && m->is_map() && m->Find("name") != nullptr;
  if (meta.name.empty() && meta.generate_name.empty() && !has_name) {
    d.ErrorAt(line, "metadata.name", "required field is missing");
  } else if (!meta.name.empty()) {
    std::string problem = CheckDnsSubdomain(meta.name);
    if (!problem.empty()) d.ErrorAt(internal::LineOf(*m, "name"), "metadata.name", problem);
  }
  if (!namespaced && !meta.namespace_name.empty()) {
    d.ErrorAt(internal::LineOf(*m, "namespace"), "metadata.namespace",
              "this kind is cluster-scoped; remove the namespace");
  }
}

std::optional<Object> DecodeOne(Decoder& d, const Doc& doc, std::string_view kind, Group group,
                                const std::string& version) {
  bool beta1 = version == "v1beta1";
  bool resource_ok = version == "v1" || version == "v1beta2" || beta1;
  if (group == Group::kResource && resource_ok) {
    if (kind == "DeviceClass") return DecodeAs<DeviceClass>(d, doc);
    if (kind == "ResourceSlice") {
      if (beta1) return internal::ToV1(DecodeAs<internal::BetaResourceSlice>(d, doc));
      return DecodeAs<ResourceSlice>(d, doc);
    }
    if (kind == "ResourceClaim") {
      if (beta1) return internal::ToV1(DecodeAs<internal::BetaResourceClaim>(d, doc));
      return DecodeAs<ResourceClaim>(d, doc);
    }
    if (kind == "ResourceClaimTemplate") {
      if (beta1) return internal::ToV1(DecodeAs<internal::BetaResourceClaimTemplate>(d, doc));
      return DecodeAs<ResourceClaimTemplate>(d, doc);
    }
  }
  if (group == Group::kCore && version == "v1") {
    if (kind == "Pod") return DecodeAs<Pod>(d, doc);
    if (kind == "Node") return DecodeAs<Node>(d, doc);
    if (kind == "Namespace") return DecodeAs<Namespace>(d, doc);
    if (kind == "PersistentVolumeClaim") return DecodeAs<PersistentVolumeClaim>(d, doc);
    if (kind == "PersistentVolume") return DecodeAs<PersistentVolume>(d, doc);
  }
  if (group == Group::kStorage && version == "v1") {
    if (kind == "StorageClass") return DecodeAs<StorageClass>(d, doc);
    if (kind == "CSINode") return DecodeAs<CSINode>(d, doc);
    if (kind == "CSIDriver") return DecodeAs<CSIDriver>(d, doc);
    if (kind == "CSIStorageCapacity") return DecodeAs<CSIStorageCapacity>(d, doc);
    if (kind == "VolumeAttachment") return DecodeAs<VolumeAttachment>(d, doc);
  }
  if (group == Group::kScheduling && version == "v1alpha1" && kind == "PodGroup") {
    return DecodeAs<PodGroup>(d, doc);
  }
  if (group == Group::kWorkload && version == "v1alpha1" && kind == "Workload") {
    return DecodeAs<Workload>(d, doc);
  }
  if (group == Group::kGpuplane && version == "v1alpha1" && kind == "Queue") {
    return DecodeAs<Queue>(d, doc);
  }
  return std::nullopt;
}

bool IsNamespaced(const Object& o) {
  return std::holds_alternative<ResourceClaim>(o) ||
         std::holds_alternative<ResourceClaimTemplate>(o) || std::holds_alternative<Pod>(o) ||
         std::holds_alternative<PodGroup>(o) || std::holds_alternative<Workload>(o) ||
         std::holds_alternative<PersistentVolumeClaim>(o) ||
         std::holds_alternative<CSIStorageCapacity>(o);
}

// Normalizes what every encoder writes: v1 apiVersion and the kind.
template <typename T>
void SetTypeMeta(T& o, std::string_view api_version, std::string_view kind) {
  o.api_version = std::string(api_version);
  o.kind = std::string(kind);
}

}  // namespace

std::string_view KindOf(const Object& o) {
  static constexpr std::string_view kKinds[] = {"DeviceClass",
                                                "ResourceSlice",
                                                "ResourceClaim",
                                                "ResourceClaimTemplate",
                                                "Pod",
                                                "Node",
                                                "PodGroup",
                                                "Workload",
                                                "Queue",
                                                "PersistentVolumeClaim",
                                                "PersistentVolume",
                                                "StorageClass",
                                                "Namespace",
                                                "CSINode",
                                                "CSIDriver",
                                                "CSIStorageCapacity",
                                                "VolumeAttachment"};
  return kKinds[o.index()];
}

ObjectRefs RefsOf(const std::vector<SourcedObject>& objects) {
  ObjectRefs refs;
  refs.reserve(objects.size());
  for (const SourcedObject& o : objects) refs.push_back(&o);
  return refs;
}

const ObjectMeta& MetaOf(const Object& o) {
  return std::visit([](const auto& v) -> const ObjectMeta& { return v.metadata; }, o);
}

std::string Label(const Object& o) {
  const ObjectMeta& m = MetaOf(o);
  std::string name = m.name.empty() ? m.generate_name : m.name;
  return util::Cat(KindOf(o), " ", m.namespace_name.empty() ? "" : m.namespace_name + "/",
                   name.empty() ? "(unnamed)" : name);
}

std::vector<SourcedObject> DecodeObjects(const Doc& doc, std::string_view file,
                                         std::vector<Diagnostic>& sink) {
  std::vector<SourcedObject> out;
  Decoder d(file, sink);
  if (!doc.is_map()) {
    d.Error(doc.line(), "a document must be a map with apiVersion and kind, got " + doc.Describe());
    return out;
  }
  std::string kind = ScalarText(doc, "kind");
  std::string api_version = ScalarText(doc, "apiVersion");
  if (kind.empty() || api_version.empty()) {
    d.Error(doc.line(), std::string(kind.empty() ? "kind" : "apiVersion") +
                            " is missing: every object needs apiVersion and kind");
    return out;
  }
  if (kind.ends_with("List")) {
    const Doc* items = doc.Find("items");
    if (items == nullptr || !items->is_seq()) {
      d.ErrorAt(doc.line(), "items", "a " + kind + " needs an items list");
      return out;
    }
    for (const Doc& item : items->items()) {
      // kubectl omits apiVersion/kind on items of typed lists; infer them from the list.
      if (item.is_map() && item.Find("kind") == nullptr && kind != "List") {
        Doc copy = item;
        copy.Add("apiVersion", Doc::String(api_version));
        copy.Add("kind", Doc::String(kind.substr(0, kind.size() - 4)));
        for (SourcedObject& o : DecodeObjects(copy, file, sink)) out.push_back(std::move(o));
        continue;
      }
      for (SourcedObject& o : DecodeObjects(item, file, sink)) out.push_back(std::move(o));
    }
    return out;
  }
  std::string version;
  Group group = GroupOf(api_version, &version);
  d.set_object(PeekLabel(doc, kind));
  int errors_before = d.errors();
  std::optional<Object> obj = DecodeOne(d, doc, kind, group, version);
  if (!obj) {
    d.Warn(doc.line(),
           "kind " + kind + " in " + api_version + " is not used by gpuplane (skipped)");
    return out;
  }
  CheckMeta(d, doc, MetaOf(*obj), IsNamespaced(*obj));
  if (group == Group::kResource) {  // converted on read: from here on it is a v1 object
    std::visit([](auto& v) { v.api_version = kResourceApiVersion; }, *obj);
  } else if (group == Group::kCore) {  // "/v1" is "v1", as Kubernetes parses group versions
    std::visit([&version](auto& v) { v.api_version = version; }, *obj);
  }
  out.push_back(
      SourcedObject{std::move(*obj), std::string(file), doc.line(), d.errors() == errors_before});
  return out;
}

Doc EncodeObject(const Object& o) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        T copy = v;
        if constexpr (std::is_same_v<T, Pod> || std::is_same_v<T, Node>) {
          SetTypeMeta(copy, "v1", std::is_same_v<T, Pod> ? "Pod" : "Node");
        } else if constexpr (std::is_same_v<T, PodGroup>) {
          if (copy.api_version.empty()) copy.api_version = "scheduling.x-k8s.io/v1alpha1";
          copy.kind = "PodGroup";
        } else if constexpr (std::is_same_v<T, Workload>) {
          SetTypeMeta(copy, "scheduling.k8s.io/v1alpha1", "Workload");
        } else if constexpr (std::is_same_v<T, Queue>) {
          SetTypeMeta(copy, kQueueApiVersion, "Queue");
        } else if constexpr (std::is_same_v<T, PersistentVolumeClaim>) {
          SetTypeMeta(copy, "v1", "PersistentVolumeClaim");
        } else if constexpr (std::is_same_v<T, PersistentVolume>) {
          SetTypeMeta(copy, "v1", "PersistentVolume");
        } else if constexpr (std::is_same_v<T, StorageClass>) {
          SetTypeMeta(copy, "storage.k8s.io/v1", "StorageClass");
        } else if constexpr (std::is_same_v<T, Namespace>) {
          SetTypeMeta(copy, "v1", "Namespace");
        } else if constexpr (std::is_same_v<T, CSINode>) {
          SetTypeMeta(copy, "storage.k8s.io/v1", "CSINode");
        } else if constexpr (std::is_same_v<T, CSIDriver>) {
          SetTypeMeta(copy, "storage.k8s.io/v1", "CSIDriver");
        } else if constexpr (std::is_same_v<T, CSIStorageCapacity>) {
          SetTypeMeta(copy, "storage.k8s.io/v1", "CSIStorageCapacity");
        } else if constexpr (std::is_same_v<T, VolumeAttachment>) {
          SetTypeMeta(copy, "storage.k8s.io/v1", "VolumeAttachment");
        } else {
          static constexpr std::string_view kKind =
              std::is_same_v<T, DeviceClass>     ? "DeviceClass"
              : std::is_same_v<T, ResourceSlice> ? "ResourceSlice"
              : std::is_same_v<T, ResourceClaim> ? "ResourceClaim"
                                                 : "ResourceClaimTemplate";
          SetTypeMeta(copy, kResourceApiVersion, kKind);
        }
        return internal::EncodeStruct(copy);
      },
      o);
}

}  // namespace gpuplane::api
