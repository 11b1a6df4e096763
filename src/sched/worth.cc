#include "sched/worth.h"

#include <algorithm>
#include <string_view>

namespace gpuplane::sched {
namespace {

// `name` itself or qualified by any domain ("gpu.nvidia.com/name").
bool Names(const std::string& key, std::string_view name) {
  return key == name || (key.size() > name.size() && key.ends_with(name) &&
                         key[key.size() - name.size() - 1] == '/');
}

const api::DeviceAttribute* Find(const api::Device& d, std::string_view name) {
  for (const auto& [key, attr] : d.attributes) {
    if (Names(key, name)) return &attr;
  }
  return nullptr;
}

double MemoryGiB(const api::Device& d) {
  for (const auto& [name, cap] : d.capacity) {
    if (Names(name, "memory")) {
      return static_cast<double>(cap.value.nano()) / 1e9 / (1024.0 * 1024 * 1024);
    }
  }
  return 0;
}

double ComputeCapability(const api::Device& d) {
  const api::DeviceAttribute* a = Find(d, "cudaComputeCapability");
  if (a == nullptr || !a->version_value) return 0;
  const std::string& v = *a->version_value;  // "9.0.0"
  size_t dot = v.find('.');
  if (dot == std::string::npos) return 0;
  try {
    size_t end = v.find('.', dot + 1);
    return std::stod(v.substr(0, dot)) +
           std::stod(v.substr(dot + 1, end == std::string::npos ? end : end - dot - 1)) / 10;
  } catch (...) {
    return 0;
  }
}

}  // namespace

std::vector<double> DeviceWorth(const model::Inventory& inv,
                                const std::map<std::string, double>& prices) {
  std::vector<double> hardware(inv.devices().size(), 0);
  for (model::DeviceId id = 0; id < hardware.size(); ++id) {
    const api::Device& d = *inv.devices()[id].spec;
    hardware[id] = MemoryGiB(d) * ComputeCapability(d);
  }
  if (prices.empty()) return hardware;
  // Priced devices take their price; the rest the default, else their hardware measure in
  // dollars at the rate of the priced ones.
  std::vector<double> out(hardware.size(), -1);
  double priced = 0, priced_hardware = 0;
  for (model::DeviceId id = 0; id < out.size(); ++id) {
    const api::DeviceAttribute* product = Find(*inv.devices()[id].spec, "productName");
    if (product == nullptr || !product->string_value || hardware[id] == 0) continue;
    auto it = prices.find(*product->string_value);
    if (it == prices.end()) continue;
    out[id] = it->second;
    priced += it->second;
    priced_hardware += hardware[id];
  }
  auto fallback = prices.find("default");
  double rate = priced_hardware > 0 ? priced / priced_hardware : 0;
  for (model::DeviceId id = 0; id < out.size(); ++id) {
    if (out[id] >= 0) continue;
    bool gpu = hardware[id] > 0;
    out[id] = !gpu ? 0 : fallback != prices.end() ? fallback->second : hardware[id] * rate;
  }
  return out;
}

std::vector<double> NodeWorth(const model::Inventory& inv,
                              const std::vector<double>& device_worth) {
  std::vector<double> out(inv.nodes().size(), 0);
  for (model::NodeId n = 0; n < inv.nodes().size(); ++n) {
    for (model::DeviceId d : inv.nodes()[n].devices) out[n] = std::max(out[n], device_worth[d]);
  }
  return out;
}

}  // namespace gpuplane::sched
