#include "alloc/request.h"

#include <optional>
#include <string_view>

#include "cel/device_env.h"
#include "util/strings.h"
#include "util/suggest.h"

namespace gpuplane::alloc {

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

absl::StatusOr<cel::Program> SelectorCache::Get(const std::string& expression) {
  auto it = programs_.find(expression);
  if (it != programs_.end()) return it->second;
  absl::StatusOr<cel::Program> p = cel::Program::Compile(expression, cel::DeviceSelectorOptions());
  if (p.ok()) programs_.emplace(expression, *p);
  return p;
}

namespace {

// The published capacity names each requested name denotes: itself, and what follows each
// '/' in it (an unqualified published name is qualified by the device's driver).
std::vector<CapacityRequest> ResolveCapacity(const std::map<std::string, api::Quantity>& requests,
                                             const model::Inventory& inventory) {
  std::vector<CapacityRequest> out;
  out.reserve(requests.size());
  for (const auto& [name, amount] : requests) {
    CapacityRequest r{{}, amount};
    std::string_view rest = name;
    while (true) {
      if (std::optional<model::CapacityId> id = inventory.FindCapacity(rest)) r.ids.push_back(*id);
      size_t slash = rest.find('/');
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Where an alternative is written, spelled out only for an error ("ResourceClaim ns/name",
// "spec.devices.requests[0].firstAvailable[1]").
struct Where {
  const std::string& ns;
  const std::string& name;
  size_t request;
  std::optional<size_t> sub;  // firstAvailable index; none: exactly
  std::string Claim() const {
    return util::Cat("ResourceClaim ", ns.empty() ? "" : ns + "/", name);
  }
  std::string Field() const {
    return sub ? util::Cat("spec.devices.requests[", request, "].firstAvailable[", *sub, "]")
               : util::Cat("spec.devices.requests[", request, "].exactly");
  }
};

absl::StatusOr<Alternative> CompileAlternative(const Where& where, std::string result_name,
                                               const api::ExactDeviceRequest& r,
                                               const model::Inventory& inventory,
                                               SelectorCache& cache) {
  Alternative alt;
  alt.result_name = std::move(result_name);
  alt.class_name = r.device_class_name;
  const api::DeviceClass* cls = inventory.FindClass(r.device_class_name);
  if (cls == nullptr) {
    return absl::NotFoundError(util::Cat(
        where.Claim(), ": ", where.Field(), ".deviceClassName: DeviceClass \"", r.device_class_name,
        "\" does not exist", util::DidYouMean(r.device_class_name, inventory.ClassNames())));
  }
  alt.class_config = !cls->spec.config.empty();
  // `in_class`: the DeviceClass's selectors (else the request's own).
  auto add = [&](const std::vector<api::DeviceSelector>& selectors, bool in_class) -> absl::Status {
    for (size_t i = 0; i < selectors.size(); ++i) {
      if (!selectors[i].cel) continue;
      const std::string& expr = selectors[i].cel->expression;
      absl::StatusOr<cel::Program> p = cache.Get(expr);
      if (!p.ok()) {
        return absl::InvalidArgumentError(util::Cat(
            where.Claim(), ": ",
            in_class ? util::Cat("DeviceClass ", cls->metadata.name, " spec") : where.Field(),
            ".selectors[", i, "].cel.expression: ", std::string(p.status().message())));
      }
      alt.selectors.push_back(Selector{*p, in_class});
    }
    return absl::OkStatus();
  };
  absl::Status s = add(cls->spec.selectors, true);
  if (!s.ok()) return s;
  s = add(r.selectors, false);
  if (!s.ok()) return s;
  alt.all = r.allocation_mode == "All";
  alt.count = r.count.value_or(0) > 0 ? *r.count : 1;  // 0 is unset, as in Kubernetes
  alt.admin_access = r.admin_access.value_or(false);
  alt.tolerations = r.tolerations;
  std::string filter_key = util::Cat(alt.admin_access ? "A" : "-", alt.class_name);
  for (const Selector& sel : alt.selectors) {
    util::Append(filter_key, "\x1f", sel.program.source());
  }
  for (const api::Toleration& t : alt.tolerations) {
    util::Append(filter_key, "\x1e", t.key, "\x1d", t.op, "\x1d", t.value, "\x1d", t.effect);
  }
  alt.filter_key = std::make_shared<const std::string>(std::move(filter_key));
  if (r.capacity) alt.capacity = r.capacity->requests;
  alt.capacity_ids = ResolveCapacity(alt.capacity, inventory);
  return alt;
}

}  // namespace

absl::StatusOr<CompiledClaim> CompileClaim(const std::string& ns, const std::string& name,
                                           const api::ResourceClaimSpec& spec,
                                           const model::Inventory& inventory,
                                           SelectorCache& cache) {
  CompiledClaim out;
  out.ns = ns;
  out.name = name;
  const std::vector<api::DeviceRequest>& requests = spec.devices.requests;
  for (size_t i = 0; i < requests.size(); ++i) {
    const api::DeviceRequest& r = requests[i];
    CompiledRequest cr;
    cr.name = r.name;
    if (r.exactly) {
      absl::StatusOr<Alternative> alt = CompileAlternative(Where{ns, name, i, std::nullopt}, r.name,
                                                           *r.exactly, inventory, cache);
      if (!alt.ok()) return alt.status();
      cr.alternatives.push_back(std::move(*alt));
    }
    for (size_t j = 0; j < r.first_available.size(); ++j) {
      const api::DeviceSubRequest& sub = r.first_available[j];
      absl::StatusOr<Alternative> alt = CompileAlternative(
          Where{ns, name, i, j}, util::Cat(r.name, "/", sub.name), sub, inventory, cache);
      if (!alt.ok()) return alt.status();
      cr.alternatives.push_back(std::move(*alt));
    }
    out.requests.push_back(std::move(cr));
  }
  for (size_t i = 0; i < spec.devices.constraints.size(); ++i) {
    const api::DeviceConstraint& c = spec.devices.constraints[i];
    CompiledConstraint cc;
    cc.distinct = c.distinct_attribute.has_value();
    cc.attribute = c.distinct_attribute.value_or(c.match_attribute.value_or(""));
    for (const std::string& ref : c.requests) {
      std::string base = ref.substr(0, ref.find('/'));  // "req/sub" constrains request "req"
      size_t k = 0;
      while (k < out.requests.size() && out.requests[k].name != base) ++k;
      if (k == out.requests.size()) {
        return absl::InvalidArgumentError(util::Cat(Where{ns, name, 0, {}}.Claim(),
                                                    ": spec.devices.constraints[", i, "]: \"", ref,
                                                    "\" names no request"));
      }
      cc.requests.emplace_back(k, ref);
    }
    if (cc.requests.empty()) {
      for (size_t k = 0; k < out.requests.size(); ++k)
        cc.requests.emplace_back(k, out.requests[k].name);
    }
    out.constraints.push_back(std::move(cc));
  }
  out.config = spec.devices.config;
  return out;
}

}  // namespace gpuplane::alloc
