#include "alloc/verifier.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "cel/device_env.h"
#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

bool Reaches(const model::Inventory& inv, model::NodeId node, model::DeviceId d) {
  const std::vector<model::DeviceId>& ds = inv.nodes()[node].devices;
  return std::find(ds.begin(), ds.end(), d) != ds.end();
}

bool Selected(const model::Inventory& inv, const Alternative& alt, model::DeviceId d) {
  cel::DeviceActivation act(
      cel::DeviceValue(inv.pools()[inv.devices()[d].pool].driver, *inv.devices()[d].spec));
  for (const Selector& s : alt.selectors) {
    cel::Value v = s.program.Evaluate(act);
    if (v.kind() != cel::Kind::kBool || !v.bool_value()) return false;
  }
  return true;
}

bool Tolerated(const Alternative& alt, const api::Taint& t) {
  if (t.effect == "None") return true;
  return std::any_of(alt.tolerations.begin(), alt.tolerations.end(), [&](const api::Toleration& x) {
    bool effect = x.effect.empty() || x.effect == t.effect;
    bool key = x.op == "Exists" ? (x.key.empty() || x.key == t.key)
                                : (x.key == t.key && x.value == t.value);
    return effect && key;
  });
}

const api::DeviceAttribute* Attribute(const model::Inventory& inv, model::DeviceId d,
                                      const std::string& qualified) {
  const api::Device& dev = *inv.devices()[d].spec;
  std::string driver = inv.pools()[inv.devices()[d].pool].driver;
  for (const auto& [key, value] : dev.attributes) {
    std::string full = key.find('/') == std::string::npos ? util::Cat(driver, "/", key) : key;
    if (full == qualified) return &value;
  }
  return nullptr;
}

// The smallest amount the device's requestPolicy allows for a request (or its default).
std::optional<api::Quantity> Allowed(const api::DeviceCapacity& cap, const api::Quantity* want) {
  if (!cap.request_policy) return want ? *want : cap.value;
  const api::CapacityRequestPolicy& p = *cap.request_policy;
  if (want == nullptr) return p.default_value ? *p.default_value : cap.value;
  if (!p.valid_values.empty()) {
    std::optional<api::Quantity> best;
    for (const api::Quantity& v : p.valid_values) {
      if (*want <= v && (!best || v < *best)) best = v;
    }
    return best;
  }
  if (p.valid_range) {
    // Walk the steps from min: simple, and only ever used on small test instances.
    api::Quantity v = p.valid_range->min;
    while (v < *want) {
      if (!p.valid_range->step) {
        v = *want;
        break;
      }
      v = *v.Add(*p.valid_range->step);
    }
    if (p.valid_range->max && *p.valid_range->max < v) return std::nullopt;
    return v;
  }
  return *want;
}

// Checks a whole allocation as Kubernetes would, one claim, request and device at a time,
// summing exclusive use, shared capacity and counters across all the claims.
class Verifier {
 public:
  Verifier(const model::Inventory& inv, const model::AllocationState& state, model::NodeId node,
           const std::vector<Choice>& choices)
      : inv_(inv), state_(state), node_(node), choices_(choices) {}

  // The first problem of claim number `c`, or "".
  std::string Claim(size_t c, const CompiledClaim& claim) {
    size_t results = 0;
    for (size_t r = 0; r < claim.requests.size(); ++r) {
      if (std::string problem = Request(c, claim, r, results); !problem.empty()) return problem;
    }
    if (results > 32) return util::Cat("claim ", claim.name, " has ", results, " results (max 32)");
    for (const CompiledConstraint& k : claim.constraints) {
      if (std::string problem = Constraint(c, claim, k); !problem.empty()) return problem;
    }
    return "";
  }

