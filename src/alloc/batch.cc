#include "alloc/batch.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "alloc/allocator.h"
#include "alloc/node_index.h"
#include "alloc/verifier.h"
#include "model/allocation_state.h"
#include "model/inventory.h"
#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

api::ResourceClaim FromTemplate(const api::ResourceClaimTemplate& t, const std::string& name,
                                const std::string& ns) {
  api::ResourceClaim c;
  c.api_version = api::kResourceApiVersion;
  c.kind = "ResourceClaim";
  c.metadata = t.spec.metadata;
  c.metadata.name = name;
  c.metadata.namespace_name = ns.empty() ? t.metadata.namespace_name : ns;
  c.spec = t.spec.spec;
  return c;
}

}  // namespace

absl::StatusOr<std::vector<Unit>> Units(const std::vector<api::SourcedObject>& objects) {
  std::vector<Unit> units;
  std::map<std::string, const api::ResourceClaimTemplate*> templates;
  std::map<std::string, const api::ResourceClaim*> claims;
  for (const api::SourcedObject& o : objects) {
    if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) {
      templates[t->metadata.namespace_name + "/" + t->metadata.name] = t;
    } else if (const auto* c = std::get_if<api::ResourceClaim>(&o.object)) {
      claims[c->metadata.namespace_name + "/" + c->metadata.name] = c;
    }
  }
  // A template is instantiated once per Pod that uses it; one that no Pod uses counts as one
  // use by itself.
  std::set<std::string> used_by_pods;
  for (const api::SourcedObject& o : objects) {
    if (const auto* p = std::get_if<api::Pod>(&o.object)) {
      for (const api::PodResourceClaim& rc : p->spec.resource_claims) {
        if (rc.resource_claim_template_name) {
          used_by_pods.insert(p->metadata.namespace_name + "/" + *rc.resource_claim_template_name);
        }
      }
    }
  }
  // A claim that Pods name is allocated with the first Pod that names it, not on its own.
  std::set<std::string> named_by_pods, allocated_with_a_pod;
  for (const api::SourcedObject& o : objects) {
    if (const auto* p = std::get_if<api::Pod>(&o.object)) {
      for (const api::PodResourceClaim& rc : p->spec.resource_claims) {
        if (rc.resource_claim_name) {
          named_by_pods.insert(p->metadata.namespace_name + "/" + *rc.resource_claim_name);
        }
      }
    }
  }
  std::map<std::string, int> uses;
  for (const api::SourcedObject& o : objects) {
    if (const auto* c = std::get_if<api::ResourceClaim>(&o.object)) {
      std::string key = c->metadata.namespace_name + "/" + c->metadata.name;
      if (named_by_pods.contains(key)) continue;
      units.push_back({key, {*c}, {}, &o});
    } else if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) {
      if (used_by_pods.contains(t->metadata.namespace_name + "/" + t->metadata.name)) continue;
      std::string name = util::Cat(t->metadata.name, "-", ++uses[t->metadata.name]);
      units.push_back(
          {t->metadata.namespace_name + "/" + name, {FromTemplate(*t, name, "")}, {}, &o});
    } else if (const auto* p = std::get_if<api::Pod>(&o.object)) {
      Unit u{"pod " + p->metadata.namespace_name + "/" + p->metadata.name, {}, {}, &o};
      for (const api::PodResourceClaim& rc : p->spec.resource_claims) {
        std::string ns = p->metadata.namespace_name;
        if (rc.resource_claim_name) {
          auto it = claims.find(ns + "/" + *rc.resource_claim_name);
          if (it == claims.end()) {
            return absl::NotFoundError(util::Cat(o.file, ":", o.line, ": ", api::Label(o.object),
                                                 ": claim \"", *rc.resource_claim_name,
                                                 "\" is not in the claims file"));
          }
          if (allocated_with_a_pod.insert(it->first).second) {
            u.claims.push_back(*it->second);
          } else {
            u.shared.push_back(it->first);
          }
        } else {
          auto it = templates.find(ns + "/" + rc.resource_claim_template_name.value_or(""));
          if (it == templates.end()) {
            return absl::NotFoundError(util::Cat(
                o.file, ":", o.line, ": ", api::Label(o.object), ": ResourceClaimTemplate \"",
                rc.resource_claim_template_name.value_or(""), "\" is not in the claims file"));
          }
          u.claims.push_back(FromTemplate(*it->second, p->metadata.name + "-" + rc.name, ns));
        }
      }
      units.push_back(std::move(u));
    }
  }
  return units;
}

