#include "cel/builtins.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "cel/library.h"
#include "re2/re2.h"
#include "util/strings.h"

namespace gpuplane::cel {
namespace {

bool IsNum(const Value& v) {
  return v.kind() == Kind::kInt || v.kind() == Kind::kUint || v.kind() == Kind::kDouble;
}

Value Overflow(std::string_view what) { return Value::Error(util::Cat(what, " overflow")); }

Value Add(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return NoOverload("_+_", {a, b});
  switch (a.kind()) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_add_overflow(a.int_value(), b.int_value(), &r)) return Overflow("int64");
      return Value::Int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_add_overflow(a.uint_value(), b.uint_value(), &r)) return Overflow("uint64");
      return Value::Uint(r);
    }
    case Kind::kDouble:
      return Value::Double(a.double_value() + b.double_value());
    case Kind::kString:
      return Value::String(a.str() + b.str());
    case Kind::kBytes:
      return Value::Bytes(a.str() + b.str());
    case Kind::kList: {
      std::vector<Value> out = a.list();
      out.insert(out.end(), b.list().begin(), b.list().end());
      return Value::List(std::move(out));
    }
    default:
      return NoOverload("_+_", {a, b});
  }
}

Value Arith(std::string_view op, const Value& a, const Value& b) {
  if (a.kind() != b.kind() || !IsNum(a)) return NoOverload(op, {a, b});
  char c = op[1];
  if (a.kind() == Kind::kDouble) {
    double x = a.double_value(), y = b.double_value();
    switch (c) {
      case '-':
        return Value::Double(x - y);
      case '*':
        return Value::Double(x * y);
      case '/':
        return Value::Double(x / y);
      default:
        return NoOverload(op, {a, b});
    }
  }
  if (a.kind() == Kind::kInt) {
    int64_t x = a.int_value(), y = b.int_value(), r;
    switch (c) {
      case '-':
        if (__builtin_sub_overflow(x, y, &r)) return Overflow("int64");
        return Value::Int(r);
      case '*':
        if (__builtin_mul_overflow(x, y, &r)) return Overflow("int64");
        return Value::Int(r);
      case '/':
        if (y == 0) return Value::Error("division by zero");
        if (x == INT64_MIN && y == -1) return Overflow("int64");
        return Value::Int(x / y);
      case '%':
        if (y == 0) return Value::Error("modulus by zero");
        if (x == INT64_MIN && y == -1) return Overflow("int64");
        return Value::Int(x % y);
    }
  }
  uint64_t x = a.uint_value(), y = b.uint_value(), r;
  switch (c) {
    case '-':
      if (__builtin_sub_overflow(x, y, &r)) return Overflow("uint64");
      return Value::Uint(r);
    case '*':
      if (__builtin_mul_overflow(x, y, &r)) return Overflow("uint64");
      return Value::Uint(r);
    case '/':
      if (y == 0) return Value::Error("division by zero");
      return Value::Uint(x / y);
    case '%':
      if (y == 0) return Value::Error("modulus by zero");
      return Value::Uint(x % y);
  }
  return NoOverload(op, {a, b});
}

}  // namespace

// Numeric comparison as cel-go does it: int and uint compare exactly; against a double, a
// value beyond the integer range orders first, otherwise the integer is converted to double
// (lossy for magnitudes above 2^53, which the conformance vectors require).
int CompareNumbers(const Value& a, const Value& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  Kind ka = a.kind(), kb = b.kind();
  if (ka == kb) {
    if (ka == Kind::kInt) return cmp(a.int_value(), b.int_value());
    if (ka == Kind::kUint) return cmp(a.uint_value(), b.uint_value());
    return cmp(a.double_value(), b.double_value());
  }
  if (ka == Kind::kInt && kb == Kind::kUint) {
    return a.int_value() < 0 ? -1 : cmp(static_cast<uint64_t>(a.int_value()), b.uint_value());
  }
  if (kb == Kind::kDouble) {
    double d = b.double_value();
    if (ka == Kind::kInt) {
      if (d < -9223372036854775808.0) return 1;
      if (d > 9223372036854775807.0) return -1;
      return cmp(static_cast<double>(a.int_value()), d);
    }
    if (d < 0) return 1;
    if (d > 18446744073709551615.0) return -1;
    return cmp(static_cast<double>(a.uint_value()), d);
  }
  return -CompareNumbers(b, a);
}

