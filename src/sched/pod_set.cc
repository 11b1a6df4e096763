#include "sched/pod_set.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "sched/checkpoints.h"
#include "sched/extended_resources.h"
#include "sched/pod_volumes.h"
#include "sched/preferences.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

int64_t Requested(const std::vector<api::Container>& containers, const std::string& name,
                  int64_t unit_nano, bool max) {
  int64_t total = 0;
  for (const api::Container& c : containers) {
    const api::Quantity* q = c.resources.RequestOf(name);
    if (q == nullptr) continue;
    auto v = static_cast<int64_t>(q->nano() / unit_nano);
    total = max ? std::max(total, v) : total + v;
  }
  return total;
}

std::string Where(const api::SourcedObject& o) {
  return util::Cat(o.file, ":", o.line, ": ", api::Label(o.object), ": ");
}

struct Index {
  // Hashed: a live pass indexes every claim in the cluster and looks up each pod's.
  std::unordered_map<std::string, const api::ResourceClaim*> claims;
  std::map<std::string, const api::ResourceClaimTemplate*> templates;
  std::map<std::string, const api::SourcedObject*> pod_groups;  // ns/name
  std::map<std::string, const api::SourcedObject*> workloads;   // ns/name
  std::map<std::string, const api::Namespace*> namespaces;      // name
  VolumeIndex volumes;
  ExtendedClasses classes;  // by the resource name each serves
  // Claims made for pods' extended resources (annotated so), by the uid of the pod owning them.
  std::map<std::string, const api::ResourceClaim*> extended_claims;
};

// The uid of the pod that owns the claim as its controller, "" when none does.
std::string ControllingPod(const api::ObjectMeta& m) {
  auto refs = m.extra.find("ownerReferences");
  if (refs == m.extra.end() || !refs->second.is_seq()) return "";
  for (const api::Doc& r : refs->second.items()) {
    const api::Doc* controller = r.Find("controller");
    if (r.ScalarText("kind") == "Pod" && controller != nullptr && controller->is_scalar() &&
        controller->text() == "true") {
      return r.ScalarText("uid");
    }
  }
  return "";
}

void IndexClaim(const api::ResourceClaim& c, Index& ix) {
  ix.claims[c.metadata.namespace_name + "/" + c.metadata.name] = &c;
  auto a = c.metadata.annotations.find(kExtendedResourceClaimAnnotation);
  if (a == c.metadata.annotations.end() || a->second != "true") return;
  if (std::string owner = ControllingPod(c.metadata); !owner.empty()) {
    ix.extended_claims[owner] = &c;
  }
}

Index IndexOf(const api::ObjectRefs& work, const api::ObjectRefs& cluster) {
  Index ix;
  ix.claims.reserve(work.size());
  std::vector<const api::DeviceClass*> classes;
  for (const api::SourcedObject* o : cluster) {
    if (const auto* c = std::get_if<api::ResourceClaim>(&o->object)) IndexClaim(*c, ix);
    if (const auto* d = std::get_if<api::DeviceClass>(&o->object)) classes.push_back(d);
    if (const auto* n = std::get_if<api::Namespace>(&o->object))
      ix.namespaces[n->metadata.name] = n;
    ix.volumes.Add(o->object);
  }
  for (const api::SourcedObject* p : work) {
    const api::SourcedObject& o = *p;
    const api::ObjectMeta& m = api::MetaOf(o.object);
    auto key = [&m] { return m.namespace_name + "/" + m.name; };
    if (const auto* c = std::get_if<api::ResourceClaim>(&o.object)) IndexClaim(*c, ix);
    if (const auto* d = std::get_if<api::DeviceClass>(&o.object)) classes.push_back(d);
    if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) ix.templates[key()] = t;
    if (std::holds_alternative<api::PodGroup>(o.object)) ix.pod_groups[key()] = &o;
    if (std::holds_alternative<api::Workload>(o.object)) ix.workloads[key()] = &o;
    if (const auto* n = std::get_if<api::Namespace>(&o.object)) ix.namespaces[m.name] = n;
    ix.volumes.Add(o.object);
  }
  ix.classes = ExtendedResourceClasses(classes);
  return ix;
}

