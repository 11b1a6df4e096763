#include "cel/value.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "cel/builtins.h"

namespace gpuplane::cel {

struct Value::Heap {
  std::string text;
  std::vector<Value> items;
  std::vector<MapEntry> entries;
  api::Quantity quantity;
  Semver semver;
  bool engaged = false;
  bool empty_default = false;
};

namespace {

const std::string& EmptyString() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

}  // namespace

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}
Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}
Value Value::Uint(uint64_t u) {
  Value v;
  v.kind_ = Kind::kUint;
  v.u_ = u;
  return v;
}
Value Value::Double(double d) {
  Value v;
  v.kind_ = Kind::kDouble;
  v.d_ = d;
  return v;
}

#define GPUPLANE_CEL_MAKE(KIND, FILL)   \
  Value v;                              \
  v.kind_ = (KIND);                     \
  auto heap = std::make_shared<Heap>(); \
  FILL;                                 \
  v.heap_ = std::move(heap);            \
  return v

Value Value::String(std::string s) { GPUPLANE_CEL_MAKE(Kind::kString, heap->text = std::move(s)); }
Value Value::Bytes(std::string s) { GPUPLANE_CEL_MAKE(Kind::kBytes, heap->text = std::move(s)); }
Value Value::List(std::vector<Value> items) {
  GPUPLANE_CEL_MAKE(Kind::kList, heap->items = std::move(items));
}
Value Value::Map(std::vector<MapEntry> entries) {
  GPUPLANE_CEL_MAKE(Kind::kMap, heap->entries = std::move(entries));
}
Value Value::Type(std::string_view name) {
  GPUPLANE_CEL_MAKE(Kind::kType, heap->text = std::string(name));
}
Value Value::Optional(Value inner) {
  GPUPLANE_CEL_MAKE(Kind::kOptional,
                    (heap->engaged = true, heap->items.push_back(std::move(inner))));
}
Value Value::OptionalNone() { GPUPLANE_CEL_MAKE(Kind::kOptional, heap->engaged = false); }
Value Value::Error(std::string message) {
  GPUPLANE_CEL_MAKE(Kind::kError, heap->text = std::move(message));
}
Value Value::Quantity(const api::Quantity& q) {
  GPUPLANE_CEL_MAKE(Kind::kQuantity, (heap->quantity = q, heap->text = q.String()));
}
Value Value::MapWithEmptyDefault(std::vector<MapEntry> entries) {
  GPUPLANE_CEL_MAKE(Kind::kMap, (heap->entries = std::move(entries), heap->empty_default = true));
}
Value Value::MakeSemver(Semver s) {
  GPUPLANE_CEL_MAKE(Kind::kSemver, (heap->text = s.text, heap->semver = std::move(s)));
}
#undef GPUPLANE_CEL_MAKE

const std::string& Value::str() const { return heap_ ? heap_->text : EmptyString(); }
const std::vector<Value>& Value::list() const {
  static const std::vector<Value>* const kEmpty = new std::vector<Value>();
  return heap_ ? heap_->items : *kEmpty;
}
const std::vector<MapEntry>& Value::map() const {
  static const std::vector<MapEntry>* const kEmpty = new std::vector<MapEntry>();
  return heap_ ? heap_->entries : *kEmpty;
}
bool Value::has_value() const { return heap_ && heap_->engaged; }
const Value& Value::optional_value() const { return heap_->items.front(); }
const api::Quantity& Value::quantity() const {
  static const api::Quantity* const kZero = new api::Quantity();
  return heap_ ? heap_->quantity : *kZero;
}
bool Value::missing_keys_are_empty_maps() const { return heap_ && heap_->empty_default; }
const Semver& Value::semver() const { return heap_->semver; }

std::string_view Value::TypeName() const {
  switch (kind_) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kType:
      return "type";
    case Kind::kOptional:
      return "optional_type";
    case Kind::kError:
      return "error";
    case Kind::kQuantity:
      return "kubernetes.Quantity";
    case Kind::kSemver:
      return "kubernetes.Semver";
  }
  return "dyn";
}

namespace {

bool IsNumber(Kind k) { return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble; }

}  // namespace