 private:
  std::string Request(size_t c, const CompiledClaim& claim, size_t r, size_t& results) {
    std::set<size_t> alts;
    std::vector<model::DeviceId> devices;
    for (const Choice& ch : choices_) {
      if (ch.claim != c || ch.request != r) continue;
      alts.insert(ch.alternative);
      devices.push_back(ch.device);
    }
    if (alts.size() != 1) {
      return util::Cat("claim ", claim.name, " request ", claim.requests[r].name, " uses ",
                       alts.size(), " alternatives");
    }
    const Alternative& alt = claim.requests[r].alternatives[*alts.begin()];
    std::set<model::DeviceId> distinct(devices.begin(), devices.end());
    for (model::DeviceId d : distinct) {
      // A shareable device may serve a request more than once (each a share of its capacity).
      const bool shareable = inv_.devices()[d].spec->allow_multiple_allocations.value_or(false);
      if (!shareable && std::count(devices.begin(), devices.end(), d) > 1) {
        return alt.result_name + " takes a device twice";
      }
    }
    if (alt.all) {
      if (std::string problem = All(alt, distinct); !problem.empty()) return problem;
    } else if (static_cast<int64_t>(devices.size()) != alt.count) {
      return util::Cat(alt.result_name, " has ", devices.size(), " devices, wants ", alt.count);
    }
    results += devices.size();
    for (model::DeviceId d : devices) {
      if (std::string problem = Device(alt, d); !problem.empty()) return problem;
    }
    return "";
  }

  // allocationMode All: exactly the node's devices that the selectors admit and that have
  // room for the request beside the state's allocations (Kubernetes' set), and no incomplete
  // pool reaching the node (its missing slices may hold more).
  std::string All(const Alternative& alt, const std::set<model::DeviceId>& distinct) const {
    std::set<model::DeviceId> matching;  // untolerated taints fail in Device()
    for (model::DeviceId d : inv_.nodes()[node_].devices) {
      if (Selected(inv_, alt, d) && RoomBefore(alt, d)) matching.insert(d);
    }
    if (matching.empty() || matching != distinct) return alt.result_name + " (All) misses devices";
    if (!inv_.nodes()[node_].incomplete_pools.empty()) {
      return alt.result_name + " (All): a pool reaching the node is incomplete";
    }
    return "";
  }

  // Whether the request's capacities exist on the device and fit beside what the state has
  // allocated: an exclusive device's values are large enough; a shareable device's policy
  // allows an amount that fits.
  bool RoomBefore(const Alternative& alt, model::DeviceId d) const { return Fits(alt, d, true); }

  // The same, beside nothing when `count_used` is false (an adminAccess request takes no
  // capacity, but what it requests must fit the device).
  bool Fits(const Alternative& alt, model::DeviceId d, bool count_used) const {
    const api::Device& spec = *inv_.devices()[d].spec;
    for (const auto& [name, q] : alt.capacity) {
      if (!spec.capacity.contains(name)) return false;
    }
    const bool shareable = spec.allow_multiple_allocations.value_or(false);
    std::span<const api::Quantity> used_by = state_.capacity_used(inv_, d);
    size_t i = 0;
    for (const auto& [name, cap] : spec.capacity) {
      auto want = alt.capacity.find(name);
      const api::Quantity* w = want == alt.capacity.end() ? nullptr : &want->second;
      api::Quantity used = count_used && i < used_by.size() ? used_by[i] : api::Quantity();
      ++i;
      if (!shareable) {
        if (w != nullptr && cap.value < *w) return false;
        continue;
      }
      std::optional<api::Quantity> amount = Allowed(cap, w);
      if (!amount || cap.value < *used.Add(*amount)) return false;
    }
    return true;
  }

