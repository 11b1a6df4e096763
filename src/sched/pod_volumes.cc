#include "sched/pod_volumes.h"

#include <algorithm>
#include <utility>

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

}  // namespace

void VolumeIndex::Add(const api::Object& o) {
  if (const auto* c = std::get_if<api::PersistentVolumeClaim>(&o)) {
    claims[c->metadata.namespace_name + "/" + c->metadata.name] = c;
  } else if (const auto* v = std::get_if<api::PersistentVolume>(&o)) {
    volumes[v->metadata.name] = v;
  } else if (const auto* sc = std::get_if<api::StorageClass>(&o)) {
    classes[sc->metadata.name] = sc;
  }
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
    if (sc->second->provisioner == kNoProvisioner) {
      return wait(Code::kUnresolvable,
                  util::Cat(volume, ", not bound yet, of StorageClass ", class_name,
                            ", which has no provisioner: gpuplane does not choose among existing "
                            "PersistentVolumes for a WaitForFirstConsumer claim, so the pod is not "
                            "placed (bind the claim to a volume with spec.volumeName, or give the "
                            "pod another schedulerName)"));
    }
    if (!sc->second->allowed_topologies.empty()) {
      p.volume_selectors.push_back(SelectorOf(sc->second->allowed_topologies));
    }
    if (std::find(p.volumes_to_provision.begin(), p.volumes_to_provision.end(), key) ==
        p.volumes_to_provision.end()) {
      p.volumes_to_provision.push_back(key);
    }
  }
}

}  // namespace gpuplane::sched
