// The strings extension's format(): "%s %d %f %e %b %x %X %o" clauses, as Kubernetes' CEL
// environment has them (cel-go's strings library at version 2, the one its base environment
// pins; see docs in cel/README.md). Lists and maps under %s print as CEL-like literals: elements
// by their own clause, strings Go-quoted, map entries sorted by their printed key.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "cel/builtins.h"
#include "cel/library.h"
#include "util/strings.h"

namespace gpuplane::cel {
namespace {

// Largest precision a format clause may ask for ("%.1000f"), so output stays bounded.
constexpr int kMaxPrecision = 1000;

// Decodes one UTF-8 code point at s[*i], advancing *i; returns -1 (advancing one byte) on an
// invalid or truncated sequence.
int32_t NextRune(const std::string& s, size_t* i) {
  const auto b0 = static_cast<unsigned char>(s[*i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
  if (len == 0 || *i + static_cast<size_t>(len) > s.size()) {
    ++*i;
    return -1;
  }
  int32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[*i + static_cast<size_t>(k)]);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return -1;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return -1;
  }
  *i += static_cast<size_t>(len);
  return cp;
}

// Go's notion of a printable rune, closely enough for quoting: controls, format characters,
// line and paragraph separators and private use are not.
bool IsPrintable(int32_t r) {
  if (r < 0x80) return r >= 0x20 && r != 0x7F;
  if (r <= 0x9F || r == 0xAD || r == 0x2028 || r == 0x2029 || r == 0xFEFF) return false;
  if ((r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E)) return false;
  if ((r >= 0x2060 && r <= 0x206F) || (r >= 0xFFF9 && r <= 0xFFFB)) return false;
  return !(r >= 0xE000 && r <= 0xF8FF) && r < 0xF0000;
}

void AppendEscape(std::string& out, const char* form, uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, form, value);
  out += buf;
}

// A double-quoted string with Go's escapes (strconv.Quote), as cel-go prints strings in lists.
std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const int32_t r = NextRune(s, &i);
    if (r < 0) {
      AppendEscape(out, "\\x%02x", static_cast<unsigned char>(s[start]));
    } else if (r == '"' || r == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(r));
    } else if (IsPrintable(r)) {
      out.append(s, start, i - start);
    } else if (const char* esc = r == '\a'   ? "\\a"
                                 : r == '\b' ? "\\b"
                                 : r == '\f' ? "\\f"
                                 : r == '\n' ? "\\n"
                                 : r == '\r' ? "\\r"
                                 : r == '\t' ? "\\t"
                                 : r == '\v' ? "\\v"
                                             : nullptr) {
      out += esc;
    } else {
      const auto u = static_cast<uint32_t>(r);
      AppendEscape(out, u < 0x80 ? "\\x%02x" : u < 0x10000 ? "\\u%04x" : "\\U%08x", u);
    }
  }
  return out + "\"";
}

// Go's %.Nf: NaN, +Inf and -Inf spelled Go's way.
std::string GoFixed(double x, int digits) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  std::string out(static_cast<size_t>(std::snprintf(nullptr, 0, "%.*f", digits, x)), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", digits, x);
  return out;
}

bool FormatString(const Value& v, std::string* out);

// One element of a list or map under %s: its own clause, then quoted to read as CEL.
bool FormatElement(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Kind::kInt:
      *out = std::to_string(v.int_value());
      return true;
    case Kind::kUint:
      *out = std::to_string(v.uint_value());
      return true;
    case Kind::kDouble:
      *out = GoFixed(v.double_value(), 6);
      if (!std::isfinite(v.double_value())) *out = GoQuote(*out);
      return true;
    case Kind::kString:
    case Kind::kBytes:
      if (!FormatString(v, out)) return false;
      *out = GoQuote(*out);
      if (v.kind() == Kind::kBytes) out->insert(out->begin(), 'b');
      return true;
    case Kind::kBool:
    case Kind::kNull:
    case Kind::kType:
    case Kind::kList:
    case Kind::kMap:
      return FormatString(v, out);
    default:
      return false;
  }
}

bool FormatList(const Value& v, std::string* out) {
  std::string text = "[";
  for (size_t i = 0; i < v.list().size(); ++i) {
    std::string piece;
    if (!FormatElement(v.list()[i], &piece)) return false;
    if (i > 0) text += ", ";
    text += piece;
  }
  *out = text + "]";
  return true;
}

