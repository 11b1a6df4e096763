#include "alloc/batch.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

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

// The claims of Pods and ResourceClaims when BuildUnits takes them, in order: moved into their
// units once the units are built (the index reads the objects' names until then).
struct Deferral {
  static constexpr size_t kMade = SIZE_MAX;
  struct Claim {
    size_t unit;
    size_t object;  // objects[object]'s claim, or kMade: made[made_index]
    size_t made_index;
  };
  std::vector<Claim> order;
  std::vector<api::ResourceClaim> made;  // from templates
};

// Adds the claim objects[i] to unit number `unit_index`, `u`: a copy, or (with `deferral`) later.
void AddClaim(const std::vector<api::SourcedObject>& objects, size_t i, size_t unit_index,
              AllocationUnit& u, Deferral* deferral) {
  if (deferral == nullptr) {
    u.claims.push_back(std::get<api::ResourceClaim>(objects[i].object));
  } else {
    deferral->order.push_back({unit_index, i, 0});
  }
}

// Adds a claim made from a template likewise.
void AddMade(api::ResourceClaim claim, size_t unit_index, AllocationUnit& u, Deferral* deferral) {
  if (deferral == nullptr) {
    u.claims.push_back(std::move(claim));
  } else {
    deferral->made.push_back(std::move(claim));
    deferral->order.push_back({unit_index, Deferral::kMade, deferral->made.size() - 1});
  }
}

// Keys are (namespace, name) views into the objects, which outlive the indexes unchanged.
using Key = std::pair<std::string_view, std::string_view>;
Key KeyOf(const api::ObjectMeta& m) { return Key(m.namespace_name, m.name); }

// What AllocationUnits looks up: templates and claims by name, and which templates and
// claims Pods use. A template is instantiated once per Pod that uses it; one that no Pod uses
// counts as one use by itself. A claim that Pods name is allocated with the first Pod that
// names it, not on its own.
struct UnitIndex {
  absl::flat_hash_map<Key, const api::ResourceClaimTemplate*> templates;
  absl::flat_hash_map<Key, size_t> claims;  // the index in the objects (the last of a name)
  bool repeated = false;                    // some claim name appears twice
  absl::flat_hash_set<Key> used_by_pods;    // templates
  std::vector<bool> named;                  // per object: a claim some Pod names

  explicit UnitIndex(const std::vector<api::SourcedObject>& objects) : named(objects.size()) {
    claims.reserve(objects.size());
    for (size_t i = 0; i < objects.size(); ++i) {
      const api::SourcedObject& o = objects[i];
      if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) {
        templates[KeyOf(t->metadata)] = t;
      } else if (const auto* c = std::get_if<api::ResourceClaim>(&o.object)) {
        auto [it, added] = claims.try_emplace(KeyOf(c->metadata), i);
        if (!added) {
          it->second = i;
          repeated = true;
        }
      }
    }
    for (const api::SourcedObject& o : objects) {
      const auto* p = std::get_if<api::Pod>(&o.object);
      if (p == nullptr) continue;
      for (const api::PodResourceClaim& rc : p->spec.resource_claims) {
        if (rc.resource_claim_template_name) {
          used_by_pods.insert(Key(p->metadata.namespace_name, *rc.resource_claim_template_name));
        }
        if (rc.resource_claim_name) {
          auto it = claims.find(Key(p->metadata.namespace_name, *rc.resource_claim_name));
          if (it != claims.end()) named[it->second] = true;
        }
      }
    }
  }

  // Whether the claim at objects[i] is named by a Pod (by its name, when names repeat).
  bool Named(size_t i, const api::ResourceClaim& c) const {
    return named[repeated ? claims.find(KeyOf(c.metadata))->second : i];
  }
};

