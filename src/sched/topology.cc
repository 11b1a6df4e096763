#include "sched/topology.h"

#include <algorithm>
#include <map>

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

absl::StatusOr<Topology> Topology::Resolve(const model::Inventory& inv, const std::string& name) {
  Topology t(inv, name);
  for (const model::NodeInfo& n : inv.nodes()) {
    if (n.labels.contains(name)) t.node_label_ = true;
  }
  if (t.node_label_) {
    t.IndexNodes();
  } else {
    t.IndexDevices();
  }
  if (t.values_.empty()) {
    return absl::NotFoundError(util::Cat(
        "topology level \"", name, "\": no node has this label and no device this attribute"));
  }
  return t;
}

void Topology::IndexNodes() {
  std::map<std::string, int> ids;
  device_domain_.assign(inv_->devices().size(), -1);
  for (model::NodeId n = 0; n < inv_->nodes().size(); ++n) {
    auto it = inv_->nodes()[n].labels.find(name_);
    if (it == inv_->nodes()[n].labels.end()) continue;
    auto [id, fresh] = ids.try_emplace(it->second, static_cast<int>(values_.size()));
    if (fresh) {
      values_.push_back(it->second);
      nodes_.emplace_back();
      devices_.emplace_back();
    }
    nodes_[id->second].push_back(n);
    for (model::DeviceId d : inv_->nodes()[n].devices) devices_[id->second].push_back(d);
  }
}

void Topology::IndexDevices() {
  size_t slash = name_.find('/');
  if (slash != std::string::npos) driver_ = name_.substr(0, slash);
  std::map<std::string, int> ids;
  device_domain_.assign(inv_->devices().size(), -1);
  device_driver_match_.assign(inv_->devices().size(), 0);
  for (model::DeviceId d = 0; d < inv_->devices().size(); ++d) {
    const std::string& driver = inv_->pools()[inv_->devices()[d].pool].driver;
    device_driver_match_[d] = driver_.empty() || driver == driver_ ? 1 : 0;
    std::string v = DeviceDomain(*inv_, d, name_);
    if (v.empty()) continue;
    auto [id, fresh] = ids.try_emplace(v, static_cast<int>(values_.size()));
    if (fresh) {
      values_.push_back(v);
      nodes_.emplace_back();
      devices_.emplace_back();
    }
    device_domain_[d] = id->second;
    devices_[id->second].push_back(d);
  }
  for (model::NodeId n = 0; n < inv_->nodes().size(); ++n) {
    for (model::DeviceId d : inv_->nodes()[n].devices) {
      int id = device_domain_[d];
      if (id >= 0 && (nodes_[id].empty() || nodes_[id].back() != n)) nodes_[id].push_back(n);
    }
  }
}

std::vector<Domain> Topology::Domains(const model::AllocationState& state) const {
  std::vector<Domain> out(values_.size());
  for (size_t id = 0; id < values_.size(); ++id) {
    Domain& d = out[id];
    d.id = static_cast<int>(id);
    d.devices = static_cast<int64_t>(devices_[id].size());
    for (model::DeviceId dev : devices_[id]) d.free += state.in_use(dev) ? 0 : 1;
  }
  std::sort(out.begin(), out.end(), [](const Domain& a, const Domain& b) {
    return a.free != b.free ? a.free < b.free : a.id < b.id;
  });
  return out;
}

bool Topology::Allows(int id, model::DeviceId device) const {
  if (node_label_) return true;  // node levels restrict nodes, not devices
  int mine = device_domain_[device];
  if (mine >= 0) return mine == id;
  // Devices without the attribute: other drivers' devices are not restricted.
  return !driver_.empty() && device_driver_match_[device] == 0;
}

std::string DomainFilter::Describe() const {
  return util::Cat("outside ", topology_.name(), " ", topology_.value(id_));
}

}  // namespace gpuplane::sched
