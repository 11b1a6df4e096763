// `gpuplane allocate`: allocates the claims of a file, in order, against the objects of a
// cluster (DeviceClasses, ResourceSlices, Nodes, already-allocated ResourceClaims), each
// allocation committed before the next is tried.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "alloc/allocator.h"
#include "api/loader.h"
#include "api/writer.h"
#include "cli/commands.h"
#include "model/allocation_state.h"
#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct AllocateOptions {
  std::vector<std::string> objects;
  std::vector<std::string> claims;
  std::string node;
  std::string output = "yaml";
};

// One unit of allocation: a claim, or all claims of a pod (allocated together).
struct Unit {
  std::string label;  // for output: "ns/name" of the claim or "pod ns/name"
  std::vector<api::ResourceClaim> claims;
};

bool PrintLoadErrors(const api::LoadResult& r) {
  for (const api::Diagnostic& d : r.diagnostics) {
    if (d.is_error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  }
  return r.errors() > 0;
}

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

std::vector<Unit> Units(const std::vector<api::SourcedObject>& objects, std::string& error) {
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
  std::map<std::string, int> uses;
  for (const api::SourcedObject& o : objects) {
    if (const auto* c = std::get_if<api::ResourceClaim>(&o.object)) {
      units.push_back({c->metadata.namespace_name + "/" + c->metadata.name, {*c}});
    } else if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&o.object)) {
      std::string name = util::Cat(t->metadata.name, "-", ++uses[t->metadata.name]);
      units.push_back({t->metadata.namespace_name + "/" + name, {FromTemplate(*t, name, "")}});
    } else if (const auto* p = std::get_if<api::Pod>(&o.object)) {
      Unit u{"pod " + p->metadata.namespace_name + "/" + p->metadata.name, {}};
      for (const api::PodResourceClaim& rc : p->spec.resource_claims) {
        std::string ns = p->metadata.namespace_name;
        if (rc.resource_claim_name) {
          auto it = claims.find(ns + "/" + *rc.resource_claim_name);
          if (it == claims.end()) {
            error = util::Cat(o.file, ":", o.line, ": ", api::Label(o.object), ": claim \"",
                              *rc.resource_claim_name, "\" is not in the claims file");
            return {};
          }
          u.claims.push_back(*it->second);
        } else {
          auto it = templates.find(ns + "/" + rc.resource_claim_template_name.value_or(""));
          if (it == templates.end()) {
            error = util::Cat(
                o.file, ":", o.line, ": ", api::Label(o.object), ": ResourceClaimTemplate \"",
                rc.resource_claim_template_name.value_or(""), "\" is not in the claims file");
            return {};
          }
          u.claims.push_back(FromTemplate(*it->second, p->metadata.name + "-" + rc.name, ns));
        }
      }
      units.push_back(std::move(u));
    }
  }
  return units;
}

nlohmann::ordered_json ResultsJson(const api::AllocationResult& a) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const api::DeviceRequestAllocationResult& r : a.devices.results) {
    nlohmann::ordered_json j = {
        {"request", r.request}, {"driver", r.driver}, {"pool", r.pool}, {"device", r.device}};
    if (r.share_id) j["shareID"] = *r.share_id;
    if (!r.consumed_capacity.empty()) {
      nlohmann::ordered_json cap = nlohmann::ordered_json::object();
      for (const auto& [k, q] : r.consumed_capacity) cap[k] = q.String();
      j["consumedCapacity"] = cap;
    }
    if (r.admin_access.value_or(false)) j["adminAccess"] = true;
    results.push_back(j);
  }
  return results;
}