// AllocationUnits, with each claim of `objects` copied into its unit, or (with `deferral`)
// the claims of Pods and of ResourceClaims recorded there instead.
absl::StatusOr<std::vector<AllocationUnit>> BuildUnits(
    const std::vector<api::SourcedObject>& objects, Deferral* deferral) {
  const UnitIndex index(objects);
  std::vector<AllocationUnit> units;
  std::vector<bool> allocated(objects.size());  // per claim object: allocated with a Pod
  units.reserve(objects.size());
  std::unordered_map<std::string, int> uses;
  for (size_t i = 0; i < objects.size(); ++i) {
    const api::SourcedObject& o = objects[i];
    if (const auto* c = std::get_if<api::ResourceClaim>(&o.object)) {
      if (index.Named(i, *c)) continue;
      units.push_back({{}, {}, "", &o});
      AddClaim(objects, i, units.size() - 1, units.back(), deferral);
    } else if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) {
      if (index.used_by_pods.contains(KeyOf(t->metadata))) continue;
      std::string name = util::Cat(t->metadata.name, "-", ++uses[t->metadata.name]);
      units.push_back({{FromTemplate(*t, name, "")}, {}, "", &o});
    } else if (const auto* p = std::get_if<api::Pod>(&o.object)) {
      AllocationUnit u{{}, {}, p->spec.node_name, &o};
      const std::string& ns = p->metadata.namespace_name;
      for (const api::PodResourceClaim& rc : p->spec.resource_claims) {
        if (rc.resource_claim_name) {
          auto it = index.claims.find(Key(ns, *rc.resource_claim_name));
          if (it == index.claims.end()) {
            return absl::NotFoundError(util::Cat(o.file, ":", o.line, ": ", api::Label(o.object),
                                                 ": claim \"", *rc.resource_claim_name,
                                                 "\" is not in the claims file"));
          }
          if (!allocated[it->second]) {
            allocated[it->second] = true;
            AddClaim(objects, it->second, units.size(), u, deferral);
          } else {
            u.shared.push_back(util::Cat(ns, "/", *rc.resource_claim_name));
          }
        } else {
          auto it = index.templates.find(Key(ns, rc.resource_claim_template_name.value_or("")));
          if (it == index.templates.end()) {
            return absl::NotFoundError(util::Cat(
                o.file, ":", o.line, ": ", api::Label(o.object), ": ResourceClaimTemplate \"",
                rc.resource_claim_template_name.value_or(""), "\" is not in the claims file"));
          }
          AddMade(FromTemplate(*it->second, p->metadata.name + "-" + rc.name, ns), units.size(), u,
                  deferral);
        }
      }
      units.push_back(std::move(u));
    }
  }
  return units;
}

// The units of `objects`, their claims moved out of it (it keeps the other objects; the
// claims left behind are empty).
absl::StatusOr<std::vector<AllocationUnit>> AllocationUnitsTakingClaims(
    std::vector<api::SourcedObject>& objects) {
  Deferral deferral;
  absl::StatusOr<std::vector<AllocationUnit>> units = BuildUnits(objects, &deferral);
  if (!units.ok()) return units;
  for (const Deferral::Claim& c : deferral.order) {
    (*units)[c.unit].claims.push_back(
        c.object == Deferral::kMade
            ? std::move(deferral.made[c.made_index])
            : std::move(std::get<api::ResourceClaim>(objects[c.object].object)));
  }
  return units;
}

}  // namespace

absl::StatusOr<std::vector<AllocationUnit>> AllocationUnits(
    const std::vector<api::SourcedObject>& objects) {
  return BuildUnits(objects, nullptr);
}

std::string AllocationUnit::Label() const {
  if (const auto* p = std::get_if<api::Pod>(&source->object)) {
    return util::Cat("pod ", p->metadata.namespace_name, "/", p->metadata.name);
  }
  const api::ObjectMeta& m = claims.empty() ? api::MetaOf(source->object) : claims[0].metadata;
  return util::Cat(m.namespace_name, "/", m.name);
}

namespace {

// One AllocateInOrder run: the inventory and its state, the allocator and node index, and
// where each claim allocated so far runs.
class InOrder {
 public:
  InOrder(const std::vector<api::SourcedObject>& cluster, const std::optional<std::string>& node,
          Verification verification)
      : inv_(model::Inventory::BuildBorrowingSlices(cluster)),
        state_(inv_),
        memo_(inv_),
        allocator_(inv_, AllocatorOptions{.explain = node.has_value(), .memo = &memo_}),
        verify_(verification == Verification::kVerify),
        one_node_(node.has_value()) {
    // The inventory reads the cluster's slices in place; the allocated claims apply to the state.
    out_.warnings = inv_.warnings();
    for (const std::string& p : state_.ApplyAllocatedClaims(inv_, cluster)) {
      out_.warnings.push_back(p);
    }
    index_.emplace(inv_, state_, std::vector<model::NodeId>(), &memo_);
  }

