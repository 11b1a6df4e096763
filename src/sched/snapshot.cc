#include "sched/snapshot.h"

#include <algorithm>

#include "sched/worth.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

int64_t Amount(const std::map<std::string, api::Quantity>& m, const char* name, int64_t unit) {
  auto it = m.find(name);
  return it == m.end() ? -1 : static_cast<int64_t>(it->second.nano() / unit);
}

// The node a node-local allocation result is pinned to (matchFields metadata.name In [n]).
std::string PinnedNode(const api::AllocationResult& r) {
  if (!r.node_selector) return "";
  for (const api::NodeSelectorTerm& t : r.node_selector->node_selector_terms) {
    for (const api::NodeSelectorRequirement& f : t.match_fields) {
      if (f.key == "metadata.name" && f.op == "In" && f.values.size() == 1) return f.values[0];
    }
  }
  return "";
}

// Adds `p` to (or removes it from) the pods holding `label`; an empty posting goes.
void ChangePosting(
    std::map<std::pair<std::string, std::string>, std::set<const PodPlacement*>>& postings,
    const std::pair<const std::string, std::string>& label, const PodPlacement* p, bool add) {
  if (add) {
    postings[label].insert(p);
    return;
  }
  auto it = postings.find(label);
  if (it == postings.end()) return;
  it->second.erase(p);
  if (it->second.empty()) postings.erase(it);
}

}  // namespace

Snapshot::Snapshot(std::shared_ptr<const model::Inventory> inv)
    : owned_(std::move(inv)),
      inv_(*owned_),
      state_(inv_),
      memo_(std::make_unique<alloc::SelectorMemo>(inv_)) {}

std::unique_ptr<Snapshot> Snapshot::Build(std::vector<api::SourcedObject> cluster,
                                          const std::map<std::string, double>& prices) {
  auto inv = std::make_shared<const model::Inventory>(model::Inventory::BuildTakingSlices(cluster));
  return Build(std::move(inv), cluster, prices);
}

std::unique_ptr<Snapshot> Snapshot::Build(std::shared_ptr<const model::Inventory> inventory,
                                          const std::vector<api::SourcedObject>& cluster,
                                          const std::map<std::string, double>& prices) {
  return Build(std::move(inventory), api::RefsOf(cluster), prices);
}

