#include "sched/pod_volumes.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "model/node_selector.h"
#include "sched/csi_migration.h"
#include "sched/pod_topology.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

constexpr char kNoProvisioner[] = "kubernetes.io/no-provisioner";

// A StorageClass's allowed topologies as the node selector they mean (terms ORed, a term's
// expressions ANDed, each "key In values").
api::NodeSelector SelectorOf(const std::vector<api::TopologySelectorTerm>& terms) {
  api::NodeSelector s;
  for (const api::TopologySelectorTerm& t : terms) {
    api::NodeSelectorTerm term;
    for (const api::TopologySelectorRequirement& r : t.match_label_expressions) {
      term.match_expressions.push_back({r.key, "In", r.values});
    }
    s.node_selector_terms.push_back(std::move(term));
  }
  return s;
}

// The claim's name when the volume is backed by one, else "".
std::string ClaimOf(const api::Pod& pod, const api::Volume& v) {
  if (v.persistent_volume_claim) return v.persistent_volume_claim->claim_name;
  if (v.extra.contains("ephemeral")) return pod.metadata.name + "-" + v.name;
  return "";
}

const api::Doc* Member(const api::Passthrough& extra, const char* key) {
  auto it = extra.find(key);
  return it == extra.end() ? nullptr : &it->second;
}

std::string Text(const api::Doc* map, std::string_view key) {
  return map != nullptr ? map->ScalarText(key) : "";
}

// `storage` of a resource map (a claim's requests, a volume's capacity); zero when absent.
api::Quantity Storage(const api::Doc* resources) {
  absl::StatusOr<api::Quantity> q = api::Quantity::Parse(Text(resources, "storage"));
  return q.ok() ? *q : api::Quantity();
}

// The claim's spec.resources.requests.storage; nullopt when it asks none.
std::optional<api::Quantity> RequestedStorage(const api::PersistentVolumeClaim& claim) {
  const api::Doc* resources = Member(claim.spec.extra, "resources");
  const api::Doc* requests =
      resources != nullptr && resources->is_map() ? resources->Find("requests") : nullptr;
  if (requests == nullptr || !requests->is_map() || requests->Find("storage") == nullptr) {
    return std::nullopt;
  }
  return Storage(requests);
}

std::set<std::string> Modes(const api::Doc* list) {
  std::set<std::string> out;
  if (list == nullptr || !list->is_seq()) return out;
  for (const api::Doc& m : list->items()) {
    if (m.is_scalar()) out.insert(m.text());
  }
  return out;
}

std::string VolumeMode(const api::Passthrough& spec) {
  const api::Doc* m = Member(spec, "volumeMode");
  return m != nullptr && m->is_scalar() && !m->text().empty() ? m->text() : "Filesystem";
}