namespace {

size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// Go's fmt "%g" (what cel-go uses for string(double)): shortest digits; exponent form
// below 1e-4 and from 1e6 up, two-digit exponents ("1e+06").
std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // buf holds d.ddde±XX with the shortest digits.
  std::string s(buf);
  size_t e = s.find('e');
  int exp = std::atoi(s.c_str() + e + 1);
  std::string mantissa = s.substr(0, e);
  bool neg = mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (c >= '0' && c <= '9') digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out.append(digits, 0, 1);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out.append(eb);
    return out;
  }
  if (exp < 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-exp - 1), '0');
    out.append(digits);
    return out;
  }
  size_t int_digits = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_digits) {
    out.append(digits);
    out.append(int_digits - digits.size(), '0');
    return out;
  }
  out.append(digits, 0, int_digits);
  out.push_back('.');
  out.append(digits, int_digits, std::string::npos);
  return out;
}

bool ParseInt64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  *out = v;
  return true;
}

bool ParseUint64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+' || std::isspace(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

Value ToInt(const Value& v) {
  switch (v.kind()) {
    case Kind::kInt:
      return v;
    case Kind::kUint:
      if (v.uint_value() > static_cast<uint64_t>(INT64_MAX)) return Value::Error("int range error");
      return Value::Int(static_cast<int64_t>(v.uint_value()));
    case Kind::kDouble: {
      double d = v.double_value();
      if (std::isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775808.0) {
        return Value::Error("int range error");
      }
      return Value::Int(static_cast<int64_t>(d));
    }
    case Kind::kString: {
      int64_t i;
      if (!ParseInt64(v.str(), &i)) return Value::Error("cannot convert '" + v.str() + "' to int");
      return Value::Int(i);
    }
    default:
      return NoOverload("int", {v});
  }
}

Value ToUint(const Value& v) {
  switch (v.kind()) {
    case Kind::kUint:
      return v;
    case Kind::kInt:
      if (v.int_value() < 0) return Value::Error("uint range error");
      return Value::Uint(static_cast<uint64_t>(v.int_value()));
    case Kind::kDouble: {
      double d = v.double_value();
      if (std::isnan(d) || d < 0 || d >= 18446744073709551616.0) {
        return Value::Error("uint range error");
      }
      return Value::Uint(static_cast<uint64_t>(d));
    }
    case Kind::kString: {
      uint64_t u;
      if (!ParseUint64(v.str(), &u))
        return Value::Error("cannot convert '" + v.str() + "' to uint");
      return Value::Uint(u);
    }
    default:
      return NoOverload("uint", {v});
  }
}

Value ToDouble(const Value& v) {
  switch (v.kind()) {
    case Kind::kDouble:
      return v;
    case Kind::kInt:
      return Value::Double(static_cast<double>(v.int_value()));
    case Kind::kUint:
      return Value::Double(static_cast<double>(v.uint_value()));
    case Kind::kString: {
      const std::string& s = v.str();
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0]))) {
        return Value::Error("cannot convert '" + s + "' to double");
      }
      return Value::Double(d);
    }
    default:
      return NoOverload("double", {v});
  }
}

Value ToString(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return v;
    case Kind::kInt:
      return Value::String(std::to_string(v.int_value()));
    case Kind::kUint:
      return Value::String(std::to_string(v.uint_value()));
    case Kind::kDouble:
      return Value::String(FormatDouble(v.double_value()));
    case Kind::kBool:
      return Value::String(v.bool_value() ? "true" : "false");
    case Kind::kBytes:
      if (!util::ValidUtf8(v.str()))
        return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
      return Value::String(v.str());
    case Kind::kType:
      return Value::String(v.str());
    default:  // quantities and semvers too: Kubernetes has no string() of them
      return NoOverload("string", {v});
  }
}

Value ToBool(const Value& v) {
  if (v.kind() == Kind::kBool) return v;
  if (v.kind() == Kind::kString) {
    static constexpr std::string_view kTrue[] = {"1", "t", "T", "true", "TRUE", "True"};
    static constexpr std::string_view kFalse[] = {"0", "f", "F", "false", "FALSE", "False"};
    for (std::string_view t : kTrue) {
      if (v.str() == t) return Value::Bool(true);
    }
    for (std::string_view f : kFalse) {
      if (v.str() == f) return Value::Bool(false);
    }
    return Value::Error("cannot convert '" + v.str() + "' to bool");
  }
  return NoOverload("bool", {v});
}

