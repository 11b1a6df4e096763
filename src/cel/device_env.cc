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

Value AttributeValue(const api::DeviceAttribute& a) {
  if (a.int_value) return Value::Int(*a.int_value);
  if (a.bool_value) return Value::Bool(*a.bool_value);
  if (a.string_value) return Value::String(*a.string_value);
  if (a.version_value) {
    Value v = ParseSemver(*a.version_value, false);
    return v.is_error() ? Value::String(*a.version_value) : v;
  }
  return Value::Null();
}

Value DomainMap(std::map<std::string, std::vector<MapEntry>>& domains) {
  std::vector<MapEntry> entries;
  entries.reserve(domains.size());
  for (auto& [domain, names] : domains) {
    entries.push_back(MapEntry{Value::String(domain), Value::Map(std::move(names))});
  }
  return Value::MapWithEmptyDefault(std::move(entries));
}

}  // namespace

Value DeviceValue(std::string_view driver, const api::Device& device) {
  std::map<std::string, std::vector<MapEntry>> attrs;
  for (const auto& [key, a] : device.attributes) {
    auto [domain, name] = Qualify(driver, key);
    attrs[domain].push_back(MapEntry{Value::String(name), AttributeValue(a)});
  }
  std::map<std::string, std::vector<MapEntry>> caps;
  for (const auto& [key, c] : device.capacity) {
    auto [domain, name] = Qualify(driver, key);
    caps[domain].push_back(MapEntry{Value::String(name), Value::Quantity(c.value)});
  }
  std::vector<MapEntry> fields;
  fields.push_back(MapEntry{Value::String("driver"), Value::String(std::string(driver))});
  fields.push_back(MapEntry{Value::String("attributes"), DomainMap(attrs)});
  fields.push_back(MapEntry{Value::String("capacity"), DomainMap(caps)});
  fields.push_back(MapEntry{Value::String("allowMultipleAllocations"),
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