// Volumes the claim may be bound to, smallest first: the one already reserved for it (claimRef),
// else Available volumes of its class with room, the access modes and the volume mode it asks,
// and the labels its selector asks (kube's FindMatchingVolume).
// `want`: the claim's storage request. `reserved`: the claim has its volume already (the only
// candidate).
std::vector<const api::PersistentVolume*> Candidates(const VolumeIndex& ix,
                                                     const api::PersistentVolumeClaim& claim,
                                                     const std::string& class_name,
                                                     const api::Quantity& want, bool& reserved) {
  auto held = ix.reserved.find(claim.metadata.namespace_name + "/" + claim.metadata.name);
  if (held != ix.reserved.end()) {
    const std::string uid = Text(Member(held->second->spec.extra, "claimRef"), "uid");
    if (uid.empty() || uid == claim.metadata.uid) {
      reserved = true;
      return {held->second};
    }
  }
  auto free = ix.free_by_class.find(class_name);
  if (free == ix.free_by_class.end()) return {};
  const std::set<std::string> modes = Modes(Member(claim.spec.extra, "accessModes"));
  std::vector<std::pair<api::Quantity, const api::PersistentVolume*>> found;
  for (const auto& [size, pv] : free->second) {
    const std::set<std::string> has = Modes(Member(pv->spec.extra, "accessModes"));
    if (pv->status.phase != "Available" || pv->metadata.extra.contains("deletionTimestamp") ||
        size < want || VolumeMode(pv->spec.extra) != VolumeMode(claim.spec.extra) ||
        !std::includes(has.begin(), has.end(), modes.begin(), modes.end()) ||
        (claim.spec.selector && !MatchesLabels(*claim.spec.selector, pv->metadata.labels))) {
      continue;
    }
    found.emplace_back(size, pv);
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const api::PersistentVolume*> out;
  out.reserve(found.size());
  for (const auto& entry : found) out.push_back(entry.second);
  return out;
}

// Sets `bind`'s storage capacity check when the provisioner's CSIDriver publishes capacity
// and the claim asks for storage (`want`).
void CheckCapacity(const VolumeIndex& ix, const api::StorageClass& sc,
                   const std::optional<api::Quantity>& want, VolumeToBind& bind) {
  if (!want) return;
  auto driver = ix.drivers.find(sc.provisioner);
  if (!PublishesCapacity(driver == ix.drivers.end() ? nullptr : driver->second)) return;
  bind.storage = *want;
  auto of_class = ix.capacities.find(sc.metadata.name);
  static const auto kNone = std::make_shared<const StorageCapacities>();
  bind.capacity = of_class != ix.capacities.end() ? of_class->second : kNone;
}

bool Reaches(const api::PersistentVolume& pv, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  const std::optional<api::VolumeNodeAffinity>& a = pv.spec.node_affinity;
  return !a || !a->required || model::MatchesNodeSelector(*a->required, name, labels);
}

// Adds an unbound WaitForFirstConsumer claim (not given a node yet) to the pod's claims to
// bind, or returns why the pod cannot be placed. `volume`: "volume V names ...", for messages.
std::optional<Status> BindLater(const VolumeIndex& ix, const api::PersistentVolumeClaim& claim,
                                const api::StorageClass& sc, const std::string& key,
                                const std::string& volume, PodInfo& p) {
  if (claim.spec.extra.contains("selector")) {
    return Status::Of(Code::kUnresolvable, Stage::kInput,
                      util::Cat(volume,
                                ", not bound yet, with a spec.selector: gpuplane does not "
                                "choose volumes by label for a WaitForFirstConsumer "
                                "claim, so the pod is not placed (bind the claim with "
                                "spec.volumeName, or give the pod another "
                                "schedulerName)"));
  }
  for (const VolumeToBind& b : p.volumes_to_bind) {
    if (b.claim == key) return std::nullopt;  // two volumes of the pod name one claim
  }
  bool reserved = false;
  const std::optional<api::Quantity> want = RequestedStorage(claim);
  VolumeToBind bind{
      key, claim.metadata.uid,
      Candidates(ix, claim, sc.metadata.name, want.value_or(api::Quantity()), reserved),
      !reserved && sc.provisioner != kNoProvisioner, std::nullopt};
  if (bind.candidates.empty() && !bind.provision) {
    return Status::Of(
        Code::kUnschedulable, Stage::kInput,
        util::Cat(volume, ", not bound yet, of StorageClass ", sc.metadata.name,
                  ", which has no provisioner, and no Available PersistentVolume "
                  "of that class fits it (size, access modes, volume mode",
                  claim.spec.selector ? ", selector" : "", "); the pod waits for one"));
  }
  if (!sc.allowed_topologies.empty()) bind.topology = SelectorOf(sc.allowed_topologies);
  if (bind.provision) CheckCapacity(ix, sc, want, bind);
  p.volumes_to_bind.push_back(std::move(bind));
  return std::nullopt;
}

}  // namespace