  // Errors: `node` is not among the objects.
  absl::Status Nodes(const std::optional<std::string>& node) {
    if (node) {
      std::optional<model::NodeId> n = inv_.FindNode(*node);
      if (!n)
        return absl::NotFoundError(util::Cat("node \"", *node, "\" is not among the objects"));
      nodes_.push_back(*n);
      return absl::OkStatus();
    }
    for (model::NodeId n = 0; n < inv_.nodes().size(); ++n) nodes_.push_back(n);
    return absl::OkStatus();
  }

  // Makes room for the units' claims' outcomes, and notes whether any unit shares a claim
  // (only then does the run track where claims were placed).
  void Expect(const std::vector<AllocationUnit>& units) {
    size_t claims = 0;
    for (const AllocationUnit& u : units) {
      claims += u.claims.size();
      track_placement_ = track_placement_ || !u.shared.empty();
    }
    out_.claims.reserve(claims);
  }

  // Allocates one unit and records its claims' outcomes. Errors: internal ones only.
  absl::Status Allocate(AllocationUnit& u) {
    std::span<const model::NodeId> unit_nodes(nodes_);
    model::NodeId narrowed = model::kNoId;  // the one node unit_nodes is narrowed to
    std::string shared_problem = SharedNodes(u, unit_nodes, narrowed);
    if (shared_problem.empty()) shared_problem = BoundNode(u, unit_nodes, narrowed);
    std::string problem;  // the last claim that does not compile, unless sharing failed
    CompileUnit(u, problem);
    if (!shared_problem.empty()) problem = shared_problem;
    const std::vector<const CompiledClaim*>& ptrs = ptrs_;
    Outcome outcome;
    model::NodeId chosen = model::kNoId;
    std::vector<std::string> reasons;
    if (!problem.empty()) {
      reasons.push_back(problem);
    } else {
      chosen = Place(ptrs, u, unit_nodes, outcome);
      if (chosen == model::kNoId) reasons = WhyNot(ptrs, unit_nodes);
    }
    if (chosen != model::kNoId) {
      if (absl::Status s = Commit(u, ptrs, chosen, outcome); !s.ok()) return s;
    }
    Record(u, chosen, outcome, reasons);
    return absl::OkStatus();
  }

  BatchResult& result() { return out_; }

 private:
  // Whether `n` is among `unit_nodes` (all of the inventory's nodes, or a few).
  bool Among(std::span<const model::NodeId> unit_nodes, model::NodeId n) const {
    if (unit_nodes.data() == nodes_.data() && !one_node_) return true;
    return std::find(unit_nodes.begin(), unit_nodes.end(), n) != unit_nodes.end();
  }

  // The unit's claims compiled into compiled_ (ptrs_ point at them); `problem`: the last
  // claim's that does not compile. A first claim whose spec equals the previous unit's last
  // claim's (claims of one template, or written alike, come in runs) takes over its compiled
  // form, left at the back of compiled_: only the names differ, and the spec, the classes and
  // the capacities decide the rest.
  void CompileUnit(const AllocationUnit& u, std::string& problem) {
    const bool reuse = previous_compiled_ && !u.claims.empty() &&
                       out_.claims.back().claim.spec == u.claims[0].spec;
    if (reuse) {
      if (compiled_.size() > 1) std::swap(compiled_.front(), compiled_.back());
      compiled_.resize(1);
    } else {
      compiled_.clear();
    }
    previous_compiled_ = false;
    for (size_t i = 0; i < u.claims.size(); ++i) {
      const api::ResourceClaim& c = u.claims[i];
      if (i == 0 && reuse) {
        compiled_[0].ns = c.metadata.namespace_name;
        compiled_[0].name = c.metadata.name;
        previous_compiled_ = true;
        continue;
      }
      absl::StatusOr<CompiledClaim> cc =
          CompileClaim(c.metadata.namespace_name, c.metadata.name, c.spec, inv_, cache_);
      previous_compiled_ = cc.ok();
      if (cc.ok()) {
        compiled_.push_back(std::move(*cc));
      } else {
        problem = std::string(cc.status().message());
      }
    }
    ptrs_.clear();
    for (const CompiledClaim& c : compiled_) ptrs_.push_back(&c);
  }

