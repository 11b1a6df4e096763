// Field tables: each struct's Schema<T> lists its JSON field names, member pointers and rules
// once; the generic DecodeStruct / EncodeStruct below walk them, so decoding, validation of
// per-field formats, and writing stay symmetric. Internal to api/.
// The tables are immutable static data; the walkers are stateless and thread-safe.
#ifndef GPUPLANE_API_INTERNAL_SCHEMA_H_
#define GPUPLANE_API_INTERNAL_SCHEMA_H_

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "api/doc.h"
#include "api/internal/decoder.h"
#include "api/quantity.h"

namespace gpuplane::api::internal {

// String formats a field's value (or a map's keys) must have.
enum class Fmt : uint8_t {
  kAny,
  kDnsLabel,
  kDnsSubdomain,
  kDriverName,
  kPoolName,
  kLabelKey,
  kLabelValue,
  kQualifiedName,
  kSemver,
  kCel
};

struct Rule {
  bool required = false;
  Fmt value = Fmt::kAny;   // strings, and string elements of lists / values of maps
  Fmt key = Fmt::kAny;     // map keys
  uint32_t max_items = 0;  // lists and maps; 0 means unlimited
  uint32_t max_len = 0;    // strings; 0 means unlimited
};

template <typename T, typename M>
struct Field {
  std::string_view name;
  M T::*member;
  Rule rule;
};

template <typename T, typename M>
constexpr Field<T, M> F(std::string_view name, M T::*member, Rule rule = {}) {
  return Field<T, M>{name, member, rule};
}

// Specialized per struct in internal/schemas.h: `static constexpr auto kFields = std::tuple{...}`,
// optionally `kPassthrough` (field names kept in `extra`) and `static void Check(...)`.
template <typename T>
struct Schema;

template <typename T>
concept HasSchema = requires {
  Schema<T>::kFields;
};

// Checks a string against a format; returns "" when fine.
std::string CheckFormat(Fmt fmt, std::string_view s);
// Line of the value of `key` in map `n`, else the map's own line.
uint32_t LineOf(const Doc& n, std::string_view key);

// ---- decoding ----

void DecodeValue(Decoder& d, const Doc& n, std::string& out, const Rule& r);
void DecodeValue(Decoder& d, const Doc& n, bool& out, const Rule& r);
void DecodeValue(Decoder& d, const Doc& n, int64_t& out, const Rule& r);
void DecodeValue(Decoder& d, const Doc& n, int32_t& out, const Rule& r);
void DecodeValue(Decoder& d, const Doc& n, Quantity& out, const Rule& r);
void DecodeValue(Decoder& d, const Doc& n, Doc& out, const Rule& r);
template <typename X>
void DecodeValue(Decoder& d, const Doc& n, std::optional<X>& out, const Rule& r);
template <typename X>
void DecodeValue(Decoder& d, const Doc& n, std::vector<X>& out, const Rule& r);
template <typename X, typename C>
void DecodeValue(Decoder& d, const Doc& n, std::map<std::string, X, C>& out, const Rule& r);
template <HasSchema T>
void DecodeValue(Decoder& d, const Doc& n, T& out, const Rule& r);

inline Rule ElementRule(const Rule& r) { return Rule{false, r.value, Fmt::kAny, 0, r.max_len}; }

template <typename X>
void DecodeValue(Decoder& d, const Doc& n, std::optional<X>& out, const Rule& r) {
  if (n.is_null()) return;
  DecodeValue(d, n, out.emplace(), r);
}

template <typename X>
void DecodeValue(Decoder& d, const Doc& n, std::vector<X>& out, const Rule& r) {
  if (n.is_null()) return;
  if (!n.is_seq()) {
    d.Error(n.line(), "expected a list, got " + n.Describe());
    return;
  }
  if (r.max_items != 0 && n.items().size() > r.max_items) {
    d.Error(n.line(), "must have at most " + std::to_string(r.max_items) + " entries, has " +
                          std::to_string(n.items().size()));
  }
  out.reserve(n.items().size());
  Rule er = ElementRule(r);
  for (size_t i = 0; i < n.items().size(); ++i) {
    PathScope p(d, i);
    DecodeValue(d, n.items()[i], out.emplace_back(), er);
  }
}

template <typename X, typename C>
void DecodeValue(Decoder& d, const Doc& n, std::map<std::string, X, C>& out, const Rule& r) {
  if (n.is_null()) return;
  if (!n.is_map()) {
    d.Error(n.line(), "expected a map, got " + n.Describe());
    return;
  }
  if (r.max_items != 0 && n.entries().size() > r.max_items) {
    d.Error(n.line(), "must have at most " + std::to_string(r.max_items) + " entries, has " +
                          std::to_string(n.entries().size()));
  }
  Rule er = ElementRule(r);
  for (const DocEntry& e : n.entries()) {
    size_t old = d.PushKey(e.key);
    if (r.key != Fmt::kAny) {
      std::string problem = CheckFormat(r.key, e.key);
      if (!problem.empty()) d.Error(e.key_line, "key " + problem);
    }
    auto [it, inserted] = out.try_emplace(e.key);
    if (!inserted) {
      d.Error(e.key_line, "duplicate key");
    } else {
      DecodeValue(d, e.value, it->second, er);
    }
    d.Pop(old);
  }
}

template <typename T, size_t I, size_t N>
void DecodeField(Decoder& d, const DocEntry& e, T& out, std::bitset<N>& seen) {
  const auto& f = std::get<I>(Schema<T>::kFields);
  PathScope p(d, f.name);
  if (seen[I]) {
    d.Error(e.key_line, "duplicate field");
    return;
  }
  seen[I] = true;
  if (f.rule.required && e.value.is_null()) {
    // Kubernetes treats null as absent.
    d.Error(e.key_line, "required field is missing (its value is null)");
    return;
  }
  DecodeValue(d, e.value, out.*(f.member), f.rule);
}

template <typename T, size_t N, size_t... I>
bool DecodeEntry(Decoder& d, const DocEntry& e, T& out, std::bitset<N>& seen,
                 std::index_sequence<I...>) {
  bool found = false;
  ((!found && std::get<I>(Schema<T>::kFields).name == e.key
        ? (found = true, DecodeField<T, I, N>(d, e, out, seen))
        : void()),
   ...);
  return found;
}

template <typename T, size_t N, size_t... I>
void CheckRequired(Decoder& d, const Doc& n, const std::bitset<N>& seen,
                   std::index_sequence<I...>) {
  ((std::get<I>(Schema<T>::kFields).rule.required && !seen[I]
        ? d.ErrorAt(n.line(), std::get<I>(Schema<T>::kFields).name, "required field is missing")
        : void()),
   ...);
}

template <typename T>
bool IsPassthrough(std::string_view key) {
  if constexpr (requires { Schema<T>::kPassthrough; }) {
    for (std::string_view p : Schema<T>::kPassthrough) {
      if (p == key) return true;
    }
  }
  return false;
}

template <typename T>
void DecodeStruct(Decoder& d, const Doc& n, T& out) {
  constexpr size_t kCount = std::tuple_size_v<std::remove_const_t<decltype(Schema<T>::kFields)>>;
  using Seq = std::make_index_sequence<kCount>;
  std::bitset<kCount> seen;
  if (!n.is_null() && !n.is_map()) {
    d.Error(n.line(), "expected a map, got " + n.Describe());
    return;
  }
  for (const DocEntry& e : n.entries()) {
    if (DecodeEntry(d, e, out, seen, Seq{})) continue;
    if (IsPassthrough<T>(e.key)) {
      if constexpr (requires { out.extra; }) out.extra.insert_or_assign(e.key, e.value);
      continue;
    }
    size_t old = d.Push(e.key);
    d.Warn(e.key_line, "unknown field (ignored; check the spelling and the apiVersion)");
    d.Pop(old);
  }
  CheckRequired<T>(d, n, seen, Seq{});
  if constexpr (requires { Schema<T>::Check(d, n, out); }) Schema<T>::Check(d, n, out);
}

template <HasSchema T>
void DecodeValue(Decoder& d, const Doc& n, T& out, const Rule&) {
  DecodeStruct(d, n, out);
}

// ---- encoding ----

Doc EncodeValue(const std::string& v);
Doc EncodeValue(bool v);
Doc EncodeValue(int64_t v);
Doc EncodeValue(int32_t v);
Doc EncodeValue(const Quantity& v);
Doc EncodeValue(const Doc& v);
template <typename X>
Doc EncodeValue(const std::optional<X>& v);
template <typename X>
Doc EncodeValue(const std::vector<X>& v);
template <typename X, typename C>
Doc EncodeValue(const std::map<std::string, X, C>& v);
template <HasSchema T>
Doc EncodeValue(const T& v);

template <typename X>
bool IsEmptyValue(const X& v) {
  if constexpr (std::is_same_v<X, std::string>) {
    return v.empty();
  } else if constexpr (std::is_same_v<X, Doc>) {
    return v.is_null();
  } else if constexpr (HasSchema<X>) {
    return v == X{};
  } else if constexpr (requires { v.has_value(); }) {
    return !v.has_value();
  } else if constexpr (requires { v.empty(); }) {
    return v.empty();
  } else {
    return false;  // numbers, booleans and quantities are always written
  }
}

template <typename X>
Doc EncodeValue(const std::optional<X>& v) {
  return EncodeValue(*v);
}

template <typename X>
Doc EncodeValue(const std::vector<X>& v) {
  Doc d = Doc::Seq();
  for (const X& x : v) d.Push(EncodeValue(x));
  return d;
}

template <typename X, typename C>
Doc EncodeValue(const std::map<std::string, X, C>& v) {
  Doc d = Doc::Map();
  for (const auto& [k, x] : v) d.Add(k, EncodeValue(x));
  return d;
}

// Required fields are written even when empty, except an absent optional, which has nothing
// to write.
template <typename X>
bool WriteField(bool required, const X& v) {
  if constexpr (requires { v.has_value(); }) return v.has_value();
  return required || !IsEmptyValue(v);
}

template <typename T>
Doc EncodeStruct(const T& v) {
  Doc d = Doc::Map();
  std::apply(
      [&](const auto&... f) {
        ((WriteField(f.rule.required, v.*(f.member))
              ? (void)d.Add(std::string(f.name), EncodeValue(v.*(f.member)))
              : void()),
         ...);
      },
      Schema<T>::kFields);
  if constexpr (requires { v.extra; }) {
    for (const auto& [k, x] : v.extra) d.Add(k, x);
  }
  return d;
}

template <HasSchema T>
Doc EncodeValue(const T& v) {
  return EncodeStruct(v);
}

}  // namespace gpuplane::api::internal

#endif  // GPUPLANE_API_INTERNAL_SCHEMA_H_
