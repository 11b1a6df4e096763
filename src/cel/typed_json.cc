#include "cel/typed_json.h"

#include <cmath>
#include <limits>

namespace gpuplane::cel {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string Base64Encode(const std::string& in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kB64[(v >> s) & 63]);
  }
  if (i < in.size()) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    out.push_back(kB64[(v >> 18) & 63]);
    out.push_back(kB64[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kB64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

absl::StatusOr<std::string> Base64Decode(const std::string& in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const char* p = std::char_traits<char>::find(kB64, 64, c);
    if (p == nullptr) return absl::InvalidArgumentError("bad base64 in bytes_b64");
    acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Value> ValueFromTypedJson(const nlohmann::json& j) {
  if (!j.is_object() || j.size() != 1) {
    return absl::InvalidArgumentError(
        "a typed value is an object with one key, e.g. {\"int\":\"3\"}");
  }
  const std::string& key = j.begin().key();
  const nlohmann::json& v = j.begin().value();
  try {
    if (key == "int") return Value::Int(std::stoll(v.get<std::string>()));
    if (key == "uint") return Value::Uint(std::stoull(v.get<std::string>()));
    if (key == "double") {
      if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (s == "NaN") return Value::Double(std::numeric_limits<double>::quiet_NaN());
        if (s == "Infinity") return Value::Double(HUGE_VAL);
        if (s == "-Infinity") return Value::Double(-HUGE_VAL);
        return absl::InvalidArgumentError("double must be a number, NaN, Infinity or -Infinity");
      }
      return Value::Double(v.get<double>());
    }
    if (key == "string") return Value::String(v.get<std::string>());
    if (key == "bytes_b64") {
      absl::StatusOr<std::string> b = Base64Decode(v.get<std::string>());
      if (!b.ok()) return b.status();
      return Value::Bytes(*b);
    }
    if (key == "bool") return Value::Bool(v.get<bool>());
    if (key == "null") return Value::Null();
    if (key == "type") return Value::Type(v.get<std::string>());
    if (key == "list") {
      std::vector<Value> items;
      for (const nlohmann::json& e : v) {
        absl::StatusOr<Value> x = ValueFromTypedJson(e);
        if (!x.ok()) return x.status();
        items.push_back(*x);
      }
      return Value::List(std::move(items));
    }
    if (key == "map") {
      std::vector<MapEntry> entries;
      for (const nlohmann::json& e : v) {
        if (!e.is_array() || e.size() != 2) {
          return absl::InvalidArgumentError("map entries are [key, value] pairs");
        }
        absl::StatusOr<Value> k = ValueFromTypedJson(e[0]);
        absl::StatusOr<Value> x = ValueFromTypedJson(e[1]);
        if (!k.ok()) return k.status();
        if (!x.ok()) return x.status();
        entries.push_back(MapEntry{*k, *x});
      }
      return Value::Map(std::move(entries));
    }
  } catch (const std::exception& e) {  // nlohmann type errors, stoll range errors
    return absl::InvalidArgumentError(std::string("bad typed value for \"") + key +
                                      "\": " + e.what());
  }
  return absl::InvalidArgumentError("unknown typed value kind \"" + key + "\"");
}

nlohmann::json ValueToTypedJson(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return {{"null", nullptr}};
    case Kind::kBool:
      return {{"bool", v.bool_value()}};
    case Kind::kInt:
      return {{"int", std::to_string(v.int_value())}};
    case Kind::kUint:
      return {{"uint", std::to_string(v.uint_value())}};
    case Kind::kDouble: {
      double d = v.double_value();
      if (std::isnan(d)) return {{"double", "NaN"}};
      if (std::isinf(d)) return {{"double", d > 0 ? "Infinity" : "-Infinity"}};
      return {{"double", d}};
    }
    case Kind::kString:
      return {{"string", v.str()}};
    case Kind::kBytes:
      return {{"bytes_b64", Base64Encode(v.str())}};
    case Kind::kType:
      return {{"type", v.str()}};
    case Kind::kList: {
      nlohmann::json items = nlohmann::json::array();
      for (const Value& x : v.list()) items.push_back(ValueToTypedJson(x));
      return {{"list", items}};
    }
    case Kind::kMap: {
      nlohmann::json entries = nlohmann::json::array();
      for (const MapEntry& e : v.map()) {
        entries.push_back(
            nlohmann::json::array({ValueToTypedJson(e.key), ValueToTypedJson(e.value)}));
      }
      return {{"map", entries}};
    }
    case Kind::kOptional:
      if (!v.has_value()) return {{"optional", nullptr}};
      return {{"optional", ValueToTypedJson(v.optional_value())}};
    case Kind::kQuantity:
      return {{"quantity", v.str()}};
    case Kind::kSemver:
      return {{"semver", v.str()}};
    case Kind::kError:
      return {{"error", v.str()}};
  }
  return nullptr;
}

bool SameValue(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kDouble: {
      double x = a.double_value(), y = b.double_value();
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
      return x == y && std::signbit(x) == std::signbit(y);
    }
    case Kind::kList: {
      if (a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (!SameValue(a.list()[i], b.list()[i])) return false;
      }
      return true;
    }
    case Kind::kMap: {
      if (a.map().size() != b.map().size()) return false;
      for (const MapEntry& e : a.map()) {
        bool found = false;
        for (const MapEntry& f : b.map()) {
          if (SameValue(e.key, f.key)) {
            found = SameValue(e.value, f.value);
            break;
          }
        }
        if (!found) return false;
      }
      return true;
    }
    default:
      return Equal(a, b);
  }
}

}  // namespace gpuplane::cel