  std::string Device(const Alternative& alt, model::DeviceId d) {
    const model::DeviceInfo& info = inv_.devices()[d];
    if (!Reaches(inv_, node_, d)) return alt.result_name + ": device not reachable from the node";
    if (!Selected(inv_, alt, d)) return alt.result_name + ": selectors reject " + info.spec->name;
    for (const api::Taint& t : info.spec->taints) {
      if (!Tolerated(alt, t)) return alt.result_name + ": untolerated taint on " + info.spec->name;
    }
    for (const auto& [name, q] : alt.capacity) {
      if (!info.spec->capacity.contains(name)) return alt.result_name + ": no capacity " + name;
    }
    if (alt.admin_access) {
      return Fits(alt, d, false) ? ""
                                 : alt.result_name + ": capacity too small for " + info.spec->name;
    }
    const bool shareable = info.spec->allow_multiple_allocations.value_or(false);
    std::string problem = shareable ? Shared(alt, d) : Exclusive(alt, d);
    if (!problem.empty()) return problem;
    for (const model::CounterUse& use : info.consumes) {
      api::Quantity& sum = counters_[{use.set, use.counter}];
      sum = *sum.Add(use.amount);
      if (inv_.counter_sets()[use.set].capacity[use.counter] <
          *state_.counter_used(use.set, use.counter).Add(sum)) {
        return alt.result_name + ": shared counters exceeded";
      }
    }
    return "";
  }

  std::string Exclusive(const Alternative& alt, model::DeviceId d) {
    const api::Device& spec = *inv_.devices()[d].spec;
    if (state_.in_use(d) || exclusive_[d]++ > 0) {
      return alt.result_name + ": device in use " + spec.name;
    }
    for (const auto& [name, q] : alt.capacity) {
      if (spec.capacity.at(name).value < q) return alt.result_name + ": capacity too small";
    }
    return "";
  }

  std::string Shared(const Alternative& alt, model::DeviceId d) {
    std::span<const api::Quantity> used_by = state_.capacity_used(inv_, d);
    size_t i = 0;  // used_by is in the order of the device's capacity map
    for (const auto& [name, cap] : inv_.devices()[d].spec->capacity) {
      auto want = alt.capacity.find(name);
      std::optional<api::Quantity> amount =
          Allowed(cap, want == alt.capacity.end() ? nullptr : &want->second);
      if (!amount) return alt.result_name + ": no allowed amount of " + name;
      api::Quantity& sum = capacity_[{d, name}];
      sum = *sum.Add(*amount);
      api::Quantity used = i < used_by.size() ? used_by[i] : api::Quantity();
      ++i;
      if (cap.value < *used.Add(sum)) return alt.result_name + ": shared capacity exceeded";
    }
    return "";
  }

  std::string Constraint(size_t c, const CompiledClaim& claim, const CompiledConstraint& k) const {
    std::vector<const api::DeviceAttribute*> values;
    for (const Choice& ch : choices_) {
      if (ch.claim != c) continue;
      const Alternative& alt = claim.requests[ch.request].alternatives[ch.alternative];
      bool applies = std::any_of(k.requests.begin(), k.requests.end(), [&](const auto& ref) {
        return ref.first == ch.request &&
               (ref.second == claim.requests[ch.request].name || ref.second == alt.result_name);
      });
      if (!applies) continue;
      const api::DeviceAttribute* v = Attribute(inv_, ch.device, k.attribute);
      if (v == nullptr) return "constraint on " + k.attribute + ": a device lacks it";
      values.push_back(v);
    }
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = i + 1; j < values.size(); ++j) {
        bool equal = *values[i] == *values[j];
        if (k.distinct == equal) return "constraint on " + k.attribute + " is broken";
      }
    }
    return "";
  }

  const model::Inventory& inv_;
  const model::AllocationState& state_;
  model::NodeId node_;
  const std::vector<Choice>& choices_;
  std::map<model::DeviceId, int> exclusive_;
  std::map<std::pair<model::CounterSetId, uint32_t>, api::Quantity> counters_;
  std::map<std::pair<model::DeviceId, std::string>, api::Quantity> capacity_;
};

