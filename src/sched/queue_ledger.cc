#include "sched/queue_ledger.h"

#include <cctype>
#include <cmath>
#include <string_view>
#include <utility>

#include "util/strings.h"

namespace gpuplane::sched {
namespace {

constexpr std::string_view kGpuModelPrefix = "gpu/";
constexpr std::string_view kClassPrefix = "deviceclass/";

bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// The attribute `name`, written with or without its domain.
const api::DeviceAttribute* Attribute(const api::Device& d, std::string_view name) {
  for (const auto& [key, value] : d.attributes) {
    const size_t slash = key.rfind('/');
    if (std::string_view(key).substr(slash == std::string::npos ? 0 : slash + 1) == name) {
      return &value;
    }
  }
  return nullptr;
}

// The GPU's product name; nullopt when the device is not a whole GPU.
std::optional<std::string> GpuProduct(const api::Device& d) {
  const api::DeviceAttribute* type = Attribute(d, "type");
  const api::DeviceAttribute* product = Attribute(d, "productName");
  if (type != nullptr && (!type->string_value || *type->string_value != "gpu")) return std::nullopt;
  if (type == nullptr && (product == nullptr || !product->string_value)) return std::nullopt;
  return product != nullptr && product->string_value ? *product->string_value : "";
}

bool ModelMatches(std::string_view product, std::string_view model) {
  if (EqualFold(product, model)) return true;
  size_t start = 0;
  while (start <= product.size()) {
    size_t end = product.find_first_of(" -_", start);
    if (end == std::string_view::npos) end = product.size();
    if (EqualFold(product.substr(start, end - start), model)) return true;
    start = end + 1;
  }
  return false;
}

// The DeviceClass of the request (or "request/subrequest") a result names; "" if not found.
std::string ClassOf(const api::ResourceClaim& claim, std::string_view result_request) {
  const size_t slash = result_request.find('/');
  const std::string_view name = result_request.substr(0, slash);
  for (const api::DeviceRequest& r : claim.spec.devices.requests) {
    if (r.name != name) continue;
    if (slash == std::string_view::npos) return r.exactly ? r.exactly->device_class_name : "";
    for (const api::DeviceSubRequest& s : r.first_available) {
      if (s.name == result_request.substr(slash + 1)) return s.device_class_name;
    }
  }
  return "";
}

std::string Amount(std::string_view key, double v) {
  if (key == "memory") return util::Cat(util::Fixed(v / (1024.0 * 1024 * 1024), 1), " GiB");
  return std::floor(v) == v ? util::Cat(static_cast<int64_t>(v)) : util::Fixed(v, 3);
}

}  // namespace

QueueLedger::QueueLedger(const QueueTree& tree, const model::Inventory& inventory)
    : tree_(tree), inv_(inventory), used_(tree.queues().size()), devices_(tree.queues().size()) {
  for (const QueueNode& q : tree_.queues()) {
    for (const auto& [key, resource] : q.resources) {
      if (!resource.limit) continue;
      limited_.insert(key);
      if (std::string_view(key).substr(0, kGpuModelPrefix.size()) == kGpuModelPrefix) {
        models_.push_back(key.substr(kGpuModelPrefix.size()));
      }
    }
  }
}

void QueueLedger::AddDevice(const std::string& device_class, model::DeviceId d,
                            std::map<std::string, double>& into) const {
  const std::string by_class = util::Cat(kClassPrefix, device_class);
  if (limited_.count(by_class) > 0) into[by_class] += 1;
  std::optional<std::string> product = GpuProduct(*inv_.devices()[d].spec);
  if (!product) return;
  if (limited_.count("gpu") > 0) into["gpu"] += 1;
  for (const std::string& m : models_) {
    if (ModelMatches(*product, m)) into[util::Cat(kGpuModelPrefix, m)] += 1;
  }
}

QueueCharge QueueLedger::Sum(const std::vector<std::pair<const PodInfo*, int>>& pods,
                             const PerClaim& per_claim) const {
  QueueCharge out;
  for (const auto& [pod, queue] : pods) {
    if (queue < 0) continue;
    std::map<std::string, double>& into = out.amounts[queue];
    if (limited_.count("cpu") > 0) into["cpu"] += static_cast<double>(pod->cpu_milli) / 1000;
    if (limited_.count("memory") > 0) into["memory"] += static_cast<double>(pod->memory_bytes);
    for (const ClaimUse& u : pod->claims) per_claim(u, queue, into, out);
  }
  return out;
}

QueueCharge QueueLedger::ChargeOf(const std::vector<std::pair<const PodInfo*, int>>& pods,
                                  const Snapshot& snap) const {
  return Sum(pods, [&](const ClaimUse& u, int queue, std::map<std::string, double>& into,
                       QueueCharge& out) {
    const ClaimAllocation* c = snap.claim(u.key);
    if (c == nullptr || charged_claims_.count(u.key) > 0 || !out.claims.insert(u.key).second) {
      return;
    }
    for (const api::DeviceRequestAllocationResult& r : c->result.devices.results) {
      if (r.admin_access.value_or(false)) continue;
      out.devices[queue] += 1;
      std::optional<model::DeviceId> d = inv_.FindDevice(r.driver, r.pool, r.device);
      if (d) AddDevice(ClassOf(*u.claim, r.request), *d, into);
    }
  });
}

QueueCharge QueueLedger::DemandOf(const std::vector<std::pair<const PodInfo*, int>>& pods,
                                  const Snapshot& snap) const {
  QueueCharge out =
      Sum(pods, [&](const ClaimUse& u, int, std::map<std::string, double>& into, QueueCharge& sum) {
        if (snap.claim(u.key) != nullptr || !sum.claims.insert(u.key).second) return;
        for (const api::DeviceRequest& r : u.claim->spec.devices.requests) {
          if (!r.exactly || r.exactly->admin_access.value_or(false) ||
              (!r.exactly->allocation_mode.empty() && r.exactly->allocation_mode != "ExactCount")) {
            continue;
          }
          const std::string key = util::Cat(kClassPrefix, r.exactly->device_class_name);
          if (limited_.count(key) > 0)
            into[key] += static_cast<double>(r.exactly->count.value_or(1));
        }
      });
  out.claims.clear();  // nothing is charged by a demand
  return out;
}

std::optional<Status> QueueLedger::OverLimit(const QueueCharge& add) const {
  // What the charge adds to each queue on the leaves' paths.
  std::map<int, std::map<std::string, double>> total;
  for (const auto& [leaf, amounts] : add.amounts) {
    for (int q = leaf; q >= 0; q = tree_.queues()[q].parent) {
      for (const auto& [key, v] : amounts) total[q][key] += v;
    }
  }
  for (const auto& [q, amounts] : total) {
    const QueueNode& node = tree_.queues()[q];
    for (const auto& [key, v] : amounts) {
      auto r = node.resources.find(key);
      if (v <= 0 || r == node.resources.end() || !r->second.limit) continue;
      const double limit = r->second.limit->AsApproximateFloat();
      auto u = used_[q].find(key);
      const double used = u != used_[q].end() ? u->second : 0;
      if (used + v <= limit * (1 + 1e-12)) continue;
      return Status::Of(Code::kUnschedulable, Stage::kQueue,
                        util::Cat("queue ", node.name, " would go over its limit for ", key, ": ",
                                  Amount(key, used), " of ", Amount(key, limit),
                                  " in use, and this work needs ", Amount(key, v), " more"));
    }
  }
  return std::nullopt;
}

void QueueLedger::Apply(const QueueCharge& c, double sign) {
  for (const auto& [leaf, n] : c.devices) devices_[leaf] += sign * n;
  for (const auto& [leaf, amounts] : c.amounts) {
    for (int q = leaf; q >= 0; q = tree_.queues()[q].parent) {
      for (const auto& [key, v] : amounts) used_[q][key] += sign * v;
    }
  }
}

void QueueLedger::Charge(const QueueCharge& c) {
  Apply(c, 1);
  charged_claims_.insert(c.claims.begin(), c.claims.end());
}

void QueueLedger::Refund(const QueueCharge& c) {
  Apply(c, -1);
  for (const std::string& claim : c.claims) charged_claims_.erase(claim);
}

}  // namespace gpuplane::sched
