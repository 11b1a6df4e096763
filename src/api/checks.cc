// Cross-field validation rules (exactly-one-of, conditional limits, references between
// fields) run by the decoder right after a struct is read, while source lines are at hand.
#include <cctype>
#include <set>
#include <utility>
#include <variant>

#include "api/internal/schemas.h"
#include "api/names.h"
#include "util/strings.h"

namespace gpuplane::api::internal {
namespace {

int CountSet(std::initializer_list<bool> present) {
  int n = 0;
  for (bool p : present) n += p ? 1 : 0;
  return n;
}

// "exactly one of a, b, c must be set" with the names as the user sees them.
void ExactlyOne(Decoder& d, const Doc& n, int count, std::string_view names) {
  if (count == 1) return;
  d.Error(n.line(), util::Cat("exactly one of ", names, " must be set, found ", count));
}

void AtMostOne(Decoder& d, const Doc& n, int count, std::string_view names) {
  if (count <= 1) return;
  d.Error(n.line(), util::Cat("at most one of ", names, " must be set, found ", count));
}

}  // namespace

void Schema<NodeSelectorRequirement>::Check(Decoder& d, const Doc& n,
                                            const NodeSelectorRequirement& v) {
  static const std::set<std::string, std::less<>> kOps = {"In",           "NotIn", "Exists",
                                                          "DoesNotExist", "Gt",    "Lt"};
  if (!v.op.empty() && !kOps.contains(v.op)) {
    d.ErrorAt(LineOf(n, "operator"), "operator",
              "\"" + v.op + "\" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt");
  }
  if ((v.op == "In" || v.op == "NotIn") && v.values.empty()) {
    d.ErrorAt(n.line(), "values", "must not be empty for operator " + v.op);
  }
  if ((v.op == "Gt" || v.op == "Lt") && v.values.size() != 1) {
    d.ErrorAt(n.line(), "values", "must hold exactly one value (a number) for operator " + v.op);
  }
  if ((v.op == "Exists" || v.op == "DoesNotExist") && !v.values.empty()) {
    d.ErrorAt(LineOf(n, "values"), "values", "must be empty for operator " + v.op);
  }
}

void Schema<LabelSelectorRequirement>::Check(Decoder& d, const Doc& n,
                                             const LabelSelectorRequirement& v) {
  if (!v.op.empty() && v.op != "In" && v.op != "NotIn" && v.op != "Exists" &&
      v.op != "DoesNotExist") {
    d.ErrorAt(LineOf(n, "operator"), "operator",
              "\"" + v.op + "\" is not one of In, NotIn, Exists, DoesNotExist");
  }
  if ((v.op == "In" || v.op == "NotIn") && v.values.empty()) {
    d.ErrorAt(n.line(), "values", "must not be empty for operator " + v.op);
  }
  if ((v.op == "Exists" || v.op == "DoesNotExist") && !v.values.empty()) {
    d.ErrorAt(LineOf(n, "values"), "values", "must be empty for operator " + v.op);
  }
}

void Schema<TopologySpreadConstraint>::Check(Decoder& d, const Doc& n,
                                             const TopologySpreadConstraint& v) {
  if (n.Find("maxSkew") != nullptr && v.max_skew <= 0) {
    d.ErrorAt(LineOf(n, "maxSkew"), "maxSkew", "must be greater than zero");
  }
  const std::string& when = v.when_unsatisfiable;
  if (!when.empty() && when != "DoNotSchedule" && when != "ScheduleAnyway") {
    d.ErrorAt(LineOf(n, "whenUnsatisfiable"), "whenUnsatisfiable",
              "\"" + when + "\" is not DoNotSchedule or ScheduleAnyway");
  }
  if (v.min_domains && *v.min_domains <= 0) {
    d.ErrorAt(LineOf(n, "minDomains"), "minDomains", "must be greater than zero");
  } else if (v.min_domains && when == "ScheduleAnyway") {
    d.ErrorAt(LineOf(n, "minDomains"), "minDomains",
              "can only be set when whenUnsatisfiable is DoNotSchedule");
  }
  for (const auto& [field, value] : {std::pair{"nodeAffinityPolicy", &v.node_affinity_policy},
                                     std::pair{"nodeTaintsPolicy", &v.node_taints_policy}}) {
    if (!value->empty() && *value != "Honor" && *value != "Ignore") {
      d.ErrorAt(LineOf(n, field), field, "\"" + *value + "\" is not Honor or Ignore");
    }
  }
}

namespace {

// A preferred term's weight: 1-100, as the API server requires.
void CheckWeight(Decoder& d, const Doc& n, int32_t weight) {
  if (n.Find("weight") != nullptr && (weight < 1 || weight > 100)) {
    d.ErrorAt(LineOf(n, "weight"), "weight", util::Cat("must be in the range 1-100, got ", weight));
  }
}

}  // namespace

void Schema<PreferredSchedulingTerm>::Check(Decoder& d, const Doc& n,
                                            const PreferredSchedulingTerm& v) {
  CheckWeight(d, n, v.weight);
}

void Schema<WeightedPodAffinityTerm>::Check(Decoder& d, const Doc& n,
                                            const WeightedPodAffinityTerm& v) {
  CheckWeight(d, n, v.weight);
}

void Schema<NodeSelector>::Check(Decoder& d, const Doc& n, const NodeSelector& v) {
  if (n.Find("nodeSelectorTerms") != nullptr && v.node_selector_terms.empty()) {
    d.ErrorAt(LineOf(n, "nodeSelectorTerms"), "nodeSelectorTerms",
              "must hold at least one term (an empty list matches no node)");
  }
}

void Schema<Taint>::Check(Decoder& d, const Doc& n, const Taint& v) {
  if (!v.effect.empty() && v.effect != "NoSchedule" && v.effect != "NoExecute" &&
      v.effect != "None" && v.effect != "PreferNoSchedule") {
    d.ErrorAt(LineOf(n, "effect"), "effect",
              "\"" + v.effect +
                  "\" is not a taint effect (NoSchedule, NoExecute, None, or "
                  "PreferNoSchedule for nodes)");
  }
}

void Schema<Toleration>::Check(Decoder& d, const Doc& n, const Toleration& v) {
  if (!v.op.empty() && v.op != "Exists" && v.op != "Equal") {
    d.ErrorAt(LineOf(n, "operator"), "operator", "\"" + v.op + "\" is not Exists or Equal");
  }
  if (v.op == "Exists" && !v.value.empty()) {
    d.ErrorAt(LineOf(n, "value"), "value", "must be empty when operator is Exists");
  }
  if (v.key.empty() && v.op != "Exists") {
    d.ErrorAt(n.line(), "operator", "must be Exists when key is empty");
  }
  if (!v.effect.empty() && v.effect != "NoSchedule" && v.effect != "NoExecute" &&
      v.effect != "PreferNoSchedule" && v.effect != "None") {
    d.ErrorAt(LineOf(n, "effect"), "effect", "\"" + v.effect + "\" is not a taint effect");
  }
}

void Schema<OpaqueDeviceConfiguration>::Check(Decoder& d, const Doc& n,
                                              const OpaqueDeviceConfiguration& v) {
  if (!v.parameters.is_null() && !v.parameters.is_map()) {
    d.ErrorAt(LineOf(n, "parameters"), "parameters",
              "must be an object, got " + v.parameters.Describe());
  }
}

void Schema<DeviceClassSpec>::Check(Decoder& d, const Doc& n, const DeviceClassSpec& v) {
  const std::string& name = v.extended_resource_name;
  if (name.empty()) return;
  // Kubernetes' IsExtendedResourceName: domain-prefixed, not in the kubernetes.io namespace,
  // and a qualified name once prefixed with "requests." (its quota name).
  std::string why;
  if (name.find('/') == std::string::npos) {
    why = "has no domain prefix (as in nvidia.com/gpu)";
  } else if (name.find("kubernetes.io/") != std::string::npos) {
    why = "is in the kubernetes.io namespace, which is Kubernetes' own";
  } else if (name.rfind("requests.", 0) == 0) {
    why = "starts with \"requests.\"";
  } else if (std::string bad = CheckLabelKey("requests." + name); !bad.empty()) {
    why = "is not a qualified name: " + bad;
  }
  if (!why.empty()) {
    d.ErrorAt(LineOf(n, "extendedResourceName"), "extendedResourceName",
              util::Cat("\"", name, "\" ", why, "; it must be an extended resource name"));
  }
}

void Schema<DeviceAttribute>::Check(Decoder& d, const Doc& n, const DeviceAttribute& v) {
  ExactlyOne(d, n,
             CountSet({v.int_value.has_value(), v.bool_value.has_value(),
                       v.string_value.has_value(), v.version_value.has_value()}),
             "int, bool, string, version");
}

void Schema<CapacityRequestPolicyRange>::Check(Decoder& d, const Doc& n,
                                               const CapacityRequestPolicyRange& v) {
  if (v.max && *v.max < v.min) d.ErrorAt(LineOf(n, "max"), "max", "must not be less than min");
  if (v.step && v.step->Sign() <= 0) d.ErrorAt(LineOf(n, "step"), "step", "must be positive");
}

void Schema<CapacityRequestPolicy>::Check(Decoder& d, const Doc& n,
                                          const CapacityRequestPolicy& v) {
  AtMostOne(d, n, CountSet({!v.valid_values.empty(), v.valid_range.has_value()}),
            "validValues, validRange");
  for (size_t i = 1; i < v.valid_values.size(); ++i) {
    if (!(v.valid_values[i - 1] < v.valid_values[i])) {
      d.ErrorAt(LineOf(n, "validValues"), "validValues",
                "must be sorted in ascending order without duplicates");
      break;
    }
  }
}

void CheckDeviceFields(Decoder& d, const Doc& n, const Device& v) {
  size_t total = v.attributes.size() + v.capacity.size();
  if (total > 32) {
    d.Error(n.line(), util::Cat("at most 32 attributes and capacities combined, has ", total));
  }
  AtMostOne(
      d, n,
      CountSet({v.node_name.has_value(), v.node_selector.has_value(), v.all_nodes.value_or(false)}),
      "nodeName, nodeSelector, allNodes");
  // (none is reported by Schema<NodeSelector>::Check)
  if (v.node_selector && v.node_selector->node_selector_terms.size() > 1) {
    d.ErrorAt(LineOf(n, "nodeSelector"), "nodeSelector.nodeSelectorTerms",
              "must have exactly one term");
  }
  std::set<std::string, std::less<>> sets;
  for (size_t i = 0; i < v.consumes_counters.size(); ++i) {
    if (!sets.insert(v.consumes_counters[i].counter_set).second) {
      d.ErrorAt(LineOf(n, "consumesCounters"), util::Cat("consumesCounters[", i, "]"),
                "counter set \"" + v.consumes_counters[i].counter_set + "\" listed twice");
    }
  }
}

void Schema<ResourcePool>::Check(Decoder& d, const Doc& n, const ResourcePool& v) {
  if (v.generation < 0) d.ErrorAt(LineOf(n, "generation"), "generation", "must not be negative");
  if (n.Find("resourceSliceCount") != nullptr && v.resource_slice_count <= 0) {
    d.ErrorAt(LineOf(n, "resourceSliceCount"), "resourceSliceCount", "must be greater than zero");
  }
}

void CheckSliceSpec(Decoder& d, const Doc& n, const ResourceSliceSpec& s,
                    const std::vector<uint32_t>& device_lines) {
  ExactlyOne(d, n,
             CountSet({s.node_name.has_value(), s.node_selector.has_value(),
                       s.all_nodes.value_or(false), s.per_device_node_selection.value_or(false)}),
             "nodeName, nodeSelector, allNodes, perDeviceNodeSelection");
  // (none is reported by Schema<NodeSelector>::Check)
  if (s.node_selector && s.node_selector->node_selector_terms.size() > 1) {
    d.ErrorAt(LineOf(n, "nodeSelector"), "nodeSelector.nodeSelectorTerms",
              "must have exactly one term");
  }
  if (!s.devices.empty() && !s.shared_counters.empty()) {
    d.ErrorAt(LineOf(n, "sharedCounters"), "sharedCounters",
              "devices and sharedCounters may not be in the same ResourceSlice (Kubernetes "
              "1.35): publish the counter sets in their own slice of the pool");
  }
  bool restricted = false;
  for (const Device& dev : s.devices) {
    if (!dev.taints.empty() || !dev.consumes_counters.empty()) restricted = true;
  }
  size_t limit = restricted ? 64 : 128;
  if (s.devices.size() > limit) {
    d.ErrorAt(LineOf(n, "devices"), "devices",
              util::Cat("must have at most ", limit, " entries",
                        restricted ? " when a device has taints or consumes counters" : "",
                        ", has ", s.devices.size()));
  }
  bool per_device = s.per_device_node_selection.value_or(false);
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const Device& dev = s.devices[i];
    uint32_t line = i < device_lines.size() ? device_lines[i] : n.line();
    std::string field = util::Cat("devices[", i, "]");
    if (!dev.name.empty() && !names.insert(dev.name).second) {
      d.ErrorAt(line, field + ".name", "duplicate device name \"" + dev.name + "\"");
    }
    bool has_placement = dev.node_name || dev.node_selector || dev.all_nodes.value_or(false);
    if (per_device && !has_placement) {
      d.ErrorAt(line, field,
                "perDeviceNodeSelection is set, so exactly one of nodeName, nodeSelector, "
                "allNodes must be set on the device");
    } else if (!per_device && has_placement) {
      d.ErrorAt(line, field,
                "nodeName, nodeSelector and allNodes may be set on a device only when the "
                "slice sets perDeviceNodeSelection: true");
    }
  }
  std::set<std::string, std::less<>> sets;
  for (size_t i = 0; i < s.shared_counters.size(); ++i) {
    if (!s.shared_counters[i].name.empty() && !sets.insert(s.shared_counters[i].name).second) {
      d.ErrorAt(LineOf(n, "sharedCounters"), util::Cat("sharedCounters[", i, "].name"),
                "duplicate counter set name \"" + s.shared_counters[i].name + "\"");
    }
  }
}