// The pod's claims; a problem names the missing claim or template.
void ResolveClaims(const Index& ix, const api::SourcedObject& o, PodInfo& p) {
  const std::string& ns = p.pod->metadata.namespace_name;
  for (const api::PodResourceClaim& rc : p.pod->spec.resource_claims) {
    if (rc.resource_claim_name) {
      auto it = ix.claims.find(ns + "/" + *rc.resource_claim_name);
      if (it == ix.claims.end()) {
        p.problem = Status::Of(Code::kUnschedulable, Stage::kInput,
                               util::Cat(Where(o), "ResourceClaim ", ns, "/",
                                         *rc.resource_claim_name, " is not among the inputs"));
        return;
      }
      p.claims.push_back({it->first, BorrowedClaim(*it->second), true});
      continue;
    }
    // In a cluster the resourceclaim controller made the claim and named it in the pod's
    // status; that object (allocated or not) is the claim.
    const std::optional<std::string>* made = nullptr;
    for (const api::PodResourceClaimStatus& st : p.pod->status.resource_claim_statuses) {
      if (st.name == rc.name && st.resource_claim_name) made = &st.resource_claim_name;
    }
    if (made != nullptr) {
      auto it = ix.claims.find(ns + "/" + **made);
      if (it == ix.claims.end()) {
        p.problem = Status::Of(Code::kUnschedulable, Stage::kInput,
                               util::Cat(Where(o), "ResourceClaim ", ns, "/", **made,
                                         " (made from a template) is not among the inputs"));
        return;
      }
      p.claims.push_back({it->first, BorrowedClaim(*it->second), false});
      continue;
    }
    std::string tname = rc.resource_claim_template_name.value_or("");
    auto it = ix.templates.find(util::Cat(ns, "/", tname));
    if (it == ix.templates.end()) {
      p.problem = Status::Of(Code::kUnschedulable, Stage::kInput,
                             util::Cat(Where(o), "ResourceClaimTemplate ", ns, "/", tname,
                                       " is not among the inputs"));
      return;
    }
    api::ResourceClaim c;
    c.api_version = api::kResourceApiVersion;
    c.kind = "ResourceClaim";
    c.metadata = it->second->spec.metadata;
    c.metadata.name = p.pod->metadata.name + "-" + rc.name;
    c.metadata.namespace_name = ns;
    c.spec = it->second->spec.spec;
    p.claims.push_back({ns + "/" + c.metadata.name, OwnedClaim(std::move(c)), false});
  }
}

// The pod's extended resources a DeviceClass serves, and the claim for them: the one its
// status names or it owns (made in an earlier cycle, perhaps allocated), else one to create.
void ResolveExtended(const Index& ix, PodInfo& p) {
  if (ix.classes.empty()) return;
  for (const auto& [name, v] : p.other_milli) {
    if (ix.classes.contains(name)) p.extended_resources.push_back(name);
  }
  if (p.extended_resources.empty()) return;
  ExtendedRequests r = ExtendedRequestsOf(p.pod->spec, p.extended_resources, ix.classes);
  if (r.requests.empty()) {  // not whole devices: counted as any other resource
    p.extended_resources.clear();
    return;
  }
  p.other_milli_dra = p.other_milli;
  for (const std::string& name : p.extended_resources) p.other_milli_dra.erase(name);
  p.extended_mappings = std::move(r.mappings);
  const std::string& ns = p.pod->metadata.namespace_name;
  const api::ResourceClaim* made = nullptr;
  auto status = p.pod->status.extra.find("extendedResourceClaimStatus");
  if (status != p.pod->status.extra.end() && status->second.is_map()) {
    auto it = ix.claims.find(ns + "/" + status->second.ScalarText("resourceClaimName"));
    if (it != ix.claims.end()) made = it->second;
  }
  if (auto it = ix.extended_claims.find(p.pod->metadata.uid);
      made == nullptr && it != ix.extended_claims.end()) {
    made = it->second;
  }
  if (made != nullptr) {
    p.claims.push_back({ns + "/" + made->metadata.name, BorrowedClaim(*made), false, "", true});
    return;
  }
  if (!p.bound_node.empty()) return;  // running without one: by its node's count
  api::ResourceClaim c;
  c.api_version = api::kResourceApiVersion;
  c.kind = "ResourceClaim";
  c.metadata.name = p.pod->metadata.name + "-extended-resources-";
  c.metadata.namespace_name = ns;
  c.metadata.annotations[kExtendedResourceClaimAnnotation] = "true";
  c.spec.devices.requests = std::move(r.requests);
  p.claims.push_back({ns + "/" + c.metadata.name, OwnedClaim(std::move(c)), false, "", true});
}

}  // namespace

