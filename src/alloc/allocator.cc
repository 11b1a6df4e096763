#include "alloc/allocator.h"

#include <cstdio>
#include <optional>

#include "cel/device_env.h"
#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

using model::DeviceId;

const api::DeviceAttribute* FindAttribute(const model::Inventory& inv, DeviceId d,
                                          const std::string& qualified) {
  const api::Device& dev = *inv.devices()[d].spec;
  auto it = dev.attributes.find(qualified);
  if (it != dev.attributes.end()) return &it->second;
  size_t slash = qualified.find('/');
  if (slash != std::string::npos &&
      qualified.compare(0, slash, inv.pools()[inv.devices()[d].pool].driver) == 0) {
    it = dev.attributes.find(qualified.substr(slash + 1));
    if (it != dev.attributes.end()) return &it->second;
  }
  return nullptr;
}

bool Tolerates(const std::vector<api::Toleration>& tolerations, const api::Taint& taint) {
  if (taint.effect == "None") return true;  // informational only
  for (const api::Toleration& t : tolerations) {
    if (!t.effect.empty() && t.effect != taint.effect) continue;
    if (t.op == "Exists") {
      if (t.key.empty() || t.key == taint.key) return true;
    } else if (t.key == taint.key && t.value == taint.value) {
      return true;
    }
  }
  return false;
}

// A requested capacity name ("memory" or "gpu.nvidia.com/memory") names the published one.
bool SameCapacity(const std::string& requested, const std::string& published) {
  if (requested == published) return true;
  return requested.size() > published.size() &&
         requested[requested.size() - published.size() - 1] == '/' &&
         requested.ends_with(published);
}

enum class Reject : uint8_t { kNone, kClassSelector, kRequestSelector, kTainted };

// Amount a request consumes from one capacity of a shareable device, rounded per the
// capacity's requestPolicy; nullopt when no allowed amount satisfies the request.
std::optional<api::Quantity> Consumption(const api::DeviceCapacity& cap,
                                         const api::Quantity* requested) {
  const std::optional<api::CapacityRequestPolicy>& policy = cap.request_policy;
  if (requested == nullptr) {
    return policy && policy->default_value ? *policy->default_value : cap.value;
  }
  if (!policy) return *requested;
  if (!policy->valid_values.empty()) {
    for (const api::Quantity& v : policy->valid_values) {
      if (!(v < *requested)) return v;
    }
    return std::nullopt;
  }
  if (policy->valid_range) {
    const api::CapacityRequestPolicyRange& r = *policy->valid_range;
    api::Int128 amount = std::max(requested->nano(), r.min.nano());
    if (r.step && r.step->nano() > 0) {
      api::Int128 over = amount - r.min.nano();
      api::Int128 steps = (over + r.step->nano() - 1) / r.step->nano();
      amount = r.min.nano() + steps * r.step->nano();
    }
    if (r.max && amount > r.max->nano()) return std::nullopt;
    return api::Quantity::FromNano(amount, requested->format());
  }
  return *requested;
}

class Search {
 public:
  Search(const model::Inventory& inv, const model::AllocationState& state,
         const std::vector<const CompiledClaim*>& claims, model::NodeId node,
         const AllocatorOptions& options)
      : inv_(inv), state_(state), claims_(claims), node_(node), options_(options) {
    for (size_t c = 0; c < claims.size(); ++c) {
      for (size_t r = 0; r < claims[c]->requests.size(); ++r) slots_.push_back({c, r});
    }
  }

  Outcome Run() {
    Outcome out;
    out.allocated = Solve(0);
    out.steps = steps_;
    if (out.allocated) {
      out.choices = chosen_;
      BuildResults(out);
    } else if (options_.explain) {
      Explain(out);
    } else if (fatal_) {
      out.reasons.push_back(*fatal_);
    }
    return out;
  }

 private:
  struct Slot {
    size_t claim;
    size_t request;
  };

  const Alternative& Alt(const Slot& s, size_t a) const {
    return claims_[s.claim]->requests[s.request].alternatives[a];
  }