namespace {

std::vector<uint32_t> ItemLines(const Doc& n, std::string_view key) {
  std::vector<uint32_t> lines;
  if (const Doc* seq = n.Find(key); seq != nullptr && seq->is_seq()) {
    for (const Doc& item : seq->items()) lines.push_back(item.line());
  }
  return lines;
}

}  // namespace

void Schema<ResourceSliceSpec>::Check(Decoder& d, const Doc& n, const ResourceSliceSpec& v) {
  CheckSliceSpec(d, n, v, ItemLines(n, "devices"));
}

void Schema<BetaResourceSliceSpec>::Check(Decoder& d, const Doc& n,
                                          const BetaResourceSliceSpec& v) {
  ResourceSliceSpec spec;
  spec.node_name = v.node_name;
  spec.node_selector = v.node_selector;
  spec.all_nodes = v.all_nodes;
  spec.per_device_node_selection = v.per_device_node_selection;
  spec.shared_counters = v.shared_counters;
  for (const BetaDevice& b : v.devices) {
    Device dev = b.basic ? static_cast<const Device&>(*b.basic) : Device{};
    dev.name = b.name;
    spec.devices.push_back(std::move(dev));
  }
  CheckSliceSpec(d, n, spec, ItemLines(n, "devices"));
}

void CheckExactRequest(Decoder& d, const Doc& n, const ExactDeviceRequest& r, RequestLevel level) {
  const std::string& mode = r.allocation_mode;
  if (!mode.empty() && mode != "ExactCount" && mode != "All") {
    d.ErrorAt(LineOf(n, "allocationMode"), "allocationMode",
              "\"" + mode + "\" is not ExactCount or All");
  }
  // Kubernetes reads `count: 0` as unset (1 for ExactCount, absent for All), as its defaulting
  // does; negative counts are errors.
  if (r.count && *r.count < 0) {
    d.ErrorAt(LineOf(n, "count"), "count", "must be greater than zero");
  }
  if (r.count && *r.count != 0 && mode == "All") {
    d.ErrorAt(LineOf(n, "count"), "count", "must not be set when allocationMode is All");
  }
  if (level == RequestLevel::kSubrequest && r.admin_access) {
    d.ErrorAt(LineOf(n, "adminAccess"), "adminAccess", "is not allowed in firstAvailable");
  }
}