  // Narrows `unit_nodes` to where the claims the unit shares run (kept in `narrowed`); the
  // problem, or "".
  std::string SharedNodes(const AllocationUnit& u, std::span<const model::NodeId>& unit_nodes,
                          model::NodeId& narrowed) {
    std::string problem;
    for (const std::string& key : u.shared) {
      const std::optional<std::string>& where = placed_[key];
      if (!where) {
        problem = util::Cat(u.Label(), " shares ResourceClaim ", key,
                            " with an earlier pod, and it could not be allocated");
      } else if (!where->empty()) {
        model::NodeId n = *inv_.FindNode(*where);
        if (!Among(unit_nodes, n)) {
          problem =
              util::Cat(u.Label(), " shares ResourceClaim ", key, ", which is allocated on node ",
                        *where, ", a node this run does not consider");
        }
        narrowed = n;
        unit_nodes = std::span<const model::NodeId>(&narrowed, 1);
      }
    }
    return problem;
  }

  // Narrows `unit_nodes` to the node a Pod is bound to (spec.nodeName, kept in `narrowed`);
  // the problem, or "".
  std::string BoundNode(const AllocationUnit& u, std::span<const model::NodeId>& unit_nodes,
                        model::NodeId& narrowed) {
    if (u.node.empty()) return "";
    if (u.node != bound_name_) {  // Pods bound to one node often come in runs
      bound_name_ = u.node;
      bound_id_ = inv_.FindNode(u.node);
    }
    const std::optional<model::NodeId> n = bound_id_;
    if (!n || !Among(unit_nodes, *n)) {
      return util::Cat(u.Label(), " is bound to node ", u.node, " (spec.nodeName), which ",
                       n ? "this run does not consider" : "is not among the objects");
    }
    narrowed = *n;
    unit_nodes = std::span<const model::NodeId>(&narrowed, 1);
    return "";
  }

  // The first node that fits, in order (kNoId: none), with the allocator's outcome there.
  model::NodeId Place(const std::vector<const CompiledClaim*>& ptrs, const AllocationUnit& u,
                      std::span<const model::NodeId> unit_nodes, Outcome& outcome) {
    if (!one_node_ && u.shared.empty() && u.node.empty()) {
      // Every node in order: the index skips nodes that cannot fit (the allocator would fail
      // on them), so the first node that fits is the one the plain scan finds.
      for (size_t p = index_->FirstCandidate(ptrs, 0); p != kNoPosition;
           p = index_->FirstCandidate(ptrs, p + 1)) {
        outcome = allocator_.Allocate(ptrs, index_->order()[p], state_);
        if (outcome.allocated) return index_->order()[p];
      }
      return model::kNoId;
    }
    for (model::NodeId n : unit_nodes) {
      outcome = allocator_.Allocate(ptrs, n, state_);
      if (outcome.allocated) return n;
    }
    return model::kNoId;
  }

  // Why nothing fits: the explaining allocator's reasons on the first node.
  std::vector<std::string> WhyNot(const std::vector<const CompiledClaim*>& ptrs,
                                  std::span<const model::NodeId> unit_nodes) {
    std::vector<std::string> reasons;
    if (unit_nodes.size() > 1) {
      reasons.push_back(util::Cat("no node of ", unit_nodes.size(), " fits; on the first node:"));
    }
    if (!unit_nodes.empty()) {
      if (!explainer_)
        explainer_ = std::make_unique<Allocator>(inv_, AllocatorOptions{.memo = &memo_});
      Outcome why = explainer_->Allocate(ptrs, unit_nodes[0], state_);
      reasons.insert(reasons.end(), why.reasons.begin(), why.reasons.end());
    }
    return reasons;
  }

  absl::Status Commit(const AllocationUnit& u, const std::vector<const CompiledClaim*>& ptrs,
                      model::NodeId chosen, const Outcome& outcome) {
    if (verify_) {
      std::string problem = Verify(inv_, state_, ptrs, chosen, outcome.choices);
      if (!problem.empty()) {
        return absl::InternalError(
            util::Cat(u.Label(), ": the verifier rejects the allocation: ", problem));
      }
    }
    if (absl::Status cs = allocator_.Commit(outcome, ptrs, state_); !cs.ok()) return cs;
    for (const Choice& ch : outcome.choices) index_->Refresh(ch.device);
    return absl::OkStatus();
  }