  // Devices of the node that pass the static filters (selectors, taints), in inventory order.
  const std::vector<DeviceId>& Candidates(size_t slot, size_t alt) {
    auto key = std::make_pair(slot, alt);
    auto it = candidates_.find(key);
    if (it != candidates_.end()) return it->second;
    std::vector<DeviceId> out;
    for (DeviceId d : inv_.nodes()[node_].devices) {
      if (Classify(Alt(slots_[slot], alt), d) == Reject::kNone && !fatal_) out.push_back(d);
    }
    return candidates_.emplace(key, std::move(out)).first->second;
  }

  Reject Classify(const Alternative& alt, DeviceId d) {
    const model::DeviceInfo& info = inv_.devices()[d];
    cel::DeviceActivation act(info.cel_value);
    for (const Selector& s : alt.selectors) {
      cel::Value v = s.program.Evaluate(act);
      if (v.is_error() || v.kind() != cel::Kind::kBool) {
        if (!fatal_) {
          const model::PoolInfo& p = inv_.pools()[info.pool];
          fatal_ = util::Cat("CEL runtime error in selector \"", s.expression, "\" on device ",
                             p.driver, "/", p.name, "/", info.spec->name, ": ",
                             v.is_error() ? v.str() : "the selector did not return a bool");
        }
        return s.from_class ? Reject::kClassSelector : Reject::kRequestSelector;
      }
      if (!v.bool_value()) return s.from_class ? Reject::kClassSelector : Reject::kRequestSelector;
    }
    for (const api::Taint& t : info.spec->taints) {
      if (!Tolerates(alt.tolerations, t)) return Reject::kTainted;
    }
    return Reject::kNone;
  }

  bool Shareable(DeviceId d) const {
    return inv_.devices()[d].spec->allow_multiple_allocations.value_or(false);
  }

  bool CountersFit(DeviceId d) const {
    for (const model::CounterUse& use : inv_.devices()[d].consumes) {
      api::Quantity used = state_.counter_used(use.set, use.counter);
      auto it = counter_delta_.find({use.set, use.counter});
      if (it != counter_delta_.end()) used = *used.Add(it->second);
      absl::StatusOr<api::Quantity> after = used.Add(use.amount);
      if (!after.ok() || inv_.counter_sets()[use.set].capacity[use.counter] < *after) return false;
    }
    return true;
  }

  bool HasCapacityNames(const Alternative& alt, DeviceId d) const {
    const api::Device& dev = *inv_.devices()[d].spec;
    for (const auto& [name, q] : alt.capacity) {
      bool found = false;
      for (const auto& [cap_name, cap] : dev.capacity) {
        if (SameCapacity(name, cap_name)) found = true;
      }
      if (!found) return false;
    }
    return true;
  }

  // Capacity a choice of `d` would consume (shareable devices), or nullopt when it does not
  // fit; for other devices, checks requested capacity against the device's capacity.
  std::optional<std::map<std::string, api::Quantity>> CapacityFit(const Alternative& alt,
                                                                  DeviceId d) const {
    const api::Device& dev = *inv_.devices()[d].spec;
    std::map<std::string, api::Quantity> consumed;
    if (!HasCapacityNames(alt, d)) return std::nullopt;
    for (const auto& [cap_name, cap] : dev.capacity) {
      const api::Quantity* requested = nullptr;
      for (const auto& [name, q] : alt.capacity) {
        if (SameCapacity(name, cap_name)) requested = &q;
      }
      if (!Shareable(d)) {
        if (requested != nullptr && cap.value < *requested) return std::nullopt;
        continue;
      }
      std::optional<api::Quantity> amount = Consumption(cap, requested);
      if (!amount) return std::nullopt;
      api::Quantity used;
      auto it = state_.capacity_used(d).find(cap_name);
      if (it != state_.capacity_used(d).end()) used = it->second;
      auto dt = capacity_delta_.find({d, cap_name});
      if (dt != capacity_delta_.end()) used = *used.Add(dt->second);
      absl::StatusOr<api::Quantity> after = used.Add(*amount);
      if (!after.ok() || cap.value < *after) return std::nullopt;
      consumed[cap_name] = *amount;
    }
    return consumed;
  }

