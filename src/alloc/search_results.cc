#include "alloc/search.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "util/strings.h"

namespace gpuplane::alloc {

using model::DeviceId;

void Search::BuildResults(Outcome& out) const {
  out.results.resize(claims_.size());
  for (size_t c = 0; c < claims_.size(); ++c) {
    api::AllocationResult& r = out.results[c];
    // class -> its requests' result names (borrowed from the compiled claim)
    std::vector<std::pair<const std::string*, std::vector<const std::string*>>> classes;
    bool node_local = false;
    for (size_t i = 0; i < chosen_.size(); ++i) {
      const Choice& ch = chosen_[i];
      if (ch.claim != c) continue;
      const Alternative& alt = claims_[c]->requests[ch.request].alternatives[ch.alternative];
      const model::DeviceInfo& info = inv_.devices()[ch.device];
      const model::PoolInfo& pool = inv_.pools()[info.pool];
      api::DeviceRequestAllocationResult& res = r.devices.results.emplace_back();
      res.request = alt.result_name;
      res.driver = pool.driver;
      res.pool = pool.name;
      res.device = info.spec->name;
      if (alt.admin_access) res.admin_access = true;
      res.tolerations = alt.tolerations;
      if (Shareable(ch.device) && !alt.admin_access) {
        char id[32];
        std::snprintf(id, sizeof id, "%08x",
                      static_cast<unsigned>(std::hash<std::string>{}(util::Cat(
                          claims_[c]->ns, "/", claims_[c]->name, "/", alt.result_name, "/", i))));
        res.share_id = id;
        for (size_t k = 0; k < ch.consumed.size(); ++k) {
          res.consumed_capacity[inv_.capacity_names()[info.capacity[k].id]] = ch.consumed[k];
        }
      }
      node_local = node_local || info.node != model::kNoId;
      if (!alt.class_config) continue;
      auto it = std::find_if(classes.begin(), classes.end(),
                             [&](const auto& p) { return *p.first == alt.class_name; });
      if (it == classes.end()) {
        classes.emplace_back(&alt.class_name, std::vector<const std::string*>{&alt.result_name});
      } else if (std::none_of(it->second.begin(), it->second.end(),
                              [&](const std::string* n) { return *n == alt.result_name; })) {
        it->second.push_back(&alt.result_name);
      }
    }
    for (const auto& [cls, requests] : classes) {  // FromClass entries come first
      const api::DeviceClass* dc = inv_.FindClass(*cls);
      std::vector<std::string> names;
      names.reserve(requests.size());
      for (const std::string* n : requests) names.push_back(*n);
      for (const api::DeviceClassConfiguration& cfg : dc->spec.config) {
        r.devices.config.push_back(
            api::DeviceAllocationConfiguration{"FromClass", names, cfg.opaque});
      }
    }
    for (const api::DeviceClaimConfiguration& cfg : claims_[c]->config) {
      r.devices.config.push_back(
          api::DeviceAllocationConfiguration{"FromClaim", cfg.requests, cfg.opaque});
    }
    if (node_local) {
      api::NodeSelectorRequirement& field =
          r.node_selector.emplace().node_selector_terms.emplace_back().match_fields.emplace_back();
      field.key = "metadata.name";
      field.op = "In";
      field.values.push_back(inv_.nodes()[node_].name);
    }
  }
}

void Search::Explain(Outcome& out) {
  const std::string& node = inv_.nodes()[node_].name;
  if (fatal_) out.reasons.push_back(*fatal_);
  if (exhausted_) {
    out.reasons.push_back(
        util::Cat("search effort exhausted after ", steps_, " steps on node ", node));
  }
  for (const CompiledClaim* claim : claims_) TooManyResults(*claim, out);
  for (const Slot& s : slots_) {
    const CompiledClaim& claim = *claims_[s.claim];
    for (const Alternative& alt : claim.requests[s.request].alternatives) {
      ExplainAlternative(claim, s.request, alt, out);
    }
  }
}

void Search::TooManyResults(const CompiledClaim& claim, Outcome& out) {
  int64_t least = 0;  // the fewest results the claim's requests can have
  for (const CompiledRequest& req : claim.requests) {
    int64_t fewest = INT64_MAX;
    for (const Alternative& alt : req.alternatives) {
      fewest = std::min(fewest, alt.all ? 1 : alt.count);
    }
    least += fewest;
  }
  if (least > 32) {
    out.reasons.push_back(util::Cat("ResourceClaim ", claim.ns, "/", claim.name,
                                    " asks for at least ", least,
                                    " devices, more than 32 results per claim"));
  }
}

Search::Tally Search::Count(const Alternative& alt) {
  Tally t;
  Entries entries = EntriesOf(alt);
  for (DeviceId d : inv_.nodes()[node_].devices) {
    switch (Classify(alt, entries, d)) {
      case Reject::kClassSelector:
        ++t.cls;
        continue;
      case Reject::kRequestSelector:
        ++t.sel;
        continue;
      case Reject::kTainted:
        ++t.tainted;
        continue;
      case Reject::kFiltered:
        ++t.filtered;
        continue;
      case Reject::kNone:
        break;
    }
    if (!alt.admin_access && InUse(d)) {
      ++t.in_use;
    } else if (!alt.admin_access && !CountersFit(d)) {
      ++t.counters;
    } else if (!CapacityFit(alt, d)) {
      ++t.capacity;
    } else {
      ++t.ok;
    }
  }
  return t;
}

void Search::ExplainIncompletePools(Outcome& out) const {
  for (model::PoolId p : inv_.nodes()[node_].incomplete_pools) {
    const model::PoolInfo& pool = inv_.pools()[p];
    out.reasons.push_back(util::Cat("  pool ", pool.driver, "/", pool.name,
                                    " is being updated (not all its ResourceSlices of generation ",
                                    pool.generation,
                                    " are published): all matching devices "
                                    "cannot be known; retry when it is complete"));
  }
}

void Search::ExplainAlternative(const CompiledClaim& claim, size_t request, const Alternative& alt,
                                Outcome& out) {
  const Tally t = Count(alt);
  std::string want = alt.all ? "all matching devices" : util::Cat(alt.count, " device(s)");
  out.reasons.push_back(util::Cat(
      "ResourceClaim ", claim.ns.empty() ? "" : claim.ns + "/", claim.name, " request ",
      alt.result_name, " (", alt.class_name, ", ", want, ") on node ", inv_.nodes()[node_].name,
      ": of ", inv_.nodes()[node_].devices.size(), " devices, ", t.cls,
      " rejected by the class selectors, ", t.sel, " by the request selectors, ", t.tainted,
      " tainted, ", filter_ == nullptr ? "" : util::Cat(t.filtered, " ", filter_->Describe(), ", "),
      t.in_use, " in use, ", t.counters, " lacked shared counters, ", t.capacity,
      " lacked capacity; ", t.ok, " available"));
  const int matching = t.in_use + t.counters + t.capacity + t.ok;
  if (alt.all && matching > 32) {
    out.reasons.push_back(util::Cat("  all matching devices would be ", matching,
                                    " results, more than 32 results per claim"));
  }
  if (alt.all) ExplainIncompletePools(out);
  if (alt.all || t.ok < alt.count) return;
  for (const CompiledConstraint& c : claim.constraints) {
    if (Applies(c, request, alt)) {
      out.reasons.push_back(util::Cat("  enough devices are available, but no choice meets ",
                                      c.distinct ? "distinctAttribute " : "matchAttribute ",
                                      c.attribute));
    }
  }
}

}  // namespace gpuplane::alloc