// Kubernetes' rules for a device taken more than once in one allocation, in claim and request
// order: an ordinary request takes a device no earlier request took (adminAccess ones
// included); an adminAccess request, one its own claim has not taken. Shareable devices are
// exempt (each use is a share).
std::string Repeats(const model::Inventory& inv, const std::vector<const CompiledClaim*>& claims,
                    std::vector<Choice> choices) {
  std::stable_sort(choices.begin(), choices.end(), [](const Choice& a, const Choice& b) {
    return std::tie(a.claim, a.request) < std::tie(b.claim, b.request);
  });
  std::map<model::DeviceId, std::vector<size_t>> taken_by;  // device -> claims, in order
  for (const Choice& ch : choices) {
    if (inv.devices()[ch.device].shareable) continue;
    std::vector<size_t>& earlier = taken_by[ch.device];
    const std::string& name = inv.devices()[ch.device].spec->name;
    if (!ch.admin_access && !earlier.empty()) {
      return util::Cat("claim ", claims[ch.claim]->name, " takes device ", name,
                       ", which an earlier request of this allocation took");
    }
    if (ch.admin_access && std::find(earlier.begin(), earlier.end(), ch.claim) != earlier.end()) {
      return util::Cat("claim ", claims[ch.claim]->name, " takes device ", name, " twice");
    }
    earlier.push_back(ch.claim);
  }
  return "";
}

}  // namespace

std::string Verify(const model::Inventory& inv, const model::AllocationState& state,
                   const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                   const std::vector<Choice>& choices) {
  if (std::string problem = Repeats(inv, claims, choices); !problem.empty()) return problem;
  Verifier verifier(inv, state, node, choices);
  for (size_t c = 0; c < claims.size(); ++c) {
    if (std::string problem = verifier.Claim(c, *claims[c]); !problem.empty()) return problem;
  }
  return "";
}

namespace {

// The choice one result denotes in claim `c`, or the problem.
absl::StatusOr<Choice> ChoiceOf(const model::Inventory& inv, const CompiledClaim& claim, size_t c,
                                const api::DeviceRequestAllocationResult& r) {
  for (size_t q = 0; q < claim.requests.size(); ++q) {
    const std::vector<Alternative>& alts = claim.requests[q].alternatives;
    for (size_t a = 0; a < alts.size(); ++a) {
      if (alts[a].result_name != r.request) continue;
      std::optional<model::DeviceId> d = inv.FindDevice(r.driver, r.pool, r.device);
      if (!d) {
        return absl::NotFoundError(util::Cat("claim ", claim.name, " result ", r.request,
                                             " names device ", r.driver, "/", r.pool, "/", r.device,
                                             ", which no slice publishes"));
      }
      return Choice{.claim = c,
                    .request = q,
                    .alternative = a,
                    .device = *d,
                    .consumed = {},
                    .admin_access = r.admin_access.value_or(false)};
    }
  }
  return absl::NotFoundError(
      util::Cat("claim ", claim.name, " has a result for request ", r.request, ", which it lacks"));
}

}  // namespace

std::string VerifyResults(const model::Inventory& inv, const model::AllocationState& state,
                          const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                          const std::vector<api::AllocationResult>& results) {
  if (results.size() != claims.size()) {
    return util::Cat(results.size(), " allocation results for ", claims.size(), " claims");
  }
  std::vector<Choice> choices;
  for (size_t c = 0; c < claims.size(); ++c) {
    for (const api::DeviceRequestAllocationResult& r : results[c].devices.results) {
      absl::StatusOr<Choice> choice = ChoiceOf(inv, *claims[c], c, r);
      if (!choice.ok()) return std::string(choice.status().message());
      if (choice->admin_access !=
          claims[c]->requests[choice->request].alternatives[choice->alternative].admin_access) {
        return util::Cat("claim ", claims[c]->name, " result ", r.request,
                         " disagrees with the request on adminAccess");
      }
      choices.push_back(*choice);
    }
  }
  return Verify(inv, state, claims, node, choices);
}

}  // namespace gpuplane::alloc