  bool InUse(DeviceId d) const {
    if (Shareable(d)) return false;
    auto it = exclusive_.find(d);
    return state_.in_use(d) || (it != exclusive_.end() && it->second > 0);
  }

  bool Applies(const CompiledConstraint& c, size_t request, const Alternative& alt) const {
    for (const auto& [index, ref] : c.requests) {
      if (index == request && (ref.find('/') == std::string::npos || ref == alt.result_name)) {
        return true;
      }
    }
    return false;
  }

  bool ConstraintsOk(const Slot& s, const Alternative& alt, DeviceId d) const {
    const CompiledClaim& claim = *claims_[s.claim];
    for (const CompiledConstraint& c : claim.constraints) {
      if (!Applies(c, s.request, alt)) continue;
      const api::DeviceAttribute* mine = FindAttribute(inv_, d, c.attribute);
      if (mine == nullptr) return false;  // a device lacking the attribute violates it
      for (const Choice& ch : chosen_) {
        if (ch.claim != s.claim) continue;
        const Alternative& other =
            claims_[ch.claim]->requests[ch.request].alternatives[ch.alternative];
        if (!Applies(c, ch.request, other)) continue;
        const api::DeviceAttribute* theirs = FindAttribute(inv_, ch.device, c.attribute);
        if (theirs == nullptr) return false;
        if (c.distinct ? *mine == *theirs : !(*mine == *theirs)) return false;
      }
    }
    return true;
  }

  // Tries to take `d` for the slot; false when it is unavailable or breaks a constraint.
  bool Take(size_t slot, size_t alt_index, DeviceId d) {
    const Slot& s = slots_[slot];
    const Alternative& alt = Alt(s, alt_index);
    if (!alt.admin_access && (InUse(d) || !CountersFit(d))) return false;
    // Admin access neither uses the device nor consumes its capacity; the requested capacity
    // names must still exist on it.
    std::optional<std::map<std::string, api::Quantity>> consumed =
        alt.admin_access
            ? (HasCapacityNames(alt, d) ? std::make_optional(std::map<std::string, api::Quantity>{})
                                        : std::nullopt)
            : CapacityFit(alt, d);
    if (!consumed || !ConstraintsOk(s, alt, d)) return false;
    if (!alt.admin_access) {
      for (const model::CounterUse& use : inv_.devices()[d].consumes) {
        api::Quantity& slot_delta = counter_delta_[{use.set, use.counter}];
        slot_delta = *slot_delta.Add(use.amount);
      }
      if (Shareable(d)) {
        for (const auto& [name, q] : *consumed) {
          api::Quantity& cd = capacity_delta_[{d, name}];
          cd = *cd.Add(q);
        }
      } else {
        ++exclusive_[d];
      }
    }
    chosen_.push_back(Choice{s.claim, s.request, alt_index, d, std::move(*consumed)});
    return true;
  }

  void Untake() {
    const Choice ch = chosen_.back();
    chosen_.pop_back();
    const Alternative& alt = claims_[ch.claim]->requests[ch.request].alternatives[ch.alternative];
    if (alt.admin_access) return;
    for (const model::CounterUse& use : inv_.devices()[ch.device].consumes) {
      api::Quantity& slot_delta = counter_delta_[{use.set, use.counter}];
      slot_delta = *slot_delta.Sub(use.amount);
    }
    if (Shareable(ch.device)) {
      for (const auto& [name, q] : ch.consumed) {
        api::Quantity& cd = capacity_delta_[{ch.device, name}];
        cd = *cd.Sub(q);
      }
    } else {
      --exclusive_[ch.device];
    }
  }

  bool Stop() const { return fatal_.has_value() || exhausted_; }

