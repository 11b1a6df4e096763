#include "cel/device_env.h"

#include <algorithm>
#include <array>
#include <cstring>
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

// Collects what an expression reads of `device` (see DeviceReads).
class ReadCollector {
 public:
  // False when `e` uses `device` in a way a list of reads cannot describe.
  bool Walk(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kIdent:
        return e.name != "device";
      case Expr::Kind::kPath:  // its fallback subtree is the same chain: not walked
        return e.name != "device" || AddPath(e.path);
      case Expr::Kind::kSelect:
        // has(device.attributes["d"].name) and device.attributes["d"].?name
        if (e.target->kind == Expr::Kind::kPath && e.target->name == "device" &&
            e.target->path.size() == 2) {
          return AddPath({e.target->path[0], e.target->path[1], e.name});
        }
        break;
      case Expr::Kind::kComprehension:
        if (e.iter_var == "device" || e.iter_var2 == "device") return false;  // shadowed
        break;
      default:
        break;
    }
    for (const Expr* child :
         {e.target.get(), e.iter_range.get(), e.predicate.get(), e.transform.get()}) {
      if (child != nullptr && !Walk(*child)) return false;
    }
    for (const ExprPtr& a : e.args) {
      if (!Walk(*a)) return false;
    }
    for (const auto& [k, v] : e.entries) {
      if (!Walk(*k) || !Walk(*v)) return false;
    }
    return true;
  }

  std::vector<DeviceRead> reads;

 private:
  bool AddPath(const std::vector<std::string>& path) {
    DeviceRead r;
    if (path[0] == "driver") {
      r.field = DeviceRead::Field::kDriver;
    } else if (path[0] == "allowMultipleAllocations") {
      r.field = DeviceRead::Field::kAllowMultiple;
    } else if ((path[0] == "attributes" || path[0] == "capacity") && path.size() >= 3) {
      r.field =
          path[0] == "attributes" ? DeviceRead::Field::kAttribute : DeviceRead::Field::kCapacity;
      r.domain = path[1];
      r.name = path[2];
      if (r.domain.find('/') == std::string::npos) r.qualified_key = r.domain + "/" + r.name;
      if (r.name.find('/') == std::string::npos) r.driver_key = r.name;
    } else {
      return false;  // a whole map, or a field the environment does not have
    }
    if (std::find(reads.begin(), reads.end(), r) == reads.end()) reads.push_back(std::move(r));
    return true;
  }
};

// Appends `s` so that no two different sequences of appended strings concatenate alike.
void AppendSized(std::string_view s, std::string* key) {
  const auto size = static_cast<uint32_t>(s.size());
  key->append(reinterpret_cast<const char*>(&size), sizeof size);
  key->append(s);
}

// Appends a plain value's bytes (fixed width, so no separator is needed).
template <typename T>
void AppendRaw(const T& v, std::string* key) {
  std::array<char, sizeof(T)> bytes;
  std::memcpy(bytes.data(), &v, sizeof v);
  key->append(bytes.data(), bytes.size());
}

// The value DeviceValue gives an attribute (the same precedence), as a key.
void AppendAttribute(const api::DeviceAttribute& a, std::string* key) {
  if (a.int_value) {
    key->push_back('i');
    AppendRaw(*a.int_value, key);
  } else if (a.bool_value) {
    key->push_back(*a.bool_value ? 'T' : 'F');
  } else if (a.string_value) {
    key->push_back('s');
    AppendSized(*a.string_value, key);
  } else if (a.version_value) {
    key->push_back('v');
    AppendSized(*a.version_value, key);
  } else {
    key->push_back('n');
  }
}

// Appends, with `append`, every entry of `entries` whose published key lands on the read's
// (domain, name), in DeviceValue's order (a qualified and an unqualified spelling may both).
// Found by key: the entries that can land there are its qualified spelling and, for the
// driver's own domain, its unqualified one (Qualify splits at the first '/').
template <typename Entries, typename Append>
void AppendEntries(std::string_view driver, const Entries& entries, const DeviceRead& r,
                   Append append) {
  auto q = r.qualified_key.empty() ? entries.end() : entries.find(r.qualified_key);
  auto u = r.driver_key.empty() || r.domain != driver ? entries.end() : entries.find(r.driver_key);
  if (q != entries.end() && u != entries.end() && u->first < q->first) std::swap(q, u);
  if (q != entries.end()) append(q->second);
  if (u != entries.end()) append(u->second);
}

}  // namespace

std::optional<std::vector<DeviceRead>> DeviceReads(const Program& program) {
  ReadCollector c;
  if (!c.Walk(program.expr())) return std::nullopt;
  return std::move(c.reads);
}

void AppendDeviceReadKey(std::string_view driver, const api::Device& device,
                         const std::vector<DeviceRead>& reads, std::string* key) {
  AppendSized(driver, key);
  for (const DeviceRead& r : reads) {
    switch (r.field) {
      case DeviceRead::Field::kDriver:
        break;  // in the key already
      case DeviceRead::Field::kAllowMultiple:
        key->push_back(device.allow_multiple_allocations.value_or(false) ? 'M' : 'm');
        break;
      case DeviceRead::Field::kAttribute:
        AppendEntries(driver, device.attributes, r, [key](const api::DeviceAttribute& a) {
          key->push_back('a');
          AppendAttribute(a, key);
        });
        break;
      case DeviceRead::Field::kCapacity:
        AppendEntries(driver, device.capacity, r, [key](const api::DeviceCapacity& c) {
          // A CEL quantity is its value and format: equal pairs, equal CEL values.
          key->push_back('c');
          AppendRaw(c.value.nano(), key);
          key->push_back(static_cast<char>(c.value.format()));
        });
        break;
    }
    key->push_back('|');
  }
}

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