// Gang members that are twins are tried in node order only; a single pod starts where its
// twin's search ended (Session::PlacePod).
bool Interchangeable(const PodInfo& a, const PodInfo& b) {
  if (a.problem || b.problem || a.claims.size() != b.claims.size()) return false;
  if (a.cpu_milli != b.cpu_milli || a.memory_bytes != b.memory_bytes ||
      a.other_milli != b.other_milli || a.host_ports != b.host_ports ||
      a.inline_disks != b.inline_disks || a.csi_volumes != b.csi_volumes ||
      a.rwop_claims != b.rwop_claims) {
    return false;
  }
  if (a.pod->spec.tolerations != b.pod->spec.tolerations ||
      a.pod->spec.node_selector != b.pod->spec.node_selector ||
      a.pod->spec.affinity != b.pod->spec.affinity || a.volume_selectors != b.volume_selectors ||
      a.volume_node != b.volume_node ||
      a.pod->spec.topology_spread_constraints != b.pod->spec.topology_spread_constraints) {
    return false;
  }
  // Labels matter only where some pod's terms read them (pod_topology.h); members' labels
  // often differ (a Job's completion index).
  if ((a.labels || b.labels) && a.pod->metadata.labels != b.pod->metadata.labels) {
    return false;
  }
  for (size_t i = 0; i < a.claims.size(); ++i) {
    if (a.claims[i].named || b.claims[i].named) return false;
    if (!(a.claims[i].claim->spec == b.claims[i].claim->spec)) return false;
  }
  return true;
}