absl::StatusOr<BatchResult> AllocateInOrder(std::vector<api::SourcedObject> cluster,
                                            const std::vector<api::SourcedObject>& work,
                                            const std::optional<std::string>& node, bool verify) {
  auto start = std::chrono::steady_clock::now();
  BatchResult out;
  // The slices move into the inventory; the allocated claims stay for ApplyAllocatedClaims.
  model::Inventory inv = model::Inventory::BuildTakingSlices(cluster);
  out.warnings = inv.warnings();
  model::AllocationState state(inv);
  for (const std::string& p : state.ApplyAllocatedClaims(inv, cluster)) out.warnings.push_back(p);
  std::vector<model::NodeId> nodes;
  if (node) {
    std::optional<model::NodeId> n = inv.FindNode(*node);
    if (!n) return absl::NotFoundError(util::Cat("node \"", *node, "\" is not among the objects"));
    nodes.push_back(*n);
  } else {
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) nodes.push_back(n);
  }
  absl::StatusOr<std::vector<Unit>> parsed = Units(work);
  if (!parsed.ok()) return parsed.status();
  std::vector<Unit>& units = *parsed;
  SelectorCache cache;
  Allocator allocator(inv, AllocatorOptions{.explain = node.has_value()});
  std::unique_ptr<Allocator> explainer;  // built on the first failure

  NodeIndex index(inv, state);
  // Where each claim allocated so far runs: a node, "" when not node-local, absent when it
  // could not be allocated.
  std::map<std::string, std::optional<std::string>> placed;
  for (Unit& u : units) {
    std::vector<model::NodeId> unit_nodes = nodes;
    std::string shared_problem;
    for (const std::string& key : u.shared) {
      const std::optional<std::string>& where = placed[key];
      if (!where) {
        shared_problem = util::Cat(u.label, " shares ResourceClaim ", key,
                                   " with an earlier pod, and it could not be allocated");
      } else if (!where->empty()) {
        model::NodeId n = *inv.FindNode(*where);
        if (std::find(unit_nodes.begin(), unit_nodes.end(), n) == unit_nodes.end()) {
          shared_problem =
              util::Cat(u.label, " shares ResourceClaim ", key, ", which is allocated on node ",
                        *where, ", a node this run does not consider");
        }
        unit_nodes = {n};
      }
    }
    std::vector<CompiledClaim> compiled;
    std::string compile_error;
    for (const api::ResourceClaim& c : u.claims) {
      absl::StatusOr<CompiledClaim> cc =
          CompileClaim(c.metadata.namespace_name, c.metadata.name, c.spec, inv, cache);
      if (!cc.ok()) {
        compile_error = std::string(cc.status().message());
      } else {
        compiled.push_back(std::move(*cc));
      }
    }
    std::vector<const CompiledClaim*> ptrs;
    ptrs.reserve(compiled.size());
    for (const CompiledClaim& c : compiled) ptrs.push_back(&c);
    Outcome outcome;
    model::NodeId chosen = model::kNoId;
    if (!shared_problem.empty()) compile_error = shared_problem;
    if (compile_error.empty() && !node && u.shared.empty()) {
      // Every node in order: the index skips nodes that cannot fit (the allocator would fail
      // on them), so the first node that fits is the one the plain scan finds.
      for (size_t p = index.FirstCandidate(ptrs, 0); p != kNoPosition;
           p = index.FirstCandidate(ptrs, p + 1)) {
        outcome = allocator.Allocate(ptrs, index.order()[p], state);
        if (outcome.allocated) {
          chosen = index.order()[p];
          break;
        }
      }
    } else if (compile_error.empty()) {
      for (model::NodeId n : unit_nodes) {
        outcome = allocator.Allocate(ptrs, n, state);
        if (outcome.allocated) {
          chosen = n;
          break;
        }
      }
    }
    std::vector<std::string> reasons;
    if (!compile_error.empty()) {
      reasons.push_back(compile_error);
    } else if (chosen == model::kNoId) {
      if (unit_nodes.size() > 1) {
        reasons.push_back(util::Cat("no node of ", unit_nodes.size(), " fits; on the first node:"));
      }
      if (!unit_nodes.empty()) {
        if (!explainer) explainer = std::make_unique<Allocator>(inv);
        Outcome why = explainer->Allocate(ptrs, unit_nodes[0], state);
        reasons.insert(reasons.end(), why.reasons.begin(), why.reasons.end());
      }
    } else {
      if (verify) {
        std::string problem = Verify(inv, state, ptrs, chosen, outcome.choices);
        if (!problem.empty()) {
          return absl::InternalError(
              util::Cat(u.label, ": the verifier rejects the allocation: ", problem));
        }
      }
      absl::Status cs = allocator.Commit(outcome, ptrs, state);
      if (!cs.ok()) return cs;
      for (const Choice& ch : outcome.choices) index.Refresh(ch.device);
    }
    for (size_t i = 0; i < u.claims.size(); ++i) {
      ClaimOutcome co;
      co.claim = std::move(u.claims[i]);
      co.allocated = chosen != model::kNoId;
      std::string key = co.claim.metadata.namespace_name + "/" + co.claim.metadata.name;
      if (co.allocated) {
        co.claim.status.allocation = outcome.results[i];
        co.node = inv.nodes()[chosen].name;
        placed[key] = outcome.results[i].node_selector ? co.node : "";
      } else {
        co.reasons = reasons;
        placed[key] = std::nullopt;
      }
      out.claims.push_back(std::move(co));
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace gpuplane::alloc
