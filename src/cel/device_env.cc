#include "cel/device_env.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "cel/library.h"

namespace gpuplane::cel {
namespace {

// Splits "domain/name"; unqualified names belong to the driver's domain.
std::pair<std::string_view, std::string_view> Qualify(std::string_view driver,
                                                      std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return {driver, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// Entries per domain, the domains in name order (as a std::map would keep them); a device has
// one or two domains, so a short vector searched linearly.
using Domains = std::vector<std::pair<std::string_view, std::vector<MapEntry>>>;

std::vector<MapEntry>& DomainOf(Domains& domains, std::string_view domain) {
  for (auto& [name, entries] : domains) {
    if (name == domain) return entries;
  }
  return domains.emplace_back(domain, std::vector<MapEntry>()).second;
}

Value AttributeValue(const api::DeviceAttribute& a, DeviceValueCache& cache) {
  if (a.int_value) return Value::Int(*a.int_value);
  if (a.bool_value) return Value::Bool(*a.bool_value);
  if (a.string_value) return cache.String(*a.string_value);
  if (a.version_value) return cache.Version(*a.version_value);
  return Value::Null();
}

Value DomainMap(Domains& domains, DeviceValueCache& cache) {
  std::sort(domains.begin(), domains.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MapEntry> entries;
  entries.reserve(domains.size());
  for (auto& [domain, names] : domains) {
    entries.push_back(MapEntry{cache.String(domain), Value::Map(std::move(names))});
  }
  return Value::MapWithEmptyDefault(std::move(entries));
}

}  // namespace

Value DeviceValueCache::String(std::string_view s) {
  auto it = strings_.find(s);
  if (it == strings_.end())
    it = strings_.emplace(std::string(s), Value::String(std::string(s))).first;
  return it->second;
}

Value DeviceValueCache::Version(const std::string& v) {
  auto it = versions_.find(v);
  if (it == versions_.end()) {
    Value parsed = ParseSemver(v, SemverParse::kStrict);
    it = versions_.emplace(v, parsed.is_error() ? Value::String(v) : parsed).first;
  }
  return it->second;
}

Value DeviceValueCache::Quantity(const api::Quantity& q) {
  std::string key = q.String();
  auto it = quantities_.find(key);
  if (it == quantities_.end()) it = quantities_.emplace(std::move(key), Value::Quantity(q)).first;
  return it->second;
}

Value DeviceValue(std::string_view driver, const api::Device& device, DeviceValueCache* cache) {
  DeviceValueCache local;
  DeviceValueCache& c = cache != nullptr ? *cache : local;
  Domains attrs;
  for (const auto& [key, a] : device.attributes) {
    auto [domain, name] = Qualify(driver, key);
    DomainOf(attrs, domain).push_back(MapEntry{c.String(name), AttributeValue(a, c)});
  }
  Domains caps;
  for (const auto& [key, q] : device.capacity) {
    auto [domain, name] = Qualify(driver, key);
    DomainOf(caps, domain).push_back(MapEntry{c.String(name), c.Quantity(q.value)});
  }
  std::vector<MapEntry> fields;
  fields.reserve(4);
  fields.push_back(MapEntry{c.String("driver"), c.String(driver)});
  fields.push_back(MapEntry{c.String("attributes"), DomainMap(attrs, c)});
  fields.push_back(MapEntry{c.String("capacity"), DomainMap(caps, c)});
  fields.push_back(MapEntry{c.String("allowMultipleAllocations"),
                            Value::Bool(device.allow_multiple_allocations.value_or(false))});
  return Value::Map(std::move(fields));
}

CompileOptions DeviceSelectorOptions() {
  CompileOptions options;
  options.variables = {"device"};
  options.dra_device = true;
  return options;
}

}  // namespace gpuplane::cel