namespace {

void CheckSubrequestNames(Decoder& d, const Doc& n, const std::vector<DeviceSubRequest>& subs) {
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < subs.size(); ++i) {
    if (!subs[i].name.empty() && !names.insert(subs[i].name).second) {
      d.ErrorAt(LineOf(n, "firstAvailable"), util::Cat("firstAvailable[", i, "].name"),
                "duplicate subrequest name \"" + subs[i].name + "\"");
    }
  }
}

}  // namespace

void Schema<DeviceRequest>::Check(Decoder& d, const Doc& n, const DeviceRequest& v) {
  ExactlyOne(d, n, CountSet({v.exactly.has_value(), !v.first_available.empty()}),
             "exactly, firstAvailable");
  CheckSubrequestNames(d, n, v.first_available);
}

void Schema<BetaDeviceRequest>::Check(Decoder& d, const Doc& n, const BetaDeviceRequest& v) {
  ExactlyOne(d, n, CountSet({!v.device_class_name.empty(), !v.first_available.empty()}),
             "deviceClassName, firstAvailable");
  if (!v.first_available.empty()) {
    bool extra = !v.selectors.empty() || !v.allocation_mode.empty() || v.count || v.admin_access ||
                 !v.tolerations.empty() || v.capacity;
    if (extra) {
      d.Error(n.line(), "with firstAvailable, the request itself may set only its name");
    }
  } else {
    CheckExactRequest(d, n, v, RequestLevel::kRequest);
  }
  CheckSubrequestNames(d, n, v.first_available);
}

