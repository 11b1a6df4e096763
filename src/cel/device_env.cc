#include "cel/device_env.h"

#include <map>

#include "cel/library.h"

namespace gpuplane::cel {
namespace {

// Splits "domain/name"; unqualified names belong to the driver's domain.
std::pair<std::string, std::string> Qualify(std::string_view driver, const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return {std::string(driver), key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

Value AttributeValue(const api::DeviceAttribute& a, DeviceValueCache& cache) {
  if (a.int_value) return Value::Int(*a.int_value);
  if (a.bool_value) return Value::Bool(*a.bool_value);
  if (a.string_value) return cache.String(*a.string_value);
  if (a.version_value) return cache.Version(*a.version_value);
  return Value::Null();
}

Value DomainMap(std::map<std::string, std::vector<MapEntry>>& domains, DeviceValueCache& cache) {
  std::vector<MapEntry> entries;
  entries.reserve(domains.size());
  for (auto& [domain, names] : domains) {
    entries.push_back(MapEntry{cache.String(domain), Value::Map(std::move(names))});
  }
  return Value::MapWithEmptyDefault(std::move(entries));
}

}  // namespace

Value DeviceValueCache::String(const std::string& s) {
  auto it = strings_.find(s);
  if (it == strings_.end()) it = strings_.emplace(s, Value::String(s)).first;
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
  std::map<std::string, std::vector<MapEntry>> attrs;
  for (const auto& [key, a] : device.attributes) {
    auto [domain, name] = Qualify(driver, key);
    attrs[domain].push_back(MapEntry{c.String(name), AttributeValue(a, c)});
  }
  std::map<std::string, std::vector<MapEntry>> caps;
  for (const auto& [key, q] : device.capacity) {
    auto [domain, name] = Qualify(driver, key);
    caps[domain].push_back(MapEntry{c.String(name), c.Quantity(q.value)});
  }
  std::vector<MapEntry> fields;
  fields.reserve(4);
  fields.push_back(MapEntry{c.String("driver"), c.String(std::string(driver))});
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
