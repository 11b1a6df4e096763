// CEL runtime values: null, bool, int, uint, double, string, bytes, list, map, type,
// optional, error, and the Kubernetes quantity and semver types. Values are immutable;
// strings and containers are shared between copies (shared_ptr: CEL values are freely
// copied between bindings, containers and results, and deep copies would allocate on every
// evaluation). Thread-safe for concurrent reads.
#ifndef GPUPLANE_CEL_VALUE_H_
#define GPUPLANE_CEL_VALUE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/quantity.h"

namespace gpuplane::cel {

enum class Kind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kOptional,
  kError,
  kQuantity,
  kSemver
};

class Value;
struct MapEntry;

struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre;  // pre-release identifiers
  std::string text;
};

class Value {
 public:
  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Uint(uint64_t u);
  static Value Double(double d);
  static Value String(std::string s);
  static Value Bytes(std::string s);
  static Value List(std::vector<Value> items);
  static Value Map(std::vector<MapEntry> entries);  // REQUIRES: keys distinct (by CEL equality)
  // A map whose missing string keys read as an empty map (device.attributes, device.capacity:
  // an unknown attribute domain is an empty map in the DRA environment).
  static Value MapWithEmptyDefault(std::vector<MapEntry> entries);
  static Value Type(std::string_view name);
  static Value Optional(Value v);
  static Value OptionalNone();
  static Value Error(std::string message);
  static Value Quantity(const api::Quantity& q);
  static Value MakeSemver(Semver v);

  Kind kind() const { return kind_; }
  bool is_error() const { return kind_ == Kind::kError; }
  bool bool_value() const { return b_; }
  int64_t int_value() const { return i_; }
  uint64_t uint_value() const { return u_; }
  double double_value() const { return d_; }
  // Strings, bytes, error messages, type names, quantity canonical text.
  const std::string& str() const;
  const std::vector<Value>& list() const;
  const std::vector<MapEntry>& map() const;
  bool has_value() const;  // optional: engaged?
  const Value& optional_value() const;
  const api::Quantity& quantity() const;
  bool missing_keys_are_empty_maps() const;
  const Semver& semver() const;

  // CEL type name: "int", "list", "map", "google.protobuf.Timestamp"...
  std::string_view TypeName() const;

  // Map lookup with CEL key equality (1 == 1u == 1.0); nullptr when absent.
  const Value* Find(const Value& key) const;
  const Value* FindString(std::string_view key) const;

 private:
  struct Heap;
  Kind kind_ = Kind::kNull;
  union {  // NOLINTBEGIN(readability-identifier-naming): the class's private members
    bool b_;
    int64_t i_ = 0;
    uint64_t u_;
    double d_;
  };  // NOLINTEND(readability-identifier-naming)
  std::shared_ptr<const Heap> heap_;
};

struct MapEntry {
  Value key;
  Value value;
};

// The value as CEL source text (what `gpuplane cel eval` prints): 3, 3u, 1.5, "s", b"\x01",
// [1, 2], {"k": 1}, int, null, optional.of(1), quantity("1Gi"), semver("1.2.3").
std::string ToCelText(const Value& v);

// Heterogeneous CEL equality: numbers compare by value across int, uint and double; values of
// different kinds are unequal; NaN is unequal to everything. Errors are not handled here.
bool Equal(const Value& a, const Value& b);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_VALUE_H_