void Schema<DeviceConstraint>::Check(Decoder& d, const Doc& n, const DeviceConstraint& v) {
  ExactlyOne(d, n, CountSet({v.match_attribute.has_value(), v.distinct_attribute.has_value()}),
             "matchAttribute, distinctAttribute");
  const std::optional<std::string>& attr =
      v.match_attribute ? v.match_attribute : v.distinct_attribute;
  if (attr && !attr->empty() && attr->find('/') == std::string::npos) {
    const char* field = v.match_attribute ? "matchAttribute" : "distinctAttribute";
    d.ErrorAt(LineOf(n, field), field,
              "must include the domain (for example gpu.nvidia.com/" + *attr + ")");
  }
}

namespace {

template <typename Request>
void CheckReferences(Decoder& d, const Doc& n, const std::vector<Request>& requests,
                     const std::vector<DeviceConstraint>& constraints,
                     const std::vector<DeviceClaimConfiguration>& config) {
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> valid;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    if (r.name.empty()) continue;
    if (!names.insert(r.name).second) {
      d.ErrorAt(LineOf(n, "requests"), util::Cat("requests[", i, "].name"),
                "duplicate request name \"" + r.name + "\"");
    }
    valid.insert(r.name);
    for (const DeviceSubRequest& s : r.first_available) valid.insert(r.name + "/" + s.name);
  }
  auto check_list = [&](std::string_view list, size_t index, const std::vector<std::string>& refs) {
    for (size_t j = 0; j < refs.size(); ++j) {
      if (!valid.contains(refs[j])) {
        d.ErrorAt(LineOf(n, list), util::Cat(list, "[", index, "].requests[", j, "]"),
                  "\"" + refs[j] + "\" names no request of this claim");
      }
    }
  };
  for (size_t i = 0; i < constraints.size(); ++i) {
    check_list("constraints", i, constraints[i].requests);
  }
  for (size_t i = 0; i < config.size(); ++i) check_list("config", i, config[i].requests);
}

}  // namespace