std::unique_ptr<Snapshot> Snapshot::Build(std::shared_ptr<const model::Inventory> inventory,
                                          const api::ObjectRefs& cluster,
                                          const std::map<std::string, double>& prices) {
  std::unique_ptr<Snapshot> s(new Snapshot(std::move(inventory)));
  s->warnings_ = s->inv_.warnings();
  for (std::string& w : s->state_.ApplyAllocatedClaims(s->inv_, cluster)) {
    s->warnings_.push_back(std::move(w));
  }
  s->facts_.resize(s->inv_.nodes().size());
  std::vector<const api::VolumeAttachment*> attachments;
  std::vector<const api::PersistentVolume*> volumes;
  for (const api::SourcedObject* o : cluster) {
    if (const auto* n = std::get_if<api::Node>(&o->object)) {
      std::optional<model::NodeId> id = s->inv_.FindNode(n->metadata.name);
      if (!id) continue;
      NodeFacts& f = s->facts_[*id];
      f.has_node = true;
      f.taints = n->spec.taints;
      f.unschedulable = n->spec.unschedulable.value_or(false);
      f.cpu_allocatable = Amount(n->status.allocatable, "cpu", 1'000'000);
      f.memory_allocatable = Amount(n->status.allocatable, "memory", 1'000'000'000);
      f.pods_allocatable = Amount(n->status.allocatable, "pods", 1'000'000'000);
      for (const auto& [name, q] : n->status.allocatable) {
        if (name != "cpu" && name != "memory" && name != "pods") {
          f.other_allocatable[name] = static_cast<int64_t>(q.nano() / 1'000'000);
        }
      }
    } else if (const auto* csi = std::get_if<api::CSINode>(&o->object)) {
      std::optional<model::NodeId> id = s->inv_.FindNode(csi->metadata.name);
      if (!id) continue;
      auto migrated = csi->metadata.annotations.find(kMigratedPluginsAnnotation);
      if (migrated != csi->metadata.annotations.end()) {
        s->facts_[*id].csi_volumes.SetMigratedPlugins(migrated->second);
      }
      for (const api::CSINodeDriver& d : csi->spec.drivers) {
        if (d.allocatable && d.allocatable->count) {
          s->facts_[*id].volume_limits[d.name] = *d.allocatable->count;
        }
      }
    } else if (const auto* va = std::get_if<api::VolumeAttachment>(&o->object)) {
      attachments.push_back(va);
    } else if (const auto* pv = std::get_if<api::PersistentVolume>(&o->object)) {
      volumes.push_back(pv);
    } else if (const auto* c = std::get_if<api::ResourceClaim>(&o->object)) {
      if (!c->status.allocation) continue;
      ClaimAllocation a;
      a.result = *c->status.allocation;
      std::optional<model::NodeId> id = s->inv_.FindNode(PinnedNode(a.result));
      a.node = id.value_or(model::kNoId);
      for (const api::ResourceClaimConsumerReference& r : c->status.reserved_for) {
        a.users.push_back(c->metadata.namespace_name + "/" + r.name);
      }
      // Its devices as choices, so that evicting its last user (preemption) releases them.
      for (const api::DeviceRequestAllocationResult& r : a.result.devices.results) {
        std::optional<model::DeviceId> d = s->inv_.FindDevice(r.driver, r.pool, r.device);
        if (!d || r.admin_access.value_or(false)) continue;
        absl::StatusOr<model::CapacityAmounts> consumed =
            model::ConsumedAmounts(s->inv_, *d, r.consumed_capacity);
        if (consumed.ok()) a.choices.push_back({0, 0, 0, *d, std::move(*consumed), false});
      }
      s->claims_[c->metadata.namespace_name + "/" + c->metadata.name] = std::move(a);
    }
  }
  s->AttachVolumes(attachments, volumes);
  s->device_worth_ = DeviceWorth(s->inv_, prices);
  std::vector<double> node_worth = NodeWorth(s->inv_, s->device_worth_);
  for (model::NodeId n = 0; n < node_worth.size(); ++n) s->facts_[n].worth = node_worth[n];
  s->index_ = std::make_unique<alloc::NodeIndex>(s->inv_, s->state_, std::vector<model::NodeId>(),
                                                 s->memo_.get());
  return s;
}

void Snapshot::AttachVolumes(const std::vector<const api::VolumeAttachment*>& attachments,
                             const std::vector<const api::PersistentVolume*>& volumes) {
  if (attachments.empty()) return;
  std::map<std::string_view, const api::CSIPersistentVolumeSource*> csi;
  for (const api::PersistentVolume* pv : volumes) {
    if (pv->spec.csi) csi.try_emplace(pv->metadata.name, &*pv->spec.csi);
  }
  // As kube's NodeVolumeLimits: by the attacher and the volume's handle; an inline volume, or a
  // volume not known or not CSI, is not counted.
  for (const api::VolumeAttachment* va : attachments) {
    const std::optional<std::string>& pv = va->spec.source.persistent_volume_name;
    auto source = pv ? csi.find(*pv) : csi.end();
    std::optional<model::NodeId> node = inv_.FindNode(va->spec.node_name);
    if (source == csi.end() || !node) continue;
    const std::string& driver = va->spec.attacher;
    facts_[*node].csi_volumes.Attach(
        {driver, util::Cat(driver, "/", source->second->volume_handle)});
  }
}

const ClaimAllocation* Snapshot::claim(const std::string& key) const {
  auto it = claims_.find(key);
  return it == claims_.end() ? nullptr : &it->second;
}

const PodPlacement* Snapshot::placement(const std::string& pod) const {
  auto it = pods_.find(pod);
  return it == pods_.end() ? nullptr : &it->second;
}

void Snapshot::SetOrder(std::vector<model::NodeId> order) {
  index_->Reorder(std::move(order));
  ++order_version_;
}

absl::Status Snapshot::Take(const std::vector<alloc::Choice>& choices) {
  for (const alloc::Choice& ch : choices) {
    if (ch.admin_access) continue;
    absl::Status st = state_.Allocate(inv_, ch.device, ch.consumed);
    if (!st.ok()) return st;
    index_->Refresh(ch.device);
  }
  return absl::OkStatus();
}

absl::Status Snapshot::Give(const std::vector<alloc::Choice>& choices) {
  for (const alloc::Choice& ch : choices) {
    if (ch.admin_access) continue;
    absl::Status st = state_.Release(inv_, ch.device, ch.consumed);
    if (!st.ok()) return st;
    index_->Refresh(ch.device);
  }
  return absl::OkStatus();
}

absl::Status Snapshot::Place(PodPlacement p, std::map<std::string, ClaimAllocation> fresh) {
  if (pods_.contains(p.pod)) {
    return absl::AlreadyExistsError(util::Cat("pod ", p.pod, " is already placed"));
  }
  for (auto it = fresh.begin(); it != fresh.end(); ++it) {
    if (claims_.contains(it->first)) {
      return absl::AlreadyExistsError(
          util::Cat("ResourceClaim ", it->first, " is already allocated"));
    }
    absl::Status st = Take(it->second.choices);
    if (!st.ok()) return st;
    claims_.emplace(it->first, std::move(it->second));
  }
  for (const std::string& key : p.claims) {
    auto it = claims_.find(key);
    if (it != claims_.end()) it->second.users.push_back(p.pod);
  }
  if (p.node != model::kNoId) {
    facts_[p.node].cpu_requested += p.cpu_milli;
    facts_[p.node].memory_requested += p.memory_bytes;
    ++facts_[p.node].pods_placed;
    for (const auto& [name, v] : p.other_milli) facts_[p.node].other_requested[name] += v;
    std::vector<HostPort>& ports = facts_[p.node].host_ports;
    ports.insert(ports.end(), p.host_ports.begin(), p.host_ports.end());
    facts_[p.node].csi_volumes.Add(p.csi_volumes);
    std::vector<InlineDisk>& disks = facts_[p.node].inline_disks;
    disks.insert(disks.end(), p.inline_disks.begin(), p.inline_disks.end());
  }
  for (const VolumeChoice& v : p.volumes) {
    if (!v.volume.empty()) volumes_taken_.insert(v.volume);
  }
  for (const std::string& c : p.rwop_claims) rwop_users_.emplace(c, p.pod);
  std::string key = p.pod;
  const PodPlacement& placed = pods_.emplace(std::move(key), std::move(p)).first->second;
  if (placed.labels) Index(placed, true);
  ++version_;
  return absl::OkStatus();
}

absl::StatusOr<Snapshot::Removed> Snapshot::Remove(const std::string& pod) {
  auto it = pods_.find(pod);
  if (it == pods_.end()) return absl::NotFoundError(util::Cat("pod ", pod, " is not placed"));
  if (it->second.labels) Index(it->second, false);
  Removed r{std::move(it->second), {}};
  pods_.erase(it);
  ++version_;
  ++removals_;
  if (r.placement.node != model::kNoId) {
    facts_[r.placement.node].cpu_requested -= r.placement.cpu_milli;
    facts_[r.placement.node].memory_requested -= r.placement.memory_bytes;
    --facts_[r.placement.node].pods_placed;
    for (const auto& [name, v] : r.placement.other_milli) {
      facts_[r.placement.node].other_requested[name] -= v;
    }
    std::vector<HostPort>& ports = facts_[r.placement.node].host_ports;
    for (const HostPort& h : r.placement.host_ports) {
      auto used = std::find(ports.begin(), ports.end(), h);
      if (used != ports.end()) ports.erase(used);
    }
    facts_[r.placement.node].csi_volumes.Remove(r.placement.csi_volumes);
    std::vector<InlineDisk>& disks = facts_[r.placement.node].inline_disks;
    for (const InlineDisk& d : r.placement.inline_disks) {
      auto used = std::find(disks.begin(), disks.end(), d);
      if (used != disks.end()) disks.erase(used);
    }
  }
  for (const VolumeChoice& v : r.placement.volumes) {
    if (!v.volume.empty()) volumes_taken_.erase(v.volume);
  }
  for (const std::string& c : r.placement.rwop_claims) {
    auto [first, last] = rwop_users_.equal_range(c);
    for (auto u = first; u != last; ++u) {
      if (u->second == pod) {
        rwop_users_.erase(u);
        break;
      }
    }
  }
  for (const std::string& key : r.placement.claims) {
    auto c = claims_.find(key);
    if (c == claims_.end()) continue;
    std::vector<std::string>& users = c->second.users;
    users.erase(std::remove(users.begin(), users.end(), pod), users.end());
    if (!users.empty()) continue;
    absl::Status st = Give(c->second.choices);
    if (!st.ok()) return st;
    r.released.emplace(key, std::move(c->second));
    claims_.erase(c);
  }
  return r;
}

const std::string* Snapshot::ReadWriteOncePodUser(const std::string& claim) const {
  auto it = rwop_users_.find(claim);
  return it == rwop_users_.end() ? nullptr : &it->second;
}

absl::Status Snapshot::Restore(Removed r) {
  for (auto& [key, a] : r.released) a.users.clear();
  return Place(std::move(r.placement), std::move(r.released));
}

void Snapshot::Index(const PodPlacement& p, bool add) {
  for (const auto& label : p.labels->labels) ChangePosting(by_label_, label, &p, add);
  if (!p.labels->anti_affinity.empty()) {
    anti_.pods += add ? 1 : -1;
    for (const api::PodAffinityTerm& t : p.labels->anti_affinity) {
      anti_.Change(&p, t.label_selector, add);
    }
  }
  if (!p.labels->scoring.empty()) {
    scoring_.pods += add ? 1 : -1;
    for (const ScoringTerm& t : p.labels->scoring) scoring_.Change(&p, t.term.label_selector, add);
  }
}

void Snapshot::TermIndex::Change(const PodPlacement* p,
                                 const std::optional<api::LabelSelector>& selector, bool add) {
  if (!selector) return;
  if (!selector->match_labels.empty()) {
    ChangePosting(by_label, *selector->match_labels.begin(), p, add);
  } else if (add) {
    unindexed.insert(p);
  } else {
    unindexed.erase(p);
  }
}

std::vector<const PodPlacement*> Snapshot::TermIndex::Candidates(
    const std::map<std::string, std::string>& labels) const {
  if (pods == 0) return {};
  std::set<const PodPlacement*> out = unindexed;
  for (const auto& label : labels) {
    auto it = by_label.find(label);
    if (it != by_label.end()) out.insert(it->second.begin(), it->second.end());
  }
  return {out.begin(), out.end()};
}

std::vector<const PodPlacement*> Snapshot::Candidates(const api::LabelSelector& selector) const {
  const std::set<const PodPlacement*>* rarest = nullptr;
  static const std::set<const PodPlacement*> kNone;
  for (const auto& label : selector.match_labels) {
    auto it = by_label_.find(label);
    const std::set<const PodPlacement*>* posting = it == by_label_.end() ? &kNone : &it->second;
    if (rarest == nullptr || posting->size() < rarest->size()) rarest = posting;
  }
  if (rarest != nullptr) return {rarest->begin(), rarest->end()};
  for (const api::LabelSelectorRequirement& r : selector.match_expressions) {
    if (r.op != "In") continue;
    std::set<const PodPlacement*> any;
    for (const std::string& v : r.values) {
      auto it = by_label_.find({r.key, v});
      if (it != by_label_.end()) any.insert(it->second.begin(), it->second.end());
    }
    return {any.begin(), any.end()};
  }
  std::vector<const PodPlacement*> all;
  for (const auto& [key, p] : pods_) {
    if (p.labels) all.push_back(&p);
  }
  return all;
}

}  // namespace gpuplane::sched