  bool Solve(size_t slot) {
    if (slot == slots_.size()) {  // at most 32 results per claim
      std::vector<size_t> per_claim(claims_.size(), 0);
      for (const Choice& ch : chosen_) {
        if (++per_claim[ch.claim] > 32) return false;
      }
      return true;
    }
    const Slot& s = slots_[slot];
    const CompiledRequest& req = claims_[s.claim]->requests[s.request];
    for (size_t a = 0; a < req.alternatives.size() && !Stop(); ++a) {
      const Alternative& alt = req.alternatives[a];
      const std::vector<DeviceId>& cands = Candidates(slot, a);
      if (Stop()) return false;
      if (alt.all) {
        if (cands.empty()) continue;
        bool complete = true;
        for (DeviceId d : cands)
          complete = complete && inv_.pools()[inv_.devices()[d].pool].complete;
        if (!complete) continue;
        size_t taken = 0;
        for (DeviceId d : cands) {
          if (!Take(slot, a, d)) break;
          ++taken;
        }
        if (taken == cands.size() && taken <= 32 && Solve(slot + 1)) return true;
        for (size_t i = 0; i < taken; ++i) Untake();
        continue;
      }
      if (alt.count > 32 || static_cast<int64_t>(cands.size()) < alt.count) continue;
      if (!alt.admin_access) {  // prune before trying combinations
        int64_t free = 0;
        for (DeviceId d : cands) free += InUse(d) ? 0 : 1;
        if (free < alt.count) continue;
      }
      if (Choose(slot, a, cands, 0, alt.count)) return true;
    }
    return false;
  }

  bool Choose(size_t slot, size_t a, const std::vector<DeviceId>& cands, size_t start,
              int64_t remaining) {
    if (remaining == 0) return Solve(slot + 1);
    for (size_t i = start; i + static_cast<size_t>(remaining) <= cands.size(); ++i) {
      if (++steps_ > options_.max_steps) {
        exhausted_ = true;
        return false;
      }
      if (!Take(slot, a, cands[i])) continue;
      if (Choose(slot, a, cands, i + 1, remaining - 1)) return true;
      Untake();
      if (Stop()) return false;
    }
    return false;
  }