bool Equal(const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka != kb && IsNumber(ka) && IsNumber(kb)) {
    // Heterogeneous numeric equality uses the same ordering as <, as cel-go does.
    if ((ka == Kind::kDouble && std::isnan(a.double_value())) ||
        (kb == Kind::kDouble && std::isnan(b.double_value()))) {
      return false;
    }
    return CompareNumbers(a, b) == 0;
  }
  if (ka != kb) return false;
  switch (ka) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return a.bool_value() == b.bool_value();
    case Kind::kInt:
      return a.int_value() == b.int_value();
    case Kind::kUint:
      return a.uint_value() == b.uint_value();
    case Kind::kDouble:
      return a.double_value() == b.double_value();
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kType:
    case Kind::kError:
      return a.str() == b.str();
    case Kind::kList: {
      const auto& x = a.list();
      const auto& y = b.list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!Equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kMap: {
      if (a.map().size() != b.map().size()) return false;
      for (const MapEntry& e : a.map()) {
        const Value* other = b.Find(e.key);
        if (other == nullptr || !Equal(e.value, *other)) return false;
      }
      return true;
    }
    case Kind::kOptional:
      if (a.has_value() != b.has_value()) return false;
      return !a.has_value() || Equal(a.optional_value(), b.optional_value());
    case Kind::kQuantity:
      return a.quantity() == b.quantity();
    case Kind::kSemver: {
      const Semver& x = a.semver();
      const Semver& y = b.semver();
      return x.major == y.major && x.minor == y.minor && x.patch == y.patch && x.pre == y.pre;
    }
  }
  return false;
}

std::string ToCelText(const Value& v) {
  auto quote = [](const std::string& s, bool bytes) {
    std::string out = bytes ? "b\"" : "\"";
    for (char ch : s) {
      auto u = static_cast<unsigned char>(ch);
      if (ch == '"' || ch == '\\') {
        out.push_back('\\');
        out.push_back(ch);
      } else if (ch == '\n') {
        out += "\\n";
      } else if (u < 0x20 || u == 0x7f || (bytes && u >= 0x80)) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", u);
        out += buf;
      } else {
        out.push_back(ch);
      }
    }
    return out + "\"";
  };
  switch (v.kind()) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return v.bool_value() ? "true" : "false";
    case Kind::kInt:
      return std::to_string(v.int_value());
    case Kind::kUint:
      return std::to_string(v.uint_value()) + "u";
    case Kind::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.double_value());
      std::string s = buf;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      return s;
    }
    case Kind::kString:
      return quote(v.str(), false);
    case Kind::kBytes:
      return quote(v.str(), true);
    case Kind::kType:
      return v.str();
    case Kind::kError:
      return "error(" + quote(v.str(), false) + ")";
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.list().size(); ++i) out += (i ? ", " : "") + ToCelText(v.list()[i]);
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      for (size_t i = 0; i < v.map().size(); ++i) {
        out += (i ? ", " : "") + ToCelText(v.map()[i].key) + ": " + ToCelText(v.map()[i].value);
      }
      return out + "}";
    }
    case Kind::kOptional:
      return v.has_value() ? "optional.of(" + ToCelText(v.optional_value()) + ")"
                           : "optional.none()";
    case Kind::kQuantity:
      return "quantity(" + quote(v.str(), false) + ")";
    case Kind::kSemver:
      return "semver(" + quote(v.str(), false) + ")";
  }
  return "?";
}

const Value* Value::Find(const Value& key) const {
  for (const MapEntry& e : map()) {
    if (Equal(e.key, key)) return &e.value;
  }
  return nullptr;
}

const Value* Value::FindString(std::string_view key) const {
  // Hot in selector evaluation: reject on length and first byte before comparing.
  for (const MapEntry& e : map()) {
    if (e.key.kind() != Kind::kString) continue;
    const std::string& k = e.key.heap_->text;
    if (k.size() == key.size() &&
        (key.empty() || (k[0] == key[0] && std::memcmp(k.data(), key.data(), key.size()) == 0))) {
      return &e.value;
    }
  }
  return nullptr;
}

}  // namespace gpuplane::cel
