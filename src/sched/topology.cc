#include "sched/topology.h"

#include <algorithm>
#include <map>

#include "model/inventory.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

std::string ValueText(const api::DeviceAttribute& a) {
  if (a.string_value) return *a.string_value;
  if (a.int_value) return std::to_string(*a.int_value);
  if (a.bool_value) return *a.bool_value ? "true" : "false";
  return a.version_value.value_or("");
}

}  // namespace

std::string DeviceDomain(const model::Inventory& inv, model::DeviceId d, const std::string& name) {
  std::string qualified = name;
  if (name.find('/') == std::string::npos) {
    qualified = inv.pools()[inv.devices()[d].pool].driver + "/" + name;
  }
  const api::DeviceAttribute* a = inv.Attribute(d, qualified);
  return a == nullptr ? "" : ValueText(*a);
}

absl::StatusOr<TopologyLevel> ResolveLevel(const Snapshot& s, const std::string& name) {
  const model::Inventory& inv = s.inventory();
  for (const model::NodeInfo& n : inv.nodes()) {
    if (n.labels.contains(name)) return TopologyLevel{name, true};
  }
  for (model::DeviceId d = 0; d < inv.devices().size(); ++d) {
    if (!DeviceDomain(inv, d, name).empty()) return TopologyLevel{name, false};
  }
  return absl::NotFoundError(util::Cat("topology level \"", name,
                                       "\": no node has this label and no device this attribute"));
}

std::vector<Domain> Domains(const Snapshot& s, const TopologyLevel& level) {
  const model::Inventory& inv = s.inventory();
  std::map<std::string, Domain> by_value;
  if (level.node_label) {
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
      auto it = inv.nodes()[n].labels.find(level.name);
      if (it == inv.nodes()[n].labels.end()) continue;
      Domain& d = by_value[it->second];
      d.value = it->second;
      d.nodes.push_back(n);
      for (model::DeviceId dev : inv.nodes()[n].devices) {
        ++d.devices;
        if (!s.state().in_use(dev)) ++d.free;
      }
    }
  } else {
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
      for (model::DeviceId dev : inv.nodes()[n].devices) {
        std::string v = DeviceDomain(inv, dev, level.name);
        if (v.empty()) continue;
        Domain& d = by_value[v];
        d.value = v;
        if (d.nodes.empty() || d.nodes.back() != n) d.nodes.push_back(n);
        ++d.devices;
        if (!s.state().in_use(dev)) ++d.free;
      }
    }
  }
  std::vector<Domain> out;
  out.reserve(by_value.size());
  for (auto& [v, d] : by_value) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(),
                   [](const Domain& a, const Domain& b) { return a.free < b.free; });
  return out;
}

DomainFilter::DomainFilter(const model::Inventory& inv, std::string attribute, std::string value)
    : inv_(inv), attribute_(std::move(attribute)), value_(std::move(value)) {
  size_t slash = attribute_.find('/');
  if (slash != std::string::npos) driver_ = attribute_.substr(0, slash);
}

bool DomainFilter::Allows(model::DeviceId device) const {
  std::string v = DeviceDomain(inv_, device, attribute_);
  if (!v.empty()) return v == value_;
  // Devices without the attribute: other drivers' devices are not restricted.
  const std::string& driver = inv_.pools()[inv_.devices()[device].pool].driver;
  return !driver_.empty() && driver != driver_;
}

std::string DomainFilter::Describe() const {
  return util::Cat("outside ", attribute_, " ", value_);
}

}  // namespace gpuplane::sched