  void BuildResults(Outcome& out) const {
    out.results.resize(claims_.size());
    for (size_t c = 0; c < claims_.size(); ++c) {
      api::AllocationResult& r = out.results[c];
      std::vector<std::pair<std::string, std::vector<std::string>>> classes;  // class -> requests
      bool node_local = false;
      for (size_t i = 0; i < chosen_.size(); ++i) {
        const Choice& ch = chosen_[i];
        if (ch.claim != c) continue;
        const Alternative& alt = claims_[c]->requests[ch.request].alternatives[ch.alternative];
        const model::DeviceInfo& info = inv_.devices()[ch.device];
        const model::PoolInfo& pool = inv_.pools()[info.pool];
        api::DeviceRequestAllocationResult res;
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
          res.consumed_capacity = ch.consumed;
        }
        node_local = node_local || info.node != model::kNoId;
        r.devices.results.push_back(std::move(res));
        auto it = std::find_if(classes.begin(), classes.end(),
                               [&](const auto& p) { return p.first == alt.class_name; });
        if (it == classes.end()) {
          classes.emplace_back(alt.class_name, std::vector<std::string>{alt.result_name});
        } else if (std::find(it->second.begin(), it->second.end(), alt.result_name) ==
                   it->second.end()) {
          it->second.push_back(alt.result_name);
        }
      }
      for (const auto& [cls, requests] : classes) {  // FromClass entries come first
        const api::DeviceClass* dc = inv_.FindClass(cls);
        for (const api::DeviceClassConfiguration& cfg : dc->spec.config) {
          r.devices.config.push_back(
              api::DeviceAllocationConfiguration{"FromClass", requests, cfg.opaque});
        }
      }
      for (const api::DeviceClaimConfiguration& cfg : claims_[c]->config) {
        r.devices.config.push_back(
            api::DeviceAllocationConfiguration{"FromClaim", cfg.requests, cfg.opaque});
      }
      if (node_local) {
        api::NodeSelectorTerm term;
        term.match_fields.push_back({"metadata.name", "In", {inv_.nodes()[node_].name}});
        r.node_selector = api::NodeSelector{{term}};
      }
    }
  }

  // Why nothing fit: per request alternative, what filtered the node's devices.
  void Explain(Outcome& out) {
    const std::string& node = inv_.nodes()[node_].name;
    if (fatal_) out.reasons.push_back(*fatal_);
    if (exhausted_) {
      out.reasons.push_back(
          util::Cat("search effort exhausted after ", steps_, " steps on node ", node));
    }
    for (size_t slot = 0; slot < slots_.size(); ++slot) {
      const Slot& s = slots_[slot];
      const CompiledClaim& claim = *claims_[s.claim];
      const CompiledRequest& req = claim.requests[s.request];
      for (size_t a = 0; a < req.alternatives.size(); ++a) {
        const Alternative& alt = req.alternatives[a];
        int cls = 0, sel = 0, tainted = 0, in_use = 0, counters = 0, capacity = 0, ok = 0;
        for (DeviceId d : inv_.nodes()[node_].devices) {
          switch (Classify(alt, d)) {
            case Reject::kClassSelector:
              ++cls;
              continue;
            case Reject::kRequestSelector:
              ++sel;
              continue;
            case Reject::kTainted:
              ++tainted;
              continue;
            case Reject::kNone:
              break;
          }
          if (!alt.admin_access && InUse(d)) {
            ++in_use;
          } else if (!alt.admin_access && !CountersFit(d)) {
            ++counters;
          } else if (!CapacityFit(alt, d)) {
            ++capacity;
          } else {
            ++ok;
          }
        }
        std::string want = alt.all ? "all matching devices" : util::Cat(alt.count, " device(s)");
        out.reasons.push_back(util::Cat(
            "ResourceClaim ", claim.ns.empty() ? "" : claim.ns + "/", claim.name, " request ",
            alt.result_name, " (", alt.class_name, ", ", want, ") on node ", node, ": of ",
            inv_.nodes()[node_].devices.size(), " devices, ", cls,
            " rejected by the class selectors, ", sel, " by the request selectors, ", tainted,
            " tainted, ", in_use, " in use, ", counters, " lacked shared counters, ", capacity,
            " lacked capacity; ", ok, " available"));
        if (!alt.all && ok >= alt.count && !claim.constraints.empty()) {
          for (const CompiledConstraint& c : claim.constraints) {
            if (Applies(c, s.request, alt)) {
              out.reasons.push_back(
                  util::Cat("  enough devices are available, but no choice meets ",
                            c.distinct ? "distinctAttribute " : "matchAttribute ", c.attribute));
            }
          }
        }
      }
    }
  }

  const model::Inventory& inv_;
  const model::AllocationState& state_;
  const std::vector<const CompiledClaim*>& claims_;
  model::NodeId node_;
  AllocatorOptions options_;
  std::vector<Slot> slots_;
  std::map<std::pair<size_t, size_t>, std::vector<DeviceId>> candidates_;
  std::vector<Choice> chosen_;
  std::map<std::pair<model::CounterSetId, uint32_t>, api::Quantity> counter_delta_;
  std::map<std::pair<DeviceId, std::string>, api::Quantity> capacity_delta_;
  std::map<DeviceId, int> exclusive_;
  std::optional<std::string> fatal_;
  bool exhausted_ = false;
  int64_t steps_ = 0;
};

}  // namespace

Outcome Allocator::Allocate(const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                            const model::AllocationState& state) const {
  if (node >= inventory_.nodes().size()) {
    Outcome out;
    out.reasons.push_back(util::Cat("node id ", node, " is not in the inventory"));
    return out;
  }
  return Search(inventory_, state, claims, node, options_).Run();
}

absl::Status Allocator::Commit(const Outcome& outcome,
                               const std::vector<const CompiledClaim*>& claims,
                               model::AllocationState& state) const {
  for (const Choice& ch : outcome.choices) {
    const Alternative& alt = claims[ch.claim]->requests[ch.request].alternatives[ch.alternative];
    if (alt.admin_access) continue;
    absl::Status s = state.Allocate(inventory_, ch.device, ch.consumed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gpuplane::alloc