bool FormatMap(const Value& v, std::string* out) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const MapEntry& e : v.map()) {
    const Kind k = e.key.kind();
    if (k != Kind::kString && k != Kind::kBool && k != Kind::kInt && k != Kind::kUint) {
      return false;
    }
    std::string key;
    std::string value;
    if (!FormatElement(e.key, &key) || !FormatElement(e.value, &value)) return false;
    pairs.emplace_back(std::move(key), std::move(value));
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text = "{";
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0) text += ", ";
    text += pairs[i].first + ":" + pairs[i].second;
  }
  *out = text + "}";
  return true;
}

// %s: lists and maps as literals, null as "null", the rest as string() converts them.
bool FormatString(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Kind::kList:
      return FormatList(v, out);
    case Kind::kMap:
      return FormatMap(v, out);
    case Kind::kNull:
      *out = "null";
      return true;
    case Kind::kInt:
    case Kind::kUint:
    case Kind::kDouble:
    case Kind::kBool:
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kType: {
      Value s = CallBuiltin("string", CallStyle::kGlobal, {&v, 1});
      if (s.is_error()) return false;
      *out = s.str();
      return true;
    }
    default:
      return false;
  }
}

// Digits of x under the C format `form` ("%.*f" or "%.*e"), sized first: %f of 1e308 has 309
// digits before the point. An exact zero prints without a sign, as Kubernetes prints it.
std::string PrintDouble(const char* form, int digits, double x) {
  std::string out(static_cast<size_t>(std::snprintf(nullptr, 0, form, digits, x)), '\0');
  std::snprintf(out.data(), out.size() + 1, form, digits, x);
  if (x == 0 && !out.empty() && out[0] == '-') out.erase(0, 1);
  return out;
}

