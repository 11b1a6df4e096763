#include "sched/storage_capacity.h"

#include "sched/pod_topology.h"

namespace gpuplane::sched {
namespace {

bool Room(const api::CSIStorageCapacity& c, const std::map<std::string, std::string>& labels,
          const api::Quantity& want) {
  // maximumVolumeSize, when published, is the more precise (kube's capacitySufficient).
  const std::optional<api::Quantity>& limit =
      c.maximum_volume_size ? c.maximum_volume_size : c.capacity;
  return limit && *limit >= want && MatchesLabels(*c.node_topology, labels);
}

}  // namespace

void StorageCapacities::Add(const api::CSIStorageCapacity& c) {
  if (!c.node_topology) return;
  const std::map<std::string, std::string>& match = c.node_topology->match_labels;
  if (match.empty()) {
    unlabelled_.push_back(&c);
  } else {
    by_label_[match.begin()->first][match.begin()->second].push_back(&c);
  }
}

bool StorageCapacities::HasRoom(const std::map<std::string, std::string>& labels,
                                const api::Quantity& want) const {
  for (const api::CSIStorageCapacity* c : unlabelled_) {
    if (Room(*c, labels, want)) return true;
  }
  for (const auto& [key, value] : labels) {
    auto k = by_label_.find(key);
    if (k == by_label_.end()) continue;
    auto v = k->second.find(value);
    if (v == k->second.end()) continue;
    for (const api::CSIStorageCapacity* c : v->second) {
      if (Room(*c, labels, want)) return true;
    }
  }
  return false;
}

}  // namespace gpuplane::sched
