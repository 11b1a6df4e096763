// Kubernetes CEL libraries: optional types, regex find/findAll, quantity and semver.
#include <cmath>
#include <optional>

#include "cel/builtins.h"
#include "cel/library.h"
#include "re2/re2.h"
#include "util/strings.h"

namespace gpuplane::cel {
namespace {

bool IsOpt(const Value& v) { return v.kind() == Kind::kOptional; }

// ---- optional ----

Value OptionalOf(std::span<const Value> a) { return Value::Optional(a[0]); }
Value OptionalNone(std::span<const Value>) { return Value::OptionalNone(); }

bool IsZeroValue(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return !v.bool_value();
    case Kind::kInt:
      return v.int_value() == 0;
    case Kind::kUint:
      return v.uint_value() == 0;
    case Kind::kDouble:
      return v.double_value() == 0;
    case Kind::kString:
    case Kind::kBytes:
      return v.str().empty();
    case Kind::kList:
      return v.list().empty();
    case Kind::kMap:
      return v.map().empty();
    case Kind::kQuantity:
      return v.quantity().IsZero();
    default:
      return false;
  }
}

Value OfNonZero(std::span<const Value> a) {
  return IsZeroValue(a[0]) ? Value::OptionalNone() : Value::Optional(a[0]);
}
Value HasValue(std::span<const Value> a) {
  if (!IsOpt(a[0])) return ArgError("hasValue", a);
  return Value::Bool(a[0].has_value());
}
Value OptValue(std::span<const Value> a) {
  if (!IsOpt(a[0])) return ArgError("value", a);
  if (!a[0].has_value()) return Value::Error("optional.none() dereference");
  return a[0].optional_value();
}
Value OrValue(std::span<const Value> a) {
  if (!IsOpt(a[0])) return ArgError("orValue", a);
  return a[0].has_value() ? a[0].optional_value() : a[1];
}
Value Or(std::span<const Value> a) {
  if (!IsOpt(a[0]) || !IsOpt(a[1])) return ArgError("or", a);
  return a[0].has_value() ? a[0] : a[1];
}

// ---- regex ----

}  // namespace

Value FindWith(const re2::RE2& re, std::span<const Value> a, bool all) {
  const char* name = all ? "findAll" : "find";
  if (a.size() < 2 || !IsStr(a[0]) || !IsStr(a[1]) ||
      (a.size() == 3 && a[2].kind() != Kind::kInt)) {
    return ArgError(name, a);
  }
  if (!re.ok()) return Value::Error("invalid regular expression: " + re.error());
  int64_t limit = a.size() == 3 ? a[2].int_value() : -1;
  re2::StringPiece input(a[0].str());
  std::vector<Value> found;
  re2::StringPiece match;
  // Go's FindAll: an empty match right where the previous match ended is skipped, and after
  // an empty match the search moves on by one code point.
  size_t pos = 0;
  std::optional<size_t> prev_end;
  while (pos <= input.size() && (limit < 0 || static_cast<int64_t>(found.size()) < limit)) {
    if (!re.Match(input, pos, input.size(), re2::RE2::UNANCHORED, &match, 1)) break;
    const size_t start = static_cast<size_t>(match.data() - input.data());
    const size_t end = start + match.size();
    if (!match.empty() || start != prev_end) {
      found.push_back(Value::String(std::string(match.data(), match.size())));
    }
    if (!all) break;
    if (match.empty()) {
      size_t step = 1;
      while (end + step < input.size() &&
             (static_cast<unsigned char>(input[end + step]) & 0xC0) == 0x80) {
        ++step;
      }
      pos = end + step;
    } else {
      pos = end;
    }
    prev_end = end;
  }
  if (!all) return found.empty() ? Value::String("") : found[0];
  return Value::List(std::move(found));
}

