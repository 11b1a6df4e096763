// The strings extension (charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace,
// split, substring, trim, reverse, join, strings.quote; format is in lib_format.cc). Indexes
// count code points.
#include <cmath>
#include <cstdio>

#include "cel/builtins.h"
#include "cel/library.h"
#include "util/strings.h"

namespace gpuplane::cel {
namespace {

bool IsInt(const Value& v) { return v.kind() == Kind::kInt; }

// Byte offset of code point `i` (i == count gives the end).
size_t ByteAt(const std::string& s, const std::vector<size_t>& cps, int64_t i) {
  return i >= static_cast<int64_t>(cps.size()) ? s.size() : cps[static_cast<size_t>(i)];
}

Value CharAt(std::span<const Value> a) {
  if (!IsStr(a[0]) || !IsInt(a[1])) return ArgError("charAt", a);
  const std::string& s = a[0].str();
  std::vector<size_t> cps = CodePointOffsets(s);
  int64_t i = a[1].int_value();
  if (i < 0 || i > static_cast<int64_t>(cps.size())) {
    return Value::Error(util::Cat("index out of range: ", i));
  }
  size_t b = ByteAt(s, cps, i);
  size_t e = ByteAt(s, cps, i + 1);
  return Value::String(s.substr(b, e - b));
}

// Code-point index of the byte offset.
int64_t CodePointIndex(const std::vector<size_t>& cps, size_t byte) {
  return std::lower_bound(cps.begin(), cps.end(), byte) - cps.begin();
}

// indexOf and lastIndexOf, with cel-go's edge cases (Kubernetes' behaviour): an empty
// substring is found at the offset whatever it is; a negative offset is an error; an offset
// at or past the end finds nothing; lastIndexOf(s) without an offset searches from the end.
Value IndexOf(std::span<const Value> a, bool last) {
  const char* name = last ? "lastIndexOf" : "indexOf";
  if (!IsStr(a[0]) || !IsStr(a[1]) || (a.size() == 3 && !IsInt(a[2]))) return ArgError(name, a);
  const std::string& s = a[0].str();
  const std::string& sub = a[1].str();
  std::vector<size_t> cps = CodePointOffsets(s);
  const auto n = static_cast<int64_t>(cps.size());
  if (a.size() == 2 && sub.empty()) return Value::Int(last ? n : 0);
  if (a.size() == 2 && last && s.size() < sub.size()) return Value::Int(-1);
  const int64_t offset = a.size() == 3 ? a[2].int_value() : (last ? n - 1 : 0);
  if (sub.empty()) return Value::Int(offset);
  if (offset < 0) return Value::Error(util::Cat("index out of range: ", offset));
  if (offset >= n) return Value::Int(-1);
  size_t pos;
  if (last) {
    // A match starting at code point `offset` or before.
    const size_t limit = ByteAt(s, cps, offset);
    pos = s.rfind(sub, limit);
  } else {
    pos = s.find(sub, ByteAt(s, cps, offset));
  }
  if (pos == std::string::npos) return Value::Int(-1);
  return Value::Int(CodePointIndex(cps, pos));
}

Value CaseAscii(std::span<const Value> a, bool upper) {
  if (!IsStr(a[0])) return ArgError(upper ? "upperAscii" : "lowerAscii", a);
  std::string s = a[0].str();
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return Value::String(std::move(s));
}

Value Replace(std::span<const Value> a) {
  if (!IsStr(a[0]) || !IsStr(a[1]) || !IsStr(a[2]) || (a.size() == 4 && !IsInt(a[3]))) {
    return ArgError("replace", a);
  }
  const std::string& s = a[0].str();
  const std::string& from = a[1].str();
  const std::string& to = a[2].str();
  int64_t limit = a.size() == 4 ? a[3].int_value() : -1;
  std::string out;
  size_t pos = 0;
  int64_t done = 0;
  while (limit < 0 || done < limit) {
    size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    if (out.size() + (hit - pos) + to.size() > kMaxResultBytes) {
      return Value::Error("replace(): the result would exceed 8 MiB");
    }
    out.append(s, pos, hit - pos);
    out.append(to);
    ++done;
    if (from.empty()) {  // empty pattern: insert between code points, as Go does
      if (hit >= s.size()) {
        pos = s.size() + 1;
        break;
      }
      size_t next = hit + 1;
      while (next < s.size() && (static_cast<unsigned char>(s[next]) & 0xC0) == 0x80) ++next;
      out.append(s, hit, next - hit);
      pos = next;
      continue;
    }
    pos = hit + from.size();
  }
  if (pos <= s.size()) out.append(s, pos, std::string::npos);
  return Value::String(std::move(out));
}

Value Split(std::span<const Value> a) {
  if (!IsStr(a[0]) || !IsStr(a[1]) || (a.size() == 3 && !IsInt(a[2]))) return ArgError("split", a);
  const std::string& s = a[0].str();
  const std::string& sep = a[1].str();
  int64_t limit = a.size() == 3 ? a[2].int_value() : -1;
  std::vector<Value> out;
  if (limit == 0) return Value::List({});
  if (sep.empty()) {
    std::vector<size_t> cps = CodePointOffsets(s);
    for (size_t i = 0; i < cps.size(); ++i) {
      if (limit > 0 && static_cast<int64_t>(out.size()) == limit - 1) {
        out.push_back(Value::String(s.substr(cps[i])));
        return Value::List(std::move(out));
      }
      size_t end = i + 1 < cps.size() ? cps[i + 1] : s.size();
      out.push_back(Value::String(s.substr(cps[i], end - cps[i])));
    }
    return Value::List(std::move(out));
  }
  size_t pos = 0;
  while (limit < 0 || static_cast<int64_t>(out.size()) < limit - 1) {
    size_t hit = s.find(sep, pos);
    if (hit == std::string::npos) break;
    out.push_back(Value::String(s.substr(pos, hit - pos)));
    pos = hit + sep.size();
  }
  out.push_back(Value::String(s.substr(pos)));
  return Value::List(std::move(out));
}

Value Substring(std::span<const Value> a) {
  if (!IsStr(a[0]) || !IsInt(a[1]) || (a.size() == 3 && !IsInt(a[2]))) {
    return ArgError("substring", a);
  }
  const std::string& s = a[0].str();
  std::vector<size_t> cps = CodePointOffsets(s);
  int64_t n = static_cast<int64_t>(cps.size());
  int64_t start = a[1].int_value();
  int64_t end = a.size() == 3 ? a[2].int_value() : n;
  if (start < 0 || start > n) return Value::Error(util::Cat("index out of range: ", start));
  if (end < 0 || end > n) return Value::Error(util::Cat("index out of range: ", end));
  if (start > end) {
    return Value::Error(util::Cat("invalid substring range. start: ", start, ", end: ", end));
  }
  size_t b = ByteAt(s, cps, start);
  return Value::String(s.substr(b, ByteAt(s, cps, end) - b));
}

bool IsUnicodeSpace(const std::string& s, size_t i, size_t* len) {
  auto c = static_cast<unsigned char>(s[i]);
  *len = 1;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return true;
  // U+0085, U+00A0 (2 bytes); U+1680, U+2000-200A, U+2028, U+2029, U+202F, U+205F, U+3000.
  if (c == 0xC2 && i + 1 < s.size()) {
    auto d = static_cast<unsigned char>(s[i + 1]);
    *len = 2;
    return d == 0x85 || d == 0xA0;
  }
  if ((c == 0xE1 || c == 0xE2 || c == 0xE3) && i + 2 < s.size()) {
    uint32_t cp = ((c & 0x0F) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3F) << 6) |
                  (static_cast<unsigned char>(s[i + 2]) & 0x3F);
    *len = 3;
    return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
  }
  return false;
}

Value Trim(std::span<const Value> a) {
  if (!IsStr(a[0])) return ArgError("trim", a);
  const std::string& s = a[0].str();
  std::vector<size_t> cps = CodePointOffsets(s);
  size_t first = 0, last = cps.size();
  size_t len;
  while (first < last && IsUnicodeSpace(s, cps[first], &len)) ++first;
  while (last > first && IsUnicodeSpace(s, cps[last - 1], &len)) --last;
  size_t b = first < cps.size() ? cps[first] : s.size();
  size_t e = last < cps.size() ? cps[last] : s.size();
  return Value::String(s.substr(b, e - b));
}

Value Reverse(std::span<const Value> a) {
  if (a[0].kind() == Kind::kList) {
    std::vector<Value> items(a[0].list().rbegin(), a[0].list().rend());
    return Value::List(std::move(items));
  }
  if (!IsStr(a[0])) return ArgError("reverse", a);
  const std::string& s = a[0].str();
  std::vector<size_t> cps = CodePointOffsets(s);
  std::string out;
  for (size_t i = cps.size(); i-- > 0;) {
    size_t end = i + 1 < cps.size() ? cps[i + 1] : s.size();
    out.append(s, cps[i], end - cps[i]);
  }
  return Value::String(std::move(out));
}

Value Join(std::span<const Value> a) {
  if (a[0].kind() != Kind::kList || (a.size() == 2 && !IsStr(a[1]))) return ArgError("join", a);
  std::string sep = a.size() == 2 ? a[1].str() : "";
  std::string out;
  bool first = true;
  for (const Value& v : a[0].list()) {
    if (!IsStr(v)) return ArgError("join", a);
    if (!first) out += sep;
    first = false;
    out += v.str();
  }
  return Value::String(std::move(out));
}

Value Quote(std::span<const Value> a) {
  if (!IsStr(a[0])) return ArgError("strings.quote", a);
  std::string out = "\"";
  for (char c : a[0].str()) {
    switch (c) {
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        out.push_back(c);
    }
  }
  out += "\"";
  return Value::String(std::move(out));
}

Value CharAtFn(std::span<const Value> a) { return CharAt(a); }
Value IndexOfFn(std::span<const Value> a) {
  if (a[0].kind() == Kind::kList) {
    for (size_t i = 0; i < a[0].list().size(); ++i) {
      if (Equal(a[0].list()[i], a[1])) return Value::Int(static_cast<int64_t>(i));
    }
    return Value::Int(-1);
  }
  return IndexOf(a, false);
}
Value LastIndexOfFn(std::span<const Value> a) {
  if (a[0].kind() == Kind::kList) {
    for (size_t i = a[0].list().size(); i-- > 0;) {
      if (Equal(a[0].list()[i], a[1])) return Value::Int(static_cast<int64_t>(i));
    }
    return Value::Int(-1);
  }
  return IndexOf(a, true);
}
Value LowerFn(std::span<const Value> a) { return CaseAscii(a, false); }
Value UpperFn(std::span<const Value> a) { return CaseAscii(a, true); }

constexpr LibraryOverload kStrings[] = {
    {"charAt", true, 2, &CharAtFn},
    {"indexOf", true, 2, &IndexOfFn},
    {"indexOf", true, 3, &IndexOfFn},
    {"lastIndexOf", true, 2, &LastIndexOfFn},
    {"lastIndexOf", true, 3, &LastIndexOfFn},
    {"lowerAscii", true, 1, &LowerFn},
    {"upperAscii", true, 1, &UpperFn},
    {"replace", true, 3, &Replace},
    {"replace", true, 4, &Replace},
    {"split", true, 2, &Split},
    {"split", true, 3, &Split},
    {"substring", true, 2, &Substring},
    {"substring", true, 3, &Substring},
    {"trim", true, 1, &Trim},
    {"reverse", true, 1, &Reverse},
    {"join", true, 1, &Join},
    {"join", true, 2, &Join},
    {"strings.quote", false, 1, &Quote},
};

}  // namespace

std::span<const LibraryOverload> StringsLibrary() { return kStrings; }

}  // namespace gpuplane::cel