void CheckRequestReferences(Decoder& d, const Doc& n, const DeviceClaim& c) {
  CheckReferences(d, n, c.requests, c.constraints, c.config);
}

void Schema<BetaDeviceClaim>::Check(Decoder& d, const Doc& n, const BetaDeviceClaim& v) {
  CheckReferences(d, n, v.requests, v.constraints, v.config);
}

void Schema<DeviceAllocationConfiguration>::Check(Decoder& d, const Doc& n,
                                                  const DeviceAllocationConfiguration& v) {
  if (!v.source.empty() && v.source != "FromClass" && v.source != "FromClaim") {
    d.ErrorAt(LineOf(n, "source"), "source", "\"" + v.source + "\" is not FromClass or FromClaim");
  }
}

void Schema<PodResourceClaim>::Check(Decoder& d, const Doc& n, const PodResourceClaim& v) {
  ExactlyOne(
      d, n,
      CountSet({v.resource_claim_name.has_value(), v.resource_claim_template_name.has_value()}),
      "resourceClaimName, resourceClaimTemplateName");
}

void Schema<PodSpec>::Check(Decoder& d, const Doc& n, const PodSpec& v) {
  if (v.containers.empty()) {
    d.ErrorAt(n.line(), "containers", "at least one container is required");
  }
  if (v.termination_grace_period_seconds && *v.termination_grace_period_seconds < 0) {
    // kube-apiserver accepts it with this warning.
    d.Warn(LineOf(n, "terminationGracePeriodSeconds"),
           "terminationGracePeriodSeconds: negative; Kubernetes treats it as 1 second: give the "
           "seconds the pod has to stop after the termination signal (0: killed at once)");
  }
  std::set<std::string, std::less<>> volumes;
  for (size_t i = 0; i < v.volumes.size(); ++i) {
    if (!v.volumes[i].name.empty() && !volumes.insert(v.volumes[i].name).second) {
      d.ErrorAt(LineOf(n, "volumes"), util::Cat("volumes[", i, "].name"),
                "\"" + v.volumes[i].name + "\" names two volumes; give each its own name");
    }
  }
  std::set<std::pair<std::string, std::string>> spreads;
  for (size_t i = 0; i < v.topology_spread_constraints.size(); ++i) {
    const TopologySpreadConstraint& c = v.topology_spread_constraints[i];
    if (!spreads.emplace(c.topology_key, c.when_unsatisfiable).second) {
      d.ErrorAt(
          LineOf(n, "topologySpreadConstraints"), util::Cat("topologySpreadConstraints[", i, "]"),
          util::Cat("a second constraint with topologyKey \"", c.topology_key,
                    "\" and whenUnsatisfiable ", c.when_unsatisfiable, "; merge the two into one"));
    }
  }
  std::set<std::string, std::less<>> claims;
  for (const PodResourceClaim& c : v.resource_claims) claims.insert(c.name);
  for (size_t i = 0; i < v.containers.size(); ++i) {
    const std::vector<ResourceClaimRef>& refs = v.containers[i].resources.claims;
    for (size_t j = 0; j < refs.size(); ++j) {
      if (!refs[j].name.empty() && !claims.contains(refs[j].name)) {
        d.ErrorAt(LineOf(n, "containers"),
                  util::Cat("containers[", i, "].resources.claims[", j, "].name"),
                  "\"" + refs[j].name + "\" is not in spec.resourceClaims");
      }
    }
  }
}