namespace {

Value Find(std::span<const Value> a, bool all) {
  if (!IsStr(a[1])) return ArgError(all ? "findAll" : "find", a);
  return FindWith(*RuntimeRegex(a[1].str()), a, all);
}
Value FindOne(std::span<const Value> a) { return Find(a, false); }
Value FindAll(std::span<const Value> a) { return Find(a, true); }

// ---- quantity ----

Value QuantityFn(std::span<const Value> a) {
  if (!IsStr(a[0])) return ArgError("quantity", a);
  absl::StatusOr<api::Quantity> q = api::Quantity::Parse(a[0].str());
  if (!q.ok()) {
    return Value::Error(
        util::Cat("quantity(\"", a[0].str(), "\"): ", std::string(q.status().message())));
  }
  return Value::Quantity(*q);
}
Value IsQuantity(std::span<const Value> a) {
  if (!IsStr(a[0])) return ArgError("isQuantity", a);
  return Value::Bool(api::Quantity::Parse(a[0].str()).ok());
}

bool IsQ(const Value& v) { return v.kind() == Kind::kQuantity; }

Value QIsInteger(std::span<const Value> a) {
  if (!IsQ(a[0])) return ArgError("isInteger", a);
  const api::Quantity& q = a[0].quantity();
  return Value::Bool(q.IsInteger());
}
Value QAsInteger(std::span<const Value> a) {
  if (!IsQ(a[0])) return ArgError("asInteger", a);
  const api::Quantity& q = a[0].quantity();
  if (!q.IsInteger()) return Value::Error("cannot convert value to integer");
  return Value::Int(q.Value());
}
Value QAsFloat(std::span<const Value> a) {
  if (!IsQ(a[0])) return ArgError("asApproximateFloat", a);
  return Value::Double(a[0].quantity().AsApproximateFloat());
}
Value QSign(std::span<const Value> a) {
  if (!IsQ(a[0])) return ArgError("sign", a);
  return Value::Int(a[0].quantity().Sign());
}
Value QAddSub(std::span<const Value> a, bool add) {
  const char* name = add ? "add" : "sub";
  if (!IsQ(a[0]) || (!IsQ(a[1]) && a[1].kind() != Kind::kInt)) return ArgError(name, a);
  api::Quantity other = IsQ(a[1]) ? a[1].quantity() : api::Quantity::FromUnits(a[1].int_value());
  absl::StatusOr<api::Quantity> r = add ? a[0].quantity().Add(other) : a[0].quantity().Sub(other);
  if (!r.ok()) return Value::Error(std::string(r.status().message()));
  return Value::Quantity(*r);
}
Value QAdd(std::span<const Value> a) { return QAddSub(a, true); }
Value QSub(std::span<const Value> a) { return QAddSub(a, false); }

// ---- semver ----

// semver(s) and semver(s, normalize).
SemverParse SemverMode(std::span<const Value> a) {
  return a.size() == 2 && a[1].bool_value() ? SemverParse::kNormalize : SemverParse::kStrict;
}

Value SemverFn(std::span<const Value> a) {
  if (!IsStr(a[0]) || (a.size() == 2 && a[1].kind() != Kind::kBool)) return ArgError("semver", a);
  return ParseSemver(a[0].str(), SemverMode(a));
}
Value IsSemver(std::span<const Value> a) {
  if (!IsStr(a[0]) || (a.size() == 2 && a[1].kind() != Kind::kBool)) return ArgError("isSemver", a);
  return Value::Bool(!ParseSemver(a[0].str(), SemverMode(a)).is_error());
}
Value Part(std::span<const Value> a, int which) {
  if (a[0].kind() != Kind::kSemver)
    return ArgError(which == 0 ? "major" : which == 1 ? "minor" : "patch", a);
  const Semver& s = a[0].semver();
  uint64_t v = which == 0 ? s.major : which == 1 ? s.minor : s.patch;
  return Value::Int(static_cast<int64_t>(v));
}
Value Major(std::span<const Value> a) { return Part(a, 0); }
Value Minor(std::span<const Value> a) { return Part(a, 1); }
Value Patch(std::span<const Value> a) { return Part(a, 2); }

// compareTo / isGreaterThan / isLessThan for both quantities and versions.
Value Ordered(std::span<const Value> a, const char* name, int* c) {
  if (IsQ(a[0]) && IsQ(a[1])) {
    *c = a[0].quantity().Compare(a[1].quantity());
    return Value::Bool(true);
  }
  if (a[0].kind() == Kind::kSemver && a[1].kind() == Kind::kSemver) {
    *c = CompareSemver(a[0].semver(), a[1].semver());
    return Value::Bool(true);
  }
  return ArgError(name, a);
}
Value CompareTo(std::span<const Value> a) {
  int c = 0;
  Value ok = Ordered(a, "compareTo", &c);
  return ok.is_error() ? ok : Value::Int(c);
}
Value IsGreaterThan(std::span<const Value> a) {
  int c = 0;
  Value ok = Ordered(a, "isGreaterThan", &c);
  return ok.is_error() ? ok : Value::Bool(c > 0);
}
Value IsLessThan(std::span<const Value> a) {
  int c = 0;
  Value ok = Ordered(a, "isLessThan", &c);
  return ok.is_error() ? ok : Value::Bool(c < 0);
}

constexpr LibraryOverload kKubernetes[] = {
    {"optional.of", false, 1, &OptionalOf},
    {"optional.none", false, 0, &OptionalNone},
    {"optional.ofNonZeroValue", false, 1, &OfNonZero},
    {"hasValue", true, 1, &HasValue},
    {"value", true, 1, &OptValue},
    {"orValue", true, 2, &OrValue},
    {"or", true, 2, &Or},
    {"find", true, 2, &FindOne},
    {"findAll", true, 2, &FindAll},
    {"findAll", true, 3, &FindAll},
    {"quantity", false, 1, &QuantityFn},
    {"isQuantity", false, 1, &IsQuantity},
    {"isInteger", true, 1, &QIsInteger},
    {"asInteger", true, 1, &QAsInteger},
    {"asApproximateFloat", true, 1, &QAsFloat},
    {"sign", false, 1, &QSign},  // global in Kubernetes (its documentation says q.sign())
    {"add", true, 2, &QAdd},
    {"sub", true, 2, &QSub},
    {"semver", false, 1, &SemverFn},
    {"semver", false, 2, &SemverFn},
    {"isSemver", false, 1, &IsSemver},
    {"isSemver", false, 2, &IsSemver},
    {"major", true, 1, &Major},
    {"minor", true, 1, &Minor},
    {"patch", true, 1, &Patch},
    {"compareTo", true, 2, &CompareTo},
    {"isGreaterThan", true, 2, &IsGreaterThan},
    {"isLessThan", true, 2, &IsLessThan},
};

}  // namespace