int RunAllocate(const AllocateOptions& opt) {
  api::Loader objects_loader;
  for (const std::string& p : opt.objects) {
    absl::Status s = objects_loader.AddPath(p);
    if (!s.ok()) {
      std::fprintf(stderr, "gpuplane allocate: %s\n", std::string(s.message()).c_str());
      return kExitUsage;
    }
  }
  api::LoadResult objects = objects_loader.Finish();
  api::Loader claims_loader;
  for (const std::string& p : opt.claims) {
    absl::Status s = claims_loader.AddPath(p);
    if (!s.ok()) {
      std::fprintf(stderr, "gpuplane allocate: %s\n", std::string(s.message()).c_str());
      return kExitUsage;
    }
  }
  api::LoadResult claim_objects = claims_loader.Finish();
  if (PrintLoadErrors(objects) || PrintLoadErrors(claim_objects)) return kExitUsage;

  auto start = std::chrono::steady_clock::now();
  model::Inventory inv = model::Inventory::Build(objects.objects);
  for (const std::string& w : inv.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  model::AllocationState state(inv);
  for (const std::string& p : state.ApplyAllocatedClaims(inv, objects.objects)) {
    std::fprintf(stderr, "warning: %s\n", p.c_str());
  }
  std::vector<model::NodeId> nodes;
  if (!opt.node.empty()) {
    std::optional<model::NodeId> n = inv.FindNode(opt.node);
    if (!n) {
      std::fprintf(stderr, "gpuplane allocate: --node %s: no such node among the objects\n",
                   opt.node.c_str());
      return kExitUsage;
    }
    nodes.push_back(*n);
  } else {
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) nodes.push_back(n);
  }
  std::string error;
  std::vector<Unit> units = Units(claim_objects.objects, error);
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return kExitUsage;
  }
  alloc::SelectorCache cache;
  alloc::Allocator allocator(inv, alloc::AllocatorOptions{.explain = !opt.node.empty()});
  alloc::Allocator explainer(inv);
  size_t claims_total = 0, claims_allocated = 0;
  std::string yaml;
  for (Unit& u : units) {
    std::vector<alloc::CompiledClaim> compiled;
    std::string compile_error;
    for (const api::ResourceClaim& c : u.claims) {
      absl::StatusOr<alloc::CompiledClaim> cc =
          alloc::CompileClaim(c.metadata.namespace_name, c.metadata.name, c.spec, inv, cache);
      if (!cc.ok()) compile_error = std::string(cc.status().message());
      if (cc.ok()) compiled.push_back(std::move(*cc));
    }
    std::vector<const alloc::CompiledClaim*> ptrs;
    ptrs.reserve(compiled.size());
    for (const alloc::CompiledClaim& c : compiled) ptrs.push_back(&c);
    claims_total += u.claims.size();
    alloc::Outcome outcome;
    model::NodeId chosen = model::kNoId;
    if (compile_error.empty()) {
      for (model::NodeId n : nodes) {
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
      reasons = opt.node.empty() && !nodes.empty()
                    ? std::vector<std::string>{util::Cat("no node of ", nodes.size(),
                                                         " fits; on the first node:")}
                    : std::vector<std::string>{};
      if (!nodes.empty()) {
        alloc::Outcome why = explainer.Allocate(ptrs, nodes[0], state);
        reasons.insert(reasons.end(), why.reasons.begin(), why.reasons.end());
      }
    } else {
      absl::Status cs = allocator.Commit(outcome, ptrs, state);
      if (!cs.ok()) reasons.push_back(std::string(cs.message()));
      claims_allocated += u.claims.size();
    }
    for (size_t i = 0; i < u.claims.size(); ++i) {
      api::ResourceClaim& c = u.claims[i];
      std::string id = c.metadata.namespace_name + "/" + c.metadata.name;
      if (chosen != model::kNoId) c.status.allocation = outcome.results[i];
      if (opt.output == "json") {
        nlohmann::ordered_json line = {{"claim", id}, {"allocated", chosen != model::kNoId}};
        if (chosen != model::kNoId) {
          line["node"] = inv.nodes()[chosen].name;
          line["results"] = ResultsJson(outcome.results[i]);
        } else {
          line["reasons"] = reasons;
        }
        std::printf("%s\n", line.dump().c_str());
      } else {
        yaml += "---\n";
        if (chosen == model::kNoId) {
          for (const std::string& r : reasons) yaml += "# " + r + "\n";
        }
        api::AppendYaml(yaml, api::EncodeObject(c));
      }
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (opt.output == "json") {
    nlohmann::ordered_json summary = {
        {"summary",
         {{"claims", claims_total}, {"allocated", claims_allocated}, {"seconds", seconds}}}};
    std::printf("%s\n", summary.dump().c_str());
  } else {
    std::fputs(yaml.c_str(), stdout);
    std::fprintf(stderr, "%zu of %zu claims allocated in %.3f s\n", claims_allocated, claims_total,
                 seconds);
  }
  return claims_allocated == claims_total ? kExitOk : kExitProblems;
}

}  // namespace

Command AddAllocateCommand(CLI::App& app) {
  auto opt = std::make_shared<AllocateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "allocate", "Allocate ResourceClaims (and Pods' claims) against a cluster's DRA objects");
  cmd->add_option("--objects", opt->objects,
                  "Files or directories with DeviceClasses, ResourceSlices, Nodes and allocated "
                  "ResourceClaims")
      ->required();
  cmd->add_option("--claims", opt->claims,
                  "Files with ResourceClaims, ResourceClaimTemplates (one claim per use) and "
                  "Pods, allocated in order")
      ->required();
  cmd->add_option("--node", opt->node, "Allocate on this node only (and explain failures)");
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"yaml", "json"}));
  return Command{cmd, [opt] { return RunAllocate(*opt); }};
}

}  // namespace gpuplane::cli