void Schema<Volume>::Check(Decoder& d, const Doc& n, const Volume& v) {
  int sources = v.persistent_volume_claim ? 1 : 0;
  for (std::string_view s : kOtherVolumeSources) sources += v.extra.contains(std::string(s));
  if (sources == 0) {
    d.Error(n.line(), "a volume needs a source (persistentVolumeClaim, emptyDir, configMap, ...)");
  } else if (sources > 1) {
    d.Error(n.line(), util::Cat("a volume has exactly one source, found ", sources));
  }
}

void Schema<StorageClass>::Check(Decoder& d, const Doc& n, const StorageClass& v) {
  const std::string& mode = v.volume_binding_mode;
  if (!mode.empty() && mode != "Immediate" && mode != "WaitForFirstConsumer") {
    d.ErrorAt(LineOf(n, "volumeBindingMode"), "volumeBindingMode",
              "\"" + mode + "\" is not Immediate or WaitForFirstConsumer");
  }
}

namespace {

// A CSI driver's name: a DNS subdomain of at most 63 characters, in any case (the API server
// checks it lowercased).
void CheckCsiDriver(Decoder& d, uint32_t line, const std::string& field, const std::string& name) {
  if (name.empty()) return;  // required: reported by the schema
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::string problem = CheckDriverName(lower); !problem.empty()) {
    d.ErrorAt(line, field, problem + ": name the CSI driver as it registers itself");
  }
}

}  // namespace

void Schema<CSIPersistentVolumeSource>::Check(Decoder& d, const Doc& n,
                                              const CSIPersistentVolumeSource& v) {
  CheckCsiDriver(d, LineOf(n, "driver"), "driver", v.driver);
}

