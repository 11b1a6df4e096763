// Object metadata and small shared shapes (node and label selectors, taints, tolerations) used by
// the Kubernetes object structs. Plain value types; copyable; not synchronized.
#ifndef GPUPLANE_API_META_H_
#define GPUPLANE_API_META_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/doc.h"

namespace gpuplane::api {

// Fields Kubernetes defines that gpuplane keeps but does not interpret (managedFields,
// ownerReferences, a Pod's volumes, ...): preserved on write, never reported as unknown.
using Passthrough = std::map<std::string, Doc>;

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_name;
  std::string uid;
  std::string resource_version;
  std::optional<int64_t> generation;
  std::string creation_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  Passthrough extra;
  bool operator==(const ObjectMeta&) const = default;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> node_selector_terms;
  bool operator==(const NodeSelector&) const = default;
};

// metav1.LabelSelector: every matchLabels pair and every requirement must hold. An empty
// selector matches everything; a missing one (std::nullopt where it is optional) nothing.
struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};

struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;
};

// core/v1 Taint and resource.k8s.io DeviceTaint share this shape.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule (nodes), NoExecute, None (devices)
  std::string time_added;
  bool operator==(const Taint&) const = default;
};

// core/v1 Toleration and resource.k8s.io DeviceToleration share this shape.
struct Toleration {
  std::string key;
  std::string op;  // Exists or Equal (default Equal)
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_META_H_
