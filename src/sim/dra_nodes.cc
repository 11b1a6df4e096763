#include "sim/dra_nodes.h"

#include <map>

#include "model/inventory.h"
#include "util/strings.h"

namespace gpuplane::sim {

std::vector<TraceNode> NodesFromObjects(const std::vector<api::SourcedObject>& objects) {
  model::Inventory inv = model::Inventory::Build(objects);
  std::map<std::string, const api::Node*> node_objects;
  for (const api::SourcedObject& o : objects) {
    if (const auto* n = std::get_if<api::Node>(&o.object); n != nullptr && o.valid) {
      node_objects[n->metadata.name] = n;
    }
  }
  bool typed = false;
  for (const model::DeviceInfo& d : inv.devices())
    typed = typed || d.spec->attributes.contains("type");
  std::vector<TraceNode> out;
  for (const model::NodeInfo& n : inv.nodes()) {
    TraceNode t;
    t.name = n.name;
    t.source = util::Cat("node ", n.name);
    for (model::DeviceId d : n.devices) {
      const model::DeviceInfo& info = inv.devices()[d];
      if (info.node != inv.FindNode(n.name).value_or(model::kNoId)) continue;  // node-local only
      auto type = info.spec->attributes.find("type");
      if (typed && (type == info.spec->attributes.end() || type->second.string_value != "gpu")) {
        continue;
      }
      ++t.gpus;
      if (t.model.empty()) {
        auto product = info.spec->attributes.find("productName");
        t.model = product != info.spec->attributes.end() && product->second.string_value
                      ? *product->second.string_value
                      : inv.pools()[info.pool].driver;
      }
    }
    auto it = node_objects.find(n.name);
    const std::map<std::string, api::Quantity>* cap =
        it == node_objects.end() ? nullptr : &it->second->status.capacity;
    auto quantity = [&](const char* name) -> const api::Quantity* {
      if (cap == nullptr) return nullptr;
      auto q = cap->find(name);
      return q == cap->end() ? nullptr : &q->second;
    };
    const api::Quantity* cpu = quantity("cpu");
    const api::Quantity* memory = quantity("memory");
    t.cpu_milli = cpu != nullptr ? cpu->MilliValue() : int64_t{16000} * std::max(1, t.gpus);
    t.memory_mib = memory != nullptr ? memory->Value() >> 20 : int64_t{65536} * std::max(1, t.gpus);
    if (t.gpus > 0 || cap != nullptr) out.push_back(std::move(t));
  }
  return out;
}

}  // namespace gpuplane::sim