void Schema<CSINodeDriver>::Check(Decoder& d, const Doc& n, const CSINodeDriver& v) {
  CheckCsiDriver(d, LineOf(n, "name"), "name", v.name);
  constexpr size_t kMaxNodeId = 192;
  if (v.node_id.size() > kMaxNodeId) {
    d.ErrorAt(LineOf(n, "nodeID"), "nodeID",
              util::Cat("is ", v.node_id.size(), " characters; at most ", kMaxNodeId));
  }
  if (v.allocatable && v.allocatable->count && *v.allocatable->count < 0) {
    d.ErrorAt(LineOf(n, "allocatable"), "allocatable.count",
              util::Cat(*v.allocatable->count,
                        " is negative; give the most volumes the node may "
                        "attach, or leave count out for no limit"));
  }
  std::set<std::string, std::less<>> keys;
  for (size_t i = 0; i < v.topology_keys.size(); ++i) {
    const std::string& key = v.topology_keys[i];
    std::string field = util::Cat("topologyKeys[", i, "]");
    if (std::string problem = CheckQualifiedName(key); !problem.empty()) {
      d.ErrorAt(LineOf(n, "topologyKeys"), field, problem);
    } else if (!keys.insert(key).second) {
      d.ErrorAt(LineOf(n, "topologyKeys"), field, "\"" + key + "\" is listed twice");
    }
  }
}

void Schema<CSINodeSpec>::Check(Decoder& d, const Doc& n, const CSINodeSpec& v) {
  std::set<std::string, std::less<>> names;
  const std::vector<uint32_t> lines = ItemLines(n, "drivers");
  for (size_t i = 0; i < v.drivers.size(); ++i) {
    if (!v.drivers[i].name.empty() && !names.insert(v.drivers[i].name).second) {
      d.ErrorAt(i < lines.size() ? lines[i] : LineOf(n, "drivers"),
                util::Cat("drivers[", i, "].name"),
                "\"" + v.drivers[i].name + "\" is listed twice; a driver has one entry");
    }
  }
}

void Schema<CSIDriverSpec>::Check(Decoder& d, const Doc& n, const CSIDriverSpec& v) {
  const std::string& policy = v.fs_group_policy;
  if (!policy.empty() && policy != "ReadWriteOnceWithFSType" && policy != "File" &&
      policy != "None") {
    d.ErrorAt(LineOf(n, "fsGroupPolicy"), "fsGroupPolicy",
              "\"" + policy + "\" is not ReadWriteOnceWithFSType, File or None");
  }
  for (size_t i = 0; i < v.volume_lifecycle_modes.size(); ++i) {
    const std::string& mode = v.volume_lifecycle_modes[i];
    if (mode != "Persistent" && mode != "Ephemeral") {
      d.ErrorAt(LineOf(n, "volumeLifecycleModes"), util::Cat("volumeLifecycleModes[", i, "]"),
                "\"" + mode + "\" is not Persistent or Ephemeral");
    }
  }
  constexpr int64_t kMinPeriod = 10;
  if (v.node_allocatable_update_period_seconds &&
      *v.node_allocatable_update_period_seconds < kMinPeriod) {
    d.ErrorAt(LineOf(n, "nodeAllocatableUpdatePeriodSeconds"), "nodeAllocatableUpdatePeriodSeconds",
              util::Cat(*v.node_allocatable_update_period_seconds, " is below the minimum of ",
                        kMinPeriod, " seconds; give ", kMinPeriod,
                        " or more, or leave it out for no periodic update of the node's limits"));
  }
}

void Schema<CSIStorageCapacity>::Check(Decoder& d, const Doc& n, const CSIStorageCapacity& v) {
  if (v.capacity && v.capacity->Sign() < 0) {
    d.ErrorAt(LineOf(n, "capacity"), "capacity",
              "must not be negative; give the storage the driver can still provision there");
  }
}

void Schema<VolumeAttachmentSource>::Check(Decoder& d, const Doc& n,
                                           const VolumeAttachmentSource& v) {
  ExactlyOne(d, n,
             CountSet({v.persistent_volume_name.has_value(), v.extra.contains("inlineVolumeSpec")}),
             "persistentVolumeName, inlineVolumeSpec");
  if (!v.persistent_volume_name) return;
  if (std::string problem = CheckDnsSubdomain(*v.persistent_volume_name); !problem.empty()) {
    d.ErrorAt(
        LineOf(n, "persistentVolumeName"), "persistentVolumeName",
        util::Cat("\"", *v.persistent_volume_name, "\" is not a PersistentVolume name: ", problem));
  }
}