Value Matches(const Value& s, const Value& pattern) {
  if (s.kind() != Kind::kString || pattern.kind() != Kind::kString) {
    return NoOverload("matches", {s, pattern});
  }
  const Value args[] = {s, pattern};
  return MatchesWith(*RuntimeRegex(pattern.str()), args);
}

Value Size(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return Value::Int(static_cast<int64_t>(Utf8Length(v.str())));
    case Kind::kBytes:
      return Value::Int(static_cast<int64_t>(v.str().size()));
    case Kind::kList:
      return Value::Int(static_cast<int64_t>(v.list().size()));
    case Kind::kMap:
      return Value::Int(static_cast<int64_t>(v.map().size()));
    default:
      return NoOverload("size", {v});
  }
}

Value In(const Value& elem, const Value& container) {
  if (container.kind() == Kind::kList) {
    for (const Value& v : container.list()) {
      if (Equal(v, elem)) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (container.kind() == Kind::kMap) return Value::Bool(container.Find(elem) != nullptr);
  return NoOverload("@in", {elem, container});
}

Value StringPredicate(std::string_view name, const Value& s, const Value& arg) {
  if (s.kind() != Kind::kString || arg.kind() != Kind::kString) {
    return NoOverload(name, {s, arg});
  }
  const std::string& a = s.str();
  const std::string& b = arg.str();
  if (name == "contains") return Value::Bool(a.find(b) != std::string::npos);
  if (name == "startsWith") return Value::Bool(a.rfind(b, 0) == 0);
  return Value::Bool(a.size() >= b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0);
}

}  // namespace

std::shared_ptr<const re2::RE2> CompileRegex(const std::string& pattern) {
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  return std::make_shared<const re2::RE2>(pattern, opts);
}

std::shared_ptr<const re2::RE2> RuntimeRegex(const std::string& pattern) {
  constexpr size_t kKept = 16;
  thread_local std::vector<std::shared_ptr<const re2::RE2>> recent;  // most recent last
  for (size_t i = recent.size(); i-- > 0;) {
    if (recent[i]->pattern() != pattern) continue;
    std::shared_ptr<const re2::RE2> re = recent[i];
    recent.erase(recent.begin() + static_cast<std::ptrdiff_t>(i));
    recent.push_back(re);
    return re;
  }
  std::shared_ptr<const re2::RE2> re = CompileRegex(pattern);
  if (recent.size() == kKept) recent.erase(recent.begin());
  recent.push_back(re);
  return re;
}

Value MatchesWith(const re2::RE2& re, std::span<const Value> args) {
  if (args.size() != 2 || args[0].kind() != Kind::kString || args[1].kind() != Kind::kString) {
    return NoOverload("matches", args);
  }
  if (!re.ok()) return Value::Error("invalid regular expression: " + re.error());
  return Value::Bool(re2::RE2::PartialMatch(args[0].str(), re));
}

Value NoOverload(std::string_view name, std::initializer_list<Value> args) {
  return NoOverload(name, std::span<const Value>(args.begin(), args.size()));
}

Value NoOverload(std::string_view name, std::span<const Value> args) {
  std::string types;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) types += ", ";
    types += args[i].TypeName();
  }
  return Value::Error(
      util::Cat("no matching overload for '", name, "' applied to '(", types, ")'"));
}

Value Compare(const Value& a, const Value& b, int* result) {
  if (IsNum(a) && IsNum(b)) {
    if ((a.kind() == Kind::kDouble && std::isnan(a.double_value())) ||
        (b.kind() == Kind::kDouble && std::isnan(b.double_value()))) {
      *result = 2;  // unordered: every comparison is false
      return Value::Bool(true);
    }
    *result = CompareNumbers(a, b);
    return Value::Bool(true);
  }
  if (a.kind() != b.kind()) return NoOverload("_<_", {a, b});
  switch (a.kind()) {
    case Kind::kString:
    case Kind::kBytes: {
      int c = a.str().compare(b.str());
      *result = c < 0 ? -1 : (c > 0 ? 1 : 0);
      return Value::Bool(true);
    }
    case Kind::kBool:
      *result = a.bool_value() == b.bool_value() ? 0 : (a.bool_value() ? 1 : -1);
      return Value::Bool(true);
    default:
      return NoOverload("_<_", {a, b});
  }
}