void VolumeIndex::Add(const api::Object& o) {
  if (const auto* c = std::get_if<api::PersistentVolumeClaim>(&o)) {
    claims.try_emplace(c->metadata.namespace_name + "/" + c->metadata.name, c);
  } else if (const auto* v = std::get_if<api::PersistentVolume>(&o)) {
    if (!volumes.try_emplace(v->metadata.name, v).second) return;
    const api::Doc* ref = Member(v->spec.extra, "claimRef");
    if (ref != nullptr && ref->is_map()) {
      reserved.try_emplace(util::Cat(Text(ref, "namespace"), "/", Text(ref, "name")), v);
    } else {
      free_by_class[v->spec.storage_class_name].emplace_back(
          Storage(Member(v->spec.extra, "capacity")), v);
    }
  } else if (const auto* sc = std::get_if<api::StorageClass>(&o)) {
    classes.try_emplace(sc->metadata.name, sc);
  } else if (const auto* d = std::get_if<api::CSIDriver>(&o)) {
    drivers.try_emplace(d->metadata.name, d);
  } else if (const auto* c = std::get_if<api::CSIStorageCapacity>(&o)) {
    if (capacity_names.insert(c->metadata.namespace_name + "/" + c->metadata.name).second) {
      std::shared_ptr<StorageCapacities>& of_class = capacities[c->storage_class_name];
      if (!of_class) of_class = std::make_shared<StorageCapacities>();
      of_class->Add(*c);
    }
  }
}

std::vector<std::string> ReadWriteOncePodClaims(const VolumeIndex& ix, const api::Pod& pod) {
  std::vector<std::string> out;
  for (const api::Volume& v : pod.spec.volumes) {
    if (!v.persistent_volume_claim) continue;
    std::string key = util::Cat(pod.metadata.namespace_name, "/", ClaimOf(pod, v));
    auto c = ix.claims.find(key);
    if (c == ix.claims.end() ||
        !Modes(Member(c->second->spec.extra, "accessModes")).contains("ReadWriteOncePod") ||
        std::find(out.begin(), out.end(), key) != out.end()) {
      continue;
    }
    out.push_back(std::move(key));
  }
  return out;
}

std::vector<CsiVolume> CsiVolumesOf(const VolumeIndex& ix, const api::Pod& pod) {
  std::vector<CsiVolume> out;
  auto add = [&out](CsiVolume found) {
    if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(std::move(found));
  };
  for (const api::Volume& v : pod.spec.volumes) {
    std::string name = ClaimOf(pod, v);
    if (name.empty()) {  // an inline volume: counted when its in-tree plugin moved to CSI
      if (std::optional<CsiVolume> m = MigratedVolume(v.extra, nullptr)) add(std::move(*m));
      continue;
    }
    std::string key = util::Cat(pod.metadata.namespace_name, "/", name);
    auto c = ix.claims.find(key);
    if (c == ix.claims.end()) continue;
    const api::PersistentVolumeClaim& claim = *c->second;
    auto pv =
        claim.spec.volume_name.empty() ? ix.volumes.end() : ix.volumes.find(claim.spec.volume_name);
    if (pv != ix.volumes.end()) {
      const api::PersistentVolume& volume = *pv->second;
      if (const std::optional<api::CSIPersistentVolumeSource>& csi = volume.spec.csi) {
        add({csi->driver, util::Cat(csi->driver, "/", csi->volume_handle)});
      } else if (std::optional<CsiVolume> m =
                     MigratedVolume(volume.spec.extra, &volume.metadata.labels)) {
        add(std::move(*m));
      }
      continue;
    }
    // Unbound, or its volume is not known: a volume its class's provisioner makes.
    auto sc = ix.classes.find(claim.spec.storage_class_name.value_or(""));
    if (sc == ix.classes.end()) continue;
    if (std::optional<CsiVolume> v = ProvisionedVolume(sc->second->provisioner, key)) {
      add(std::move(*v));
    }
  }
  return out;
}