PodInfo DescribePod(const api::SourcedObject& o, size_t input) {
  PodInfo p;
  p.input = input;
  p.source = &o;
  p.pod = &std::get<api::Pod>(o.object);
  p.key = p.pod->metadata.namespace_name + "/" + p.pod->metadata.name;
  const api::PodSpec& spec = p.pod->spec;
  p.cpu_milli = std::max(Requested(spec.containers, "cpu", 1'000'000, false),
                         Requested(spec.init_containers, "cpu", 1'000'000, true));
  p.memory_bytes = std::max(Requested(spec.containers, "memory", 1'000'000'000, false),
                            Requested(spec.init_containers, "memory", 1'000'000'000, true));
  for (const auto* list : {&spec.containers, &spec.init_containers}) {
    for (const api::Container& c : *list) {
      for (const auto* m : {&c.resources.requests, &c.resources.limits}) {
        for (const auto& [name, q] : *m) {
          if (name == "cpu" || name == "memory" || p.other_milli.contains(name)) continue;
          int64_t v = std::max(Requested(spec.containers, name, 1'000'000, false),
                               Requested(spec.init_containers, name, 1'000'000, true));
          if (v > 0) p.other_milli[name] = v;
        }
      }
    }
  }
  p.host_ports = HostPortsOf(spec);
  p.inline_disks = InlineDisksOf(spec);
  p.priority = spec.priority.value_or(0);
  p.bound_node = spec.node_name;
  p.terminating = p.pod->metadata.extra.contains("deletionTimestamp");
  auto text = [](const api::Passthrough& extra, const char* key) -> std::string {
    auto it = extra.find(key);
    return it != extra.end() && it->second.is_scalar() ? it->second.text() : "";
  };
  p.never_preempts = text(spec.extra, "preemptionPolicy") == "Never";
  p.nominated_node = text(p.pod->status.extra, "nominatedNodeName");
  std::string start = text(p.pod->status.extra, "startTime");
  p.started = UnixSeconds(start.empty() ? p.pod->metadata.creation_timestamp : start).value_or(-1);
  return p;
}

namespace {

// A namespace's labels: its Namespace object's, and the one the API server sets on every
// namespace (a namespace without an object in the inputs has that one only).
NamespaceLabels NamespaceLabelsOf(const Index& ix, const std::string& name) {
  auto labels = std::make_shared<std::map<std::string, std::string>>();
  if (auto it = ix.namespaces.find(name); it != ix.namespaces.end()) {
    *labels = it->second->metadata.labels;
  }
  labels->insert_or_assign(kNamespaceNameLabel, name);
  return labels;
}

// The pod's terms that score the pods placed after it (ScoringTerm).
std::vector<ScoringTerm> ScoringTerms(const api::Affinity& a) {
  std::vector<ScoringTerm> out;
  if (a.pod_affinity) {
    for (const api::PodAffinityTerm& t : a.pod_affinity->required) out.push_back({t, 1});
  }
  for (const auto& [sign, p] :
       {std::pair{1, &a.pod_affinity}, std::pair{-1, &a.pod_anti_affinity}}) {
    if (!*p) continue;
    for (const api::WeightedPodAffinityTerm& w : (*p)->preferred) {
      if (w.weight != 0) out.push_back({w.term, sign * w.weight});
    }
  }
  return out;
}

// When some pod's terms read other pods' labels (sched/pod_topology.h; sched/preferences.h,
// any preference), every pod carries its labels into its placement; else none does, and the
// filters and scores cost nothing.
void LabelPods(const Index& ix, PodSet& set) {
  bool asked = std::any_of(set.pods.begin(), set.pods.end(), [](const PodInfo& p) {
    const api::PodSpec& spec = p.pod->spec;
    return AsksPodTopology(spec) || HasPreferences(spec);
  });
  if (!asked) return;
  std::map<std::string, NamespaceLabels> namespaces;
  for (PodInfo& p : set.pods) {
    const api::Pod& pod = *p.pod;
    auto labels = std::make_shared<PodLabels>();
    labels->ns = pod.metadata.namespace_name;
    NamespaceLabels& ns = namespaces[labels->ns];
    if (!ns) ns = NamespaceLabelsOf(ix, labels->ns);
    labels->ns_labels = ns;
    labels->labels = pod.metadata.labels;
    if (pod.spec.affinity) {
      const api::Affinity& a = *pod.spec.affinity;
      if (a.pod_anti_affinity) labels->anti_affinity = a.pod_anti_affinity->required;
      labels->scoring = ScoringTerms(a);
    }
    labels->terminating = p.terminating;
    p.labels = std::move(labels);
  }
}

PodInfo MakePod(const Index& ix, const api::SourcedObject& o, size_t input) {
  PodInfo p = DescribePod(o, input);
  ResolveClaims(ix, o, p);
  if (!p.problem) ResolveExtended(ix, p);
  if (!p.problem && p.bound_node.empty()) ResolveVolumes(ix.volumes, Where(o), p);
  p.rwop_claims = ReadWriteOncePodClaims(ix.volumes, *p.pod);
  p.csi_volumes = CsiVolumesOf(ix.volumes, *p.pod);
  return p;
}

std::string Annotation(const api::ObjectMeta& m, const char* key) {
  auto it = m.annotations.find(key);
  return it == m.annotations.end() ? "" : it->second;
}

// The gang a pod names, created on first mention; -1 with a problem when the group is missing.
int GangOf(const Index& ix, PodSet& set, std::map<std::string, int>& by_key, PodInfo& p) {
  const api::Pod& pod = *p.pod;
  const std::string& ns = pod.metadata.namespace_name;
  auto label = pod.metadata.labels.find(kPodGroupLabel);
  std::string key, kind;
  const api::SourcedObject* group = nullptr;
  int min = 1;
  if (pod.spec.workload_ref) {
    const api::WorkloadReference& ref = *pod.spec.workload_ref;
    kind = "Workload";
    key = util::Cat(ns, "/", ref.name, "/", ref.pod_group,
                    ref.pod_group_replica_key.empty() ? "" : "/" + ref.pod_group_replica_key);
    auto it = ix.workloads.find(ns + "/" + ref.name);
    const api::WorkloadPodGroup* pg = nullptr;
    if (it != ix.workloads.end()) {
      group = it->second;
      for (const api::WorkloadPodGroup& g :
           std::get<api::Workload>(group->object).spec.pod_groups) {
        if (g.name == ref.pod_group) pg = &g;
      }
    }
    if (pg == nullptr) {
      p.problem =
          Status::Of(Code::kUnschedulable, Stage::kGang,
                     util::Cat(Where(*p.source), "spec.workloadRef names ",
                               group == nullptr ? "Workload " : "pod group ",
                               group == nullptr ? ns + "/" + ref.name : ref.pod_group,
                               group == nullptr ? "" : " of Workload " + ns + "/" + ref.name,
                               ", which is not among the inputs; the pod waits for it"));
      return -1;
    }
    if (pg->policy.gang) min = pg->policy.gang->min_count;
  } else if (label != pod.metadata.labels.end()) {
    kind = "PodGroup";
    key = ns + "/" + label->second;
    auto it = ix.pod_groups.find(key);
    if (it == ix.pod_groups.end()) {
      p.problem =
          Status::Of(Code::kUnschedulable, Stage::kGang,
                     util::Cat(Where(*p.source), "label ", kPodGroupLabel, " names PodGroup ", key,
                               ", which is not among the inputs; the pod waits for it"));
      return -1;
    }
    group = it->second;
    min = std::get<api::PodGroup>(group->object).spec.min_member;
  } else if (!Annotation(pod.metadata, kTopologyRequired).empty() ||
             !Annotation(pod.metadata, kTopologyPreferred).empty()) {
    kind = "Pod";
    key = "pod " + p.key;
    group = p.source;
  } else {
    return -1;
  }
  auto [it, inserted] = by_key.try_emplace(key, static_cast<int>(set.gangs.size()));
  if (inserted) {
    Gang g;
    g.key = key;
    g.kind = kind;
    g.file = group->file;
    g.line = group->line;
    g.min = std::max(min, 1);
    const api::ObjectMeta& gm = api::MetaOf(group->object);
    g.topology_required = Annotation(gm, kTopologyRequired);
    g.topology_preferred = Annotation(gm, kTopologyPreferred);
    if (g.topology_required.empty())
      g.topology_required = Annotation(pod.metadata, kTopologyRequired);
    if (g.topology_preferred.empty()) {
      g.topology_preferred = Annotation(pod.metadata, kTopologyPreferred);
    }
    set.gangs.push_back(std::move(g));
  }
  return it->second;
}

// A gang with fewer members than its minimum is incomplete: its pods wait.
void CheckComplete(PodSet& set) {
  for (Gang& g : set.gangs) {
    if (static_cast<int>(g.members.size()) >= g.min) continue;
    std::string msg = util::Cat(g.file, ":", g.line, ": ", g.kind, " ", g.key, ": needs ", g.min,
                                " members, ", g.members.size(), " are present");
    set.warnings.push_back(msg);
    g.problem =
        Status::Of(Code::kUnschedulable, Stage::kGang,
                   util::Cat("gang ", g.key, " is incomplete: ", g.members.size(), " of ", g.min,
                             " members are present; it holds nothing until all are"));
  }
}

}  // namespace

PodSet BuildPodSet(const std::vector<api::SourcedObject>& work,
                   const std::vector<api::SourcedObject>& cluster) {
  return BuildPodSet(api::RefsOf(work), api::RefsOf(cluster));
}

PodSet BuildPodSet(const api::ObjectRefs& work, const api::ObjectRefs& cluster) {
  PodSet set;
  Index ix = IndexOf(work, cluster);
  std::map<std::string, int> by_key;
  for (const api::SourcedObject* w : work) {
    const api::SourcedObject& o = *w;
    if (!std::holds_alternative<api::Pod>(o.object) || !o.valid) continue;
    PodInfo p = MakePod(ix, o, set.pods.size());
    if (p.bound_node.empty()) {
      int g = GangOf(ix, set, by_key, p);
      if (g >= 0) {
        p.gang = g;
        set.gangs[g].members.push_back(set.pods.size());
      }
    }
    if (p.problem) set.warnings.push_back(p.problem->message);
    if (absl::StatusOr<Checkpointing> c = CheckpointingOf(p.pod->metadata); !c.ok()) {
      set.warnings.push_back(util::Cat(o.file, ":", o.line, ": Pod ",
                                       std::string(c.status().message()),
                                       " (ignored: preemption counts it as not saying)"));
    }
    set.pods.push_back(std::move(p));
  }
  CheckComplete(set);
  LabelPods(ix, set);
  return set;
}

}  // namespace gpuplane::sched
