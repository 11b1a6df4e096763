#include "sched/extended_resources.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "util/strings.h"

namespace gpuplane::sched {
namespace {

// The position of `resource` among the names the container requests (a limit without a
// request is also a request), sorted: kube numbers the container's request names by it.
size_t RequestPosition(const api::Container& c, const std::string& resource) {
  std::set<std::string> names;
  for (const auto* m : {&c.resources.requests, &c.resources.limits}) {
    for (const auto& [name, q] : *m) names.insert(name);
  }
  return static_cast<size_t>(std::distance(names.begin(), names.find(resource)));
}

bool IsSidecar(const api::Container& c) {
  auto it = c.extra.find("restartPolicy");
  return it != c.extra.end() && it->second.is_scalar() && it->second.text() == "Always";
}

// The request container `index` makes for `resource` of class `class_name`, after counting
// what `reusable` (requests of long-lived containers that run beside it) already give; none
// when those suffice or it does not ask. Its mappings go to `mappings`.
std::optional<api::DeviceRequest> ContainerRequest(
    size_t index, const api::Container& c, const std::string& resource,
    const std::string& class_name, const std::vector<const api::DeviceRequest*>& reusable,
    std::vector<ExtendedRequestMapping>& mappings) {
  const api::Quantity* q = c.resources.RequestOf(resource);
  if (q == nullptr) return std::nullopt;
  const auto nano = q->nano();
  if (nano <= 0 || nano % 1'000'000'000 != 0) return std::nullopt;  // kube: not an integer
  const auto want = static_cast<int64_t>(nano / 1'000'000'000);
  int64_t have = 0;
  for (const api::DeviceRequest* r : reusable) {
    if (r == nullptr) continue;
    have += r->exactly->count.value_or(1);
    mappings.push_back({c.name, resource, r->name});
    if (have >= want) return std::nullopt;
  }
  api::DeviceRequest r;
  r.name = util::Cat("container-", index, "-request-", RequestPosition(c, resource));
  r.exactly.emplace();
  r.exactly->device_class_name = class_name;
  r.exactly->allocation_mode = "ExactCount";
  r.exactly->count = want - have;
  mappings.push_back({c.name, resource, r.name});
  return r;
}

}  // namespace

ExtendedClasses ExtendedResourceClasses(const std::vector<const api::DeviceClass*>& classes) {
  ExtendedClasses out;
  std::map<std::string, const api::DeviceClass*> explicit_names;
  for (const api::DeviceClass* c : classes) {
    out[kDeviceClassResourcePrefix + c->metadata.name] = c;
    const std::string& name = c->spec.extended_resource_name;
    if (name.empty()) continue;
    const api::DeviceClass*& held = explicit_names[name];
    // The newest class wins; on equal times the lower name (timestamps in RFC 3339 UTC sort
    // as text).
    if (held == nullptr || c->metadata.creation_timestamp > held->metadata.creation_timestamp ||
        (c->metadata.creation_timestamp == held->metadata.creation_timestamp &&
         c->metadata.name < held->metadata.name)) {
      held = c;
    }
  }
  for (const auto& [name, c] : explicit_names) out[name] = c;
  return out;
}

ExtendedRequests ExtendedRequestsOf(const api::PodSpec& pod,
                                    const std::vector<std::string>& resources,
                                    const ExtendedClasses& classes) {
  std::vector<const api::Container*> containers;
  for (const api::Container& c : pod.init_containers) containers.push_back(&c);
  for (const api::Container& c : pod.containers) containers.push_back(&c);
  const size_t inits = pod.init_containers.size();
  auto short_lived = [&](size_t i) { return i < inits && !IsSidecar(*containers[i]); };

  ExtendedRequests out;
  std::set<std::string> sorted(resources.begin(), resources.end());
  for (const std::string& resource : sorted) {
    auto cls = classes.find(resource);
    if (cls == classes.end()) continue;
    const std::string& class_name = cls->second->metadata.name;
    // Long-lived containers (regular ones and sidecars) each ask for their own devices.
    std::vector<std::optional<api::DeviceRequest>> long_lived(containers.size());
    std::vector<ExtendedRequestMapping> long_mappings, short_mappings;
    for (size_t i = 0; i < containers.size(); ++i) {
      if (!short_lived(i)) {
        long_lived[i] =
            ContainerRequest(i, *containers[i], resource, class_name, {}, long_mappings);
      }
    }
    // An init container runs before the long-lived containers after it, and may use their
    // devices; what it needs beyond them, the largest such need serves every init container.
    std::optional<api::DeviceRequest> biggest;
    std::set<std::string> short_names;
    for (size_t i = 0; i < containers.size(); ++i) {
      if (!short_lived(i)) continue;
      std::vector<const api::DeviceRequest*> later;
      for (size_t j = i; j < containers.size(); ++j) {
        later.push_back(long_lived[j] ? &*long_lived[j] : nullptr);
      }
      std::optional<api::DeviceRequest> r =
          ContainerRequest(i, *containers[i], resource, class_name, later, short_mappings);
      if (!r) continue;
      short_names.insert(r->name);
      if (!biggest || *biggest->exactly->count < *r->exactly->count) biggest = std::move(r);
    }
    if (biggest) {
      for (ExtendedRequestMapping& m : short_mappings) {
        if (short_names.contains(m.request)) m.request = biggest->name;
      }
      out.requests.push_back(*biggest);
    }
    for (std::optional<api::DeviceRequest>& r : long_lived) {
      if (r) out.requests.push_back(std::move(*r));
    }
    out.mappings.insert(out.mappings.end(), long_mappings.begin(), long_mappings.end());
    out.mappings.insert(out.mappings.end(), short_mappings.begin(), short_mappings.end());
  }
  std::sort(
      out.requests.begin(), out.requests.end(),
      [](const api::DeviceRequest& a, const api::DeviceRequest& b) { return a.name < b.name; });
  return out;
}

bool ByDevicePlugin(const PodInfo& pod, const NodeFacts& node) {
  if (pod.extended_resources.empty() || !node.has_node) return false;
  for (const std::string& r : pod.extended_resources) {
    auto it = node.other_allocatable.find(r);
    if (it != node.other_allocatable.end() && it->second > 0) return true;
  }
  return false;
}

const std::map<std::string, int64_t>& OtherOn(const PodInfo& pod, const NodeFacts& node) {
  return pod.extended_resources.empty() || ByDevicePlugin(pod, node) ? pod.other_milli
                                                                     : pod.other_milli_dra;
}

bool UsesClaimOn(const PodInfo& pod, const ClaimUse& use, const NodeFacts& node) {
  return !use.extended || !ByDevicePlugin(pod, node);
}

}  // namespace gpuplane::sched