void ResolveVolumes(const VolumeIndex& ix, std::string_view where, PodInfo& p) {
  const api::Pod& pod = *p.pod;
  const std::string& ns = pod.metadata.namespace_name;
  auto wait = [&](Code code, const std::string& what) {
    p.problem = Status::Of(code, Stage::kInput, util::Cat(where, what));
  };
  for (const api::Volume& v : pod.spec.volumes) {
    std::string name = ClaimOf(pod, v);
    if (name.empty()) continue;
    std::string key = util::Cat(ns, "/", name);
    std::string volume = util::Cat("volume ", v.name, " names PersistentVolumeClaim ", key);
    auto c = ix.claims.find(key);
    if (c == ix.claims.end()) {
      return wait(Code::kUnschedulable,
                  util::Cat(volume, ", which does not exist",
                            v.persistent_volume_claim ? ""
                                                      : " yet (the ephemeral volume controller "
                                                        "makes it)",
                            "; the pod waits for it"));
    }
    const api::PersistentVolumeClaim& claim = *c->second;
    if (claim.metadata.extra.contains("deletionTimestamp")) {
      return wait(Code::kUnschedulable,
                  util::Cat(volume, ", which is being deleted; the pod waits for it"));
    }
    if (!claim.spec.volume_name.empty()) {
      auto pv = ix.volumes.find(claim.spec.volume_name);
      if (pv == ix.volumes.end()) {
        return wait(Code::kUnschedulable,
                    util::Cat(volume, ", bound to PersistentVolume ", claim.spec.volume_name,
                              ", which does not exist; the pod waits for it"));
      }
      const std::optional<api::VolumeNodeAffinity>& affinity = pv->second->spec.node_affinity;
      if (affinity && affinity->required) p.volume_selectors.push_back(*affinity->required);
      continue;
    }
    std::string class_name = claim.spec.storage_class_name.value_or("");
    auto sc = class_name.empty() ? ix.classes.end() : ix.classes.find(class_name);
    if (!class_name.empty() && sc == ix.classes.end()) {
      return wait(Code::kUnschedulable,
                  util::Cat(volume, ", not bound yet, of StorageClass ", class_name,
                            ", which does not exist; the pod waits for it"));
    }
    if (sc == ix.classes.end() || sc->second->volume_binding_mode != "WaitForFirstConsumer") {
      return wait(Code::kUnschedulable,
                  util::Cat(volume, ", not bound yet, which binds immediately",
                            class_name.empty() ? " (it has no StorageClass)" : "",
                            "; the pod waits until it is bound to a PersistentVolume"));
    }
    auto selected = claim.metadata.annotations.find(api::kSelectedNodeAnnotation);
    if (selected != claim.metadata.annotations.end() && !selected->second.empty()) {
      if (!p.volume_node.empty() && p.volume_node != selected->second) {
        return wait(Code::kUnresolvable,
                    util::Cat(volume, ", being provisioned for node ", selected->second,
                              ", while another of its volumes is being provisioned for node ",
                              p.volume_node, "; no node holds both"));
      }
      p.volume_node = selected->second;
      continue;
    }
    if (std::optional<Status> problem = BindLater(ix, claim, *sc->second, key, volume, p)) {
      problem->message = util::Cat(where, problem->message);
      p.problem = std::move(problem);
      return;
    }
  }
}

std::optional<Rule> ChooseVolumes(const std::vector<const PodInfo*>& pods, const std::string& name,
                                  const std::map<std::string, std::string>& labels,
                                  const std::set<std::string>& taken,
                                  std::vector<std::vector<VolumeChoice>>* out) {
  std::set<std::string> mine;  // chosen here for earlier claims
  if (out != nullptr) out->assign(pods.size(), {});
  for (size_t i = 0; i < pods.size(); ++i) {
    for (const VolumeToBind& b : pods[i]->volumes_to_bind) {
      const api::PersistentVolume* pick = nullptr;
      for (const api::PersistentVolume* pv : b.candidates) {
        const std::string& n = pv->metadata.name;
        if (!taken.contains(n) && !mine.contains(n) && Reaches(*pv, name, labels)) {
          pick = pv;
          break;
        }
      }
      if (pick == nullptr) {
        if (!b.provision ||
            (b.topology && !model::MatchesNodeSelector(*b.topology, name, labels))) {
          return Rule::kVolumeNode;
        }
        if (b.capacity && !b.capacity->HasRoom(labels, b.storage)) return Rule::kVolumeCapacity;
      }
      std::string volume = pick != nullptr ? pick->metadata.name : "";
      if (pick != nullptr) mine.insert(volume);
      if (out != nullptr) (*out)[i].push_back({b.claim, b.uid, std::move(volume)});
    }
  }
  return std::nullopt;
}

}  // namespace gpuplane::sched
