#include "alloc/verifier.h"

#include <algorithm>
#include <set>

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

}  // namespace

std::string Verify(const model::Inventory& inv, const model::AllocationState& state,
                   const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                   const std::vector<Choice>& choices) {
  std::map<model::DeviceId, int> exclusive;
  std::map<std::pair<model::CounterSetId, uint32_t>, api::Quantity> counters;
  std::map<std::pair<model::DeviceId, std::string>, api::Quantity> capacity;
  for (size_t c = 0; c < claims.size(); ++c) {
    const CompiledClaim& claim = *claims[c];
    size_t results = 0;
    for (size_t r = 0; r < claim.requests.size(); ++r) {
      std::set<size_t> alts;
      std::vector<model::DeviceId> devices;
      for (const Choice& ch : choices) {
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
      if (distinct.size() != devices.size()) return alt.result_name + " takes a device twice";
      if (alt.all) {
        std::set<model::DeviceId> matching;
        for (model::DeviceId d : inv.nodes()[node].devices) {
          bool taint_ok = std::all_of(inv.devices()[d].spec->taints.begin(),
                                      inv.devices()[d].spec->taints.end(),
                                      [&](const api::Taint& t) { return Tolerated(alt, t); });
          if (Selected(inv, alt, d) && taint_ok) matching.insert(d);
        }
        if (matching.empty() || matching != distinct)
          return alt.result_name + " (All) misses devices";
        for (model::DeviceId d : matching) {
          if (!inv.pools()[inv.devices()[d].pool].complete)
            return alt.result_name + ": incomplete pool";
        }
      } else if (static_cast<int64_t>(devices.size()) != alt.count) {
        return util::Cat(alt.result_name, " has ", devices.size(), " devices, wants ", alt.count);
      }
      results += devices.size();
      for (model::DeviceId d : devices) {
        const model::DeviceInfo& info = inv.devices()[d];
        if (!Reaches(inv, node, d)) return alt.result_name + ": device not reachable from the node";
        if (!Selected(inv, alt, d))
          return alt.result_name + ": selectors reject " + info.spec->name;
        for (const api::Taint& t : info.spec->taints) {
          if (!Tolerated(alt, t))
            return alt.result_name + ": untolerated taint on " + info.spec->name;
        }
        bool shareable = info.spec->allow_multiple_allocations.value_or(false);
        for (const auto& [name, q] : alt.capacity) {
          if (!info.spec->capacity.contains(name)) return alt.result_name + ": no capacity " + name;
        }
        if (alt.admin_access) continue;
        if (!shareable) {
          if (state.in_use(d) || exclusive[d]++ > 0)
            return alt.result_name + ": device in use " + info.spec->name;
          for (const auto& [name, q] : alt.capacity) {
            if (info.spec->capacity.at(name).value < q)
              return alt.result_name + ": capacity too small";
          }
        } else {
          for (const auto& [name, cap] : info.spec->capacity) {
            auto want = alt.capacity.find(name);
            std::optional<api::Quantity> amount =
                Allowed(cap, want == alt.capacity.end() ? nullptr : &want->second);
            if (!amount) return alt.result_name + ": no allowed amount of " + name;
            api::Quantity& sum = capacity[{d, name}];
            sum = *sum.Add(*amount);
            api::Quantity used = state.capacity_used(d).contains(name)
                                     ? state.capacity_used(d).at(name)
                                     : api::Quantity();
            if (cap.value < *used.Add(sum)) return alt.result_name + ": shared capacity exceeded";
          }
        }
        for (const model::CounterUse& use : info.consumes) {
          api::Quantity& sum = counters[{use.set, use.counter}];
          sum = *sum.Add(use.amount);
          if (inv.counter_sets()[use.set].capacity[use.counter] <
              *state.counter_used(use.set, use.counter).Add(sum)) {
            return alt.result_name + ": shared counters exceeded";
          }
        }
      }
    }
    if (results > 32) return util::Cat("claim ", claim.name, " has ", results, " results (max 32)");
    for (const CompiledConstraint& k : claim.constraints) {
      std::vector<const api::DeviceAttribute*> values;
      for (const Choice& ch : choices) {
        if (ch.claim != c) continue;
        const Alternative& alt = claim.requests[ch.request].alternatives[ch.alternative];
        bool applies = std::any_of(k.requests.begin(), k.requests.end(), [&](const auto& ref) {
          return ref.first == ch.request &&
                 (ref.second == claim.requests[ch.request].name || ref.second == alt.result_name);
        });
        if (!applies) continue;
        const api::DeviceAttribute* v = Attribute(inv, ch.device, k.attribute);
        if (v == nullptr) return "constraint on " + k.attribute + ": a device lacks it";
        values.push_back(v);
      }
      for (size_t i = 0; i < values.size(); ++i) {
        for (size_t j = i + 1; j < values.size(); ++j) {
          bool equal = *values[i] == *values[j];
          if (k.distinct == equal) return "constraint on " + k.attribute + " is broken";
        }
      }
    }
  }
  return "";
}

}  // namespace gpuplane::alloc