std::span<const LibraryOverload> KubernetesLibrary() { return kKubernetes; }

// ---- semver parsing and precedence (semver.org 2.0.0) ----

namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool ParseNumber(std::string_view s, bool allow_leading_zero, uint64_t* out) {
  if (!AllDigits(s) || s.size() > 19 || (!allow_leading_zero && s.size() > 1 && s[0] == '0')) {
    return false;
  }
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  *out = v;
  return true;
}

}  // namespace

Value ParseSemver(const std::string& text, SemverParse mode) {
  const bool normalize = mode == SemverParse::kNormalize;
  auto bad = [&] { return Value::Error("semver(\"" + text + "\"): invalid semantic version"); };
  std::string_view s = text;
  if (normalize && !s.empty() && (s[0] == 'v' || s[0] == 'V')) s.remove_prefix(1);
  std::string_view build;
  if (size_t plus = s.find('+'); plus != s.npos) {
    build = s.substr(plus + 1);
    s = s.substr(0, plus);
    if (build.empty()) return bad();
  }
  Semver v;
  std::string_view pre;
  if (size_t dash = s.find('-'); dash != s.npos) {
    pre = s.substr(dash + 1);
    s = s.substr(0, dash);
    if (pre.empty()) return bad();
  }
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == s.npos ? s.npos : dot - start));
    if (dot == s.npos) break;
    start = dot + 1;
  }
  if (normalize) {
    while (parts.size() < 3) parts.emplace_back("0");
  }
  if (parts.size() != 3) return bad();
  uint64_t* fields[] = {&v.major, &v.minor, &v.patch};
  for (int i = 0; i < 3; ++i) {
    if (!ParseNumber(parts[static_cast<size_t>(i)], normalize, fields[i])) return bad();
  }
  if (!pre.empty()) {
    size_t p = 0;
    while (true) {
      size_t dot = pre.find('.', p);
      std::string_view id = pre.substr(p, dot == pre.npos ? pre.npos : dot - p);
      if (id.empty()) return bad();
      for (char c : id) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-')) {
          return bad();
        }
      }
      if (AllDigits(id) && id.size() > 1 && id[0] == '0') return bad();
      v.pre.emplace_back(id);
      if (dot == pre.npos) break;
      p = dot + 1;
    }
  }
  v.text = util::Cat(v.major, ".", v.minor, ".", v.patch);
  if (!pre.empty()) util::Append(v.text, "-", pre);
  if (!build.empty()) util::Append(v.text, "+", build);
  return Value::MakeSemver(std::move(v));
}

int CompareSemver(const Semver& a, const Semver& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  if (a.pre.empty() || b.pre.empty()) return cmp(a.pre.empty(), b.pre.empty());
  for (size_t i = 0; i < a.pre.size() && i < b.pre.size(); ++i) {
    const std::string& x = a.pre[i];
    const std::string& y = b.pre[i];
    bool xn = AllDigits(x), yn = AllDigits(y);
    if (xn && yn) {
      if (int c = cmp(x.size(), y.size())) return c;  // no leading zeros: longer is larger
      if (int c = cmp(x, y)) return c;
    } else if (xn != yn) {
      return xn ? -1 : 1;  // numeric identifiers have lower precedence
    } else if (int c = cmp(x, y)) {
      return c;
    }
  }
  return cmp(a.pre.size(), b.pre.size());
}

}  // namespace gpuplane::cel