  // Moves the unit's claims and the outcome's results into the run's result.
  void Record(AllocationUnit& u, model::NodeId chosen, Outcome& outcome,
              const std::vector<std::string>& reasons) {
    for (size_t i = 0; i < u.claims.size(); ++i) {
      ClaimOutcome& co = out_.claims.emplace_back();
      co.claim = std::move(u.claims[i]);
      co.allocated = chosen != model::kNoId;
      std::optional<std::string> where;  // for placed_: a node, "" if not node-local, or none
      if (co.allocated) {
        co.node = inv_.nodes()[chosen].name;
        if (track_placement_) where = outcome.results[i].node_selector ? co.node : "";
        co.claim.status.allocation = std::move(outcome.results[i]);
      } else {
        co.reasons = reasons;
      }
      if (track_placement_) {
        placed_[util::Cat(co.claim.metadata.namespace_name, "/", co.claim.metadata.name)] =
            std::move(where);
      }
    }
  }

  model::Inventory inv_;
  model::AllocationState state_;
  SelectorCache cache_;
  SelectorMemo memo_;  // selector results, shared by the allocators and the node index
  Allocator allocator_;
  std::unique_ptr<Allocator> explainer_;  // built on the first failure
  std::optional<NodeIndex> index_;        // built once the allocated claims are applied
  bool verify_, one_node_;
  bool track_placement_ = false;  // some unit shares a claim: placed_ is kept
  // The unit's claims compiled (the previous unit's until CompileUnit), and pointers to them.
  std::vector<CompiledClaim> compiled_;
  std::vector<const CompiledClaim*> ptrs_;
  // Whether the previous unit's last claim compiled (it is then compiled_.back(), and its
  // outcome out_.claims.back()).
  bool previous_compiled_ = false;
  std::vector<model::NodeId> nodes_;
  std::string bound_name_;  // the last spec.nodeName looked up, and its id
  std::optional<model::NodeId> bound_id_;
  // Where each claim allocated so far runs: a node, "" when not node-local, absent when it
  // could not be allocated.
  absl::flat_hash_map<std::string, std::optional<std::string>> placed_;
  BatchResult out_;
};

}  // namespace

absl::StatusOr<BatchResult> AllocateInOrder(const std::vector<api::SourcedObject>& cluster,
                                            std::vector<api::SourcedObject>& work,
                                            const std::optional<std::string>& node,
                                            Verification verification) {
  InOrder run(cluster, node, verification);
  if (absl::Status s = run.Nodes(node); !s.ok()) return s;
  absl::StatusOr<std::vector<AllocationUnit>> units = AllocationUnitsTakingClaims(work);
  if (!units.ok()) return units.status();
  run.Expect(*units);
  for (AllocationUnit& u : *units) {
    if (absl::Status s = run.Allocate(u); !s.ok()) return s;
  }
  return std::move(run.result());
}

absl::StatusOr<std::string> VerifyAllocatedClaims(std::vector<api::SourcedObject> cluster,
                                                  const std::vector<api::SourcedObject>& allocated,
                                                  const std::string& node) {
  const model::Inventory inv = model::Inventory::BuildTakingSlices(cluster);
  model::AllocationState state(inv);
  state.ApplyAllocatedClaims(inv, cluster);
  std::optional<model::NodeId> n = inv.FindNode(node);
  if (!n) return absl::NotFoundError(util::Cat("node \"", node, "\" is not among the objects"));
  SelectorCache cache;
  std::vector<CompiledClaim> compiled;
  std::vector<api::AllocationResult> results;
  for (const api::SourcedObject& o : allocated) {
    const auto* c = std::get_if<api::ResourceClaim>(&o.object);
    if (c == nullptr) continue;
    if (!c->status.allocation) {
      return absl::InvalidArgumentError(
          util::Cat(o.file, ":", o.line, ": ", api::Label(o.object), " has no status.allocation"));
    }
    absl::StatusOr<CompiledClaim> cc =
        CompileClaim(c->metadata.namespace_name, c->metadata.name, c->spec, inv, cache);
    if (!cc.ok()) return cc.status();
    compiled.push_back(std::move(*cc));
    results.push_back(*c->status.allocation);
  }
  std::vector<const CompiledClaim*> ptrs;
  ptrs.reserve(compiled.size());
  for (const CompiledClaim& c : compiled) ptrs.push_back(&c);
  return VerifyResults(inv, state, ptrs, *n, results);
}

}  // namespace gpuplane::alloc