void Schema<VolumeAttachmentSpec>::Check(Decoder& d, const Doc& n, const VolumeAttachmentSpec& v) {
  CheckCsiDriver(d, LineOf(n, "attacher"), "attacher", v.attacher);
}

void Schema<Namespace>::Check(Decoder& d, const Doc& n, const Namespace& v) {
  // A namespace's name is a DNS label; CheckMeta reports names that are not even subdomains.
  const Doc* meta = n.Find("metadata");
  const std::string& name = v.metadata.name;
  if (name.empty() || meta == nullptr || !meta->is_map() || !CheckDnsSubdomain(name).empty()) {
    return;
  }
  if (std::string problem = CheckDnsLabel(name); !problem.empty()) {
    d.ErrorAt(LineOf(*meta, "name"), "metadata.name",
              problem + ": a Namespace's name has no dots; rename it");
  }
}

void Schema<PodGroupSpec>::Check(Decoder& d, const Doc& n, const PodGroupSpec& v) {
  if (n.Find("minMember") != nullptr && v.min_member < 1) {
    d.ErrorAt(LineOf(n, "minMember"), "minMember", "must be at least 1");
  }
  if (v.schedule_timeout_seconds && *v.schedule_timeout_seconds < 0) {
    d.ErrorAt(LineOf(n, "scheduleTimeoutSeconds"), "scheduleTimeoutSeconds",
              "must not be negative");
  }
}

void Schema<GangSchedulingPolicy>::Check(Decoder& d, const Doc& n, const GangSchedulingPolicy& v) {
  if (n.Find("minCount") != nullptr && v.min_count < 1) {
    d.ErrorAt(LineOf(n, "minCount"), "minCount", "must be at least 1");
  }
}

void Schema<PodGroupPolicy>::Check(Decoder& d, const Doc& n, const PodGroupPolicy& v) {
  ExactlyOne(d, n, CountSet({v.basic.has_value(), v.gang.has_value()}), "basic, gang");
}

void Schema<WorkloadSpec>::Check(Decoder& d, const Doc& n, const WorkloadSpec& v) {
  if (n.Find("podGroups") != nullptr && v.pod_groups.empty()) {
    d.ErrorAt(LineOf(n, "podGroups"), "podGroups", "at least one pod group is required");
  }
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < v.pod_groups.size(); ++i) {
    if (!names.insert(v.pod_groups[i].name).second) {
      d.ErrorAt(
          LineOf(n, "podGroups"), util::Cat("podGroups[", i, "].name"),
          "\"" + v.pod_groups[i].name + "\" is used by an earlier pod group; names must be unique");
    }
  }
}

void Schema<QueueResource>::Check(Decoder& d, const Doc& n, const QueueResource& v) {
  auto non_negative = [&](const std::optional<Quantity>& q, std::string_view field) {
    if (q && q->Sign() < 0) d.ErrorAt(LineOf(n, field), std::string(field), "must not be negative");
  };
  non_negative(v.guarantee, "guarantee");
  non_negative(v.limit, "limit");
  non_negative(v.weight, "weight");
  if (v.guarantee && v.limit && v.limit->Compare(*v.guarantee) < 0) {
    d.ErrorAt(LineOf(n, "guarantee"), "guarantee",
              util::Cat(v.guarantee->String(), " is more than the limit ", v.limit->String(),
                        "; raise the limit or lower the guarantee"));
  }
}

void Schema<QueueSpec>::Check(Decoder& d, const Doc& n, const QueueSpec& v) {
  auto duration = [&](const std::optional<std::string>& text, std::string_view field) {
    if (!text) return;
    std::variant<double, std::string> s = QueueDurationSeconds(*text);
    if (const auto* problem = std::get_if<std::string>(&s)) {
      d.ErrorAt(LineOf(n, field), std::string(field), *problem);
    }
  };
  duration(v.min_runtime, "minRuntime");
  duration(v.guarantee_window, "guaranteeWindow");
  const Doc* resources = n.Find("resources");
  if (resources == nullptr || !resources->is_map()) return;
  for (const DocEntry& e : resources->entries()) {
    std::string problem = CheckQueueResourceKey(e.key);
    if (!problem.empty()) d.ErrorAt(e.key_line, "resources[\"" + e.key + "\"]", problem);
  }
}

}  // namespace gpuplane::api::internal