const Value* TypeDenotation(std::string_view name) {
  static const auto* const kTypes = [] {
    auto* m = new std::map<std::string, Value, std::less<>>();
    for (const char* t : {"int", "uint", "double", "bool", "string", "bytes", "list", "map",
                          "null_type", "type", "optional_type"}) {
      (*m)[t] = Value::Type(t);
    }
    return m;
  }();
  auto it = kTypes->find(name);
  return it == kTypes->end() ? nullptr : &it->second;
}

namespace {

constexpr std::string_view kBuiltinNames[] = {
    "_+_",  "_-_",  "_*_",    "_/_",    "_%_",      "-_",         "!_",       "_==_",
    "_!=_", "_<_",  "_<=_",   "_>_",    "_>=_",     "@in",        "_[_]",     "_[?_]",
    "_&&_", "_||_", "_?_:_",  "size",   "contains", "startsWith", "endsWith", "matches",
    "int",  "uint", "double", "string", "bytes",    "bool",       "type",     "dyn"};

}  // namespace

bool IsKnownFunction(std::string_view name) {
  for (std::string_view n : kBuiltinNames) {
    if (n == name) return true;
  }
  return IsLibraryFunction(name);
}

std::vector<std::string> KnownFunctionNames() {
  std::vector<std::string> names = LibraryFunctionNames();
  for (std::string_view n : kBuiltinNames) {
    if (n.front() != '_' && n.front() != '-' && n.front() != '!' && n.front() != '@') {
      names.emplace_back(n);
    }
  }
  return names;
}

Value CallBuiltin(std::string_view name, CallStyle style, std::span<const Value> args) {
  const bool receiver = style == CallStyle::kReceiver;
  size_t n = args.size();
  if (n == 2 && !receiver) {
    if (name == "_+_") return Add(args[0], args[1]);
    if (name == "_-_" || name == "_*_" || name == "_/_" || name == "_%_") {
      return Arith(name, args[0], args[1]);
    }
    if (name == "_==_") return Value::Bool(Equal(args[0], args[1]));
    if (name == "_!=_") return Value::Bool(!Equal(args[0], args[1]));
    if (name == "_<_" || name == "_<=_" || name == "_>_" || name == "_>=_") {
      int c = 0;
      Value ok = Compare(args[0], args[1], &c);
      if (ok.is_error()) return NoOverload(name, args);
      if (c == 2) return Value::Bool(false);
      if (name == "_<_") return Value::Bool(c < 0);
      if (name == "_<=_") return Value::Bool(c <= 0);
      if (name == "_>_") return Value::Bool(c > 0);
      return Value::Bool(c >= 0);
    }
    if (name == "@in") return In(args[0], args[1]);
    if (name == "matches") return Matches(args[0], args[1]);
  }
  if (n == 1 && !receiver) {
    if (name == "-_") {
      if (args[0].kind() == Kind::kInt) {
        if (args[0].int_value() == INT64_MIN) return Overflow("int64");
        return Value::Int(-args[0].int_value());
      }
      if (args[0].kind() == Kind::kDouble) return Value::Double(-args[0].double_value());
      return NoOverload(name, args);
    }
    if (name == "!_") {
      if (args[0].kind() != Kind::kBool) return NoOverload(name, args);
      return Value::Bool(!args[0].bool_value());
    }
    if (name == "size") return Size(args[0]);
    if (name == "int") return ToInt(args[0]);
    if (name == "uint") return ToUint(args[0]);
    if (name == "double") return ToDouble(args[0]);
    if (name == "string") return ToString(args[0]);
    if (name == "bool") return ToBool(args[0]);
    if (name == "dyn") return args[0];
    if (name == "type") {
      if (args[0].kind() == Kind::kType) return Value::Type("type");
      return Value::Type(args[0].TypeName());
    }
    if (name == "bytes") {
      if (args[0].kind() == Kind::kBytes) return args[0];
      if (args[0].kind() == Kind::kString) return Value::Bytes(args[0].str());
      return NoOverload(name, args);
    }
  }
  if (const LibraryOverload* o = FindLibraryOverload(name, style, n)) return o->fn(args);
  if (receiver) {
    if (n == 1 && name == "size") return Size(args[0]);
    if (n == 2 && (name == "contains" || name == "startsWith" || name == "endsWith")) {
      return StringPredicate(name, args[0], args[1]);
    }
    if (n == 2 && name == "matches") return Matches(args[0], args[1]);
  }
  return NoOverload(name, args);
}

}  // namespace gpuplane::cel