// Kubernetes formats %f and %e for the en-US locale (cel-go through golang.org/x/text): %f
// groups the integer digits by thousands ("1,234.500000"); %e writes "1.234500×10⁰³" with a
// superscript exponent, always six decimals, and pads to the clause's precision as a width
// (cel-go passes it as "%6e"); infinities are "∞" and "-∞".
std::string FixedEnUs(double x, int precision) {
  const std::string digits = PrintDouble("%.*f", precision < 0 ? 6 : precision, x);
  const size_t begin = digits[0] == '-' ? 1 : 0;
  const size_t point = std::min(digits.find('.'), digits.size());
  std::string out = digits.substr(0, begin);
  for (size_t i = begin; i < point; ++i) {
    if (i > begin && (point - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out.append(digits, point);
}

std::string ScientificEnUs(double x) {
  static constexpr const char* kSuperscript[] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                                 "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
  const std::string c = PrintDouble("%.*e", 6, x);  // "-1.234500e+03"
  const size_t e = c.find('e');
  std::string out = c.substr(0, e) + "\u00d710";
  if (c[e + 1] == '-') out += "\u207b";
  for (size_t i = e + 2; i < c.size(); ++i) out += kSuperscript[c[i] - '0'];
  return out;
}

// %f and %e take doubles, and the strings "NaN", "Infinity" and "-Infinity".
bool FormatFloat(char verb, int precision, const Value& v, std::string* out) {
  const bool special = v.kind() == Kind::kString &&
                       (v.str() == "NaN" || v.str() == "Infinity" || v.str() == "-Infinity");
  if (v.kind() != Kind::kDouble && !special) return false;
  const double x = special ? (v.str() == "NaN"        ? std::nan("")
                              : v.str() == "Infinity" ? HUGE_VAL
                                                      : -HUGE_VAL)
                           : v.double_value();
  if (std::isnan(x)) {
    *out = "NaN";
  } else if (std::isinf(x)) {
    *out = x > 0 ? "\u221e" : "-\u221e";
  } else {
    *out = verb == 'f' ? FixedEnUs(x, precision) : ScientificEnUs(x);
  }
  if (verb == 'e') {
    const size_t width = precision < 0 ? 6 : static_cast<size_t>(precision);
    const size_t runes = CodePointOffsets(*out).size();
    if (runes < width) *out = std::string(width - runes, ' ') + *out;
  }
  return true;
}

// %x %X %o %b of integers (negative ones with a sign); %x %X of strings and bytes, byte by
// byte; %b of bools as 1 or 0.
bool FormatRadix(char verb, const Value& v, std::string* out) {
  if (v.kind() == Kind::kBool) {
    if (verb != 'b') return false;
    out->assign(1, v.bool_value() ? '1' : '0');
    return true;
  }
  const char* set = verb == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  if (v.kind() == Kind::kString || v.kind() == Kind::kBytes) {
    if (verb != 'x' && verb != 'X') return false;
    out->clear();
    for (char c : v.str()) {
      out->push_back(set[static_cast<unsigned char>(c) >> 4]);
      out->push_back(set[static_cast<unsigned char>(c) & 0xF]);
    }
    return true;
  }
  if (v.kind() != Kind::kInt && v.kind() != Kind::kUint) return false;
  const bool neg = v.kind() == Kind::kInt && v.int_value() < 0;
  uint64_t u = v.kind() == Kind::kUint ? v.uint_value()
               : neg                   ? 0 - static_cast<uint64_t>(v.int_value())
                                       : static_cast<uint64_t>(v.int_value());
  const uint64_t base = verb == 'o' ? 8 : verb == 'b' ? 2 : 16;
  std::string digits;
  do {
    digits.push_back(set[u % base]);
    u /= base;
  } while (u > 0);
  if (neg) digits.push_back('-');
  *out = std::string(digits.rbegin(), digits.rend());
  return true;
}

bool FormatOne(char verb, int precision, const Value& v, std::string* out) {
  switch (verb) {
    case 's':
      return FormatString(v, out);
    case 'd':
      if (v.kind() == Kind::kInt) *out = std::to_string(v.int_value());
      if (v.kind() == Kind::kUint) *out = std::to_string(v.uint_value());
      return v.kind() == Kind::kInt || v.kind() == Kind::kUint;
    case 'f':
    case 'e':
      return FormatFloat(verb, precision, v, out);
    case 'x':
    case 'X':
    case 'o':
    case 'b':
      return FormatRadix(verb, v, out);
    default:
      return false;
  }
}

// Reads "%[.N]v" at f[i] (f[i] == '%'); returns the verb's index, or an error.
Value ParseClause(const std::string& f, size_t i, int* precision, size_t* verb_at) {
  *precision = -1;
  size_t j = i + 1;
  if (j < f.size() && f[j] == '.') {
    *precision = 0;
    ++j;
    while (j < f.size() && f[j] >= '0' && f[j] <= '9') {
      *precision = *precision * 10 + (f[j++] - '0');
      if (*precision > kMaxPrecision) {
        return Value::Error(util::Cat("format: precision over ", kMaxPrecision));
      }
    }
  }
  if (j >= f.size()) return Value::Error("format: unterminated formatting clause");
  *verb_at = j;
  return Value::Bool(true);
}

Value Format(std::span<const Value> a) {
  if (a[0].kind() != Kind::kString || a[1].kind() != Kind::kList) return ArgError("format", a);
  const std::string& f = a[0].str();
  const std::vector<Value>& args = a[1].list();
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out.push_back(f[i]);
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    int precision = -1;
    size_t j = 0;
    if (Value bad = ParseClause(f, i, &precision, &j); bad.is_error()) return bad;
    if (next >= args.size()) {
      return Value::Error(util::Cat("format: index ", next, " out of range"));
    }
    std::string piece;
    if (!FormatOne(f[j], precision, args[next], &piece)) {
      return Value::Error(util::Cat("format: clause %", std::string(1, f[j]),
                                    " does not apply to a value of type ", args[next].TypeName()));
    }
    if (out.size() + piece.size() > kMaxResultBytes) {
      return Value::Error("format: result over 8 MiB");
    }
    out += piece;
    ++next;
    i = j;
  }
  return Value::String(std::move(out));
}

}  // namespace

std::string CheckFormatCall(const std::string& format, size_t arg_count) {
  static constexpr std::string_view kVerbs = "sdfebxXo";
  size_t clauses = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      ++i;
      continue;
    }
    int precision = -1;
    size_t j = 0;
    if (Value bad = ParseClause(format, i, &precision, &j); bad.is_error()) return bad.str();
    if (kVerbs.find(format[j]) == std::string_view::npos) {
      return util::Cat("format: unrecognized formatting clause \"", std::string(1, format[j]),
                       "\"");
    }
    if (clauses >= arg_count) return util::Cat("format: index ", clauses, " out of range");
    ++clauses;
    i = j;
  }
  if (arg_count > clauses) {
    return util::Cat("format: too many arguments: the format string takes ", clauses,
                     ", the list has ", arg_count);
  }
  return "";
}

namespace {

constexpr LibraryOverload kFormat[] = {
    {"format", true, 2, &Format},
};

}  // namespace

std::span<const LibraryOverload> FormatLibrary() { return kFormat; }

}  // namespace gpuplane::cel
