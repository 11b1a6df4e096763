#include "api/writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "api/internal/yaml_scalar.h"
#include "util/strings.h"

namespace gpuplane::api {
namespace {

// JSON has no '+' sign, leading zeros, ".5" or ".inf": normalize numbers read from YAML.
void AppendNumber(std::string& out, const Doc& d) {
  const std::string& t = d.text();
  if (d.kind() == Doc::Kind::kInt) {
    size_t i = 0;
    bool neg = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) neg = t[i++] == '-';
    while (i + 1 < t.size() && t[i] == '0') ++i;
    if (neg && t.substr(i) != "0") out.push_back('-');
    out.append(t, i, std::string::npos);
    return;
  }
  std::string lower;
  for (char c : t) lower.push_back(static_cast<char>(c | 0x20));
  double v = (lower.find("inf") != std::string::npos)
                 ? (t[0] == '-' ? -HUGE_VAL : HUGE_VAL)
                 : (lower.find("nan") != std::string::npos ? NAN : std::strtod(t.c_str(), nullptr));
  if (!std::isfinite(v)) {
    util::AppendJsonString(out, t);  // JSON cannot hold it; keep the text.
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest representation that round-trips.
  for (int prec = 1; prec <= 17; ++prec) {
    char tmp[32];
    std::snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (std::strtod(tmp, nullptr) == v) {
      std::snprintf(buf, sizeof buf, "%s", tmp);
      break;
    }
  }
  out += buf;
}

void Newline(std::string& out, int indent, int depth) {
  if (indent == 0) return;
  out.push_back('\n');
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(depth), ' ');
}

void Json(std::string& out, const Doc& d, int indent, int depth) {
  switch (d.kind()) {
    case Doc::Kind::kNull:
      out += "null";
      return;
    case Doc::Kind::kBool:
      out += d.bool_value() ? "true" : "false";
      return;
    case Doc::Kind::kInt:
    case Doc::Kind::kFloat:
      AppendNumber(out, d);
      return;
    case Doc::Kind::kString:
      util::AppendJsonString(out, d.text());
      return;
    case Doc::Kind::kMap: {
      if (d.entries().empty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      bool first = true;
      for (const DocEntry& e : d.entries()) {
        if (!first) out.push_back(',');
        first = false;
        Newline(out, indent, depth + 1);
        util::AppendJsonString(out, e.key);
        out += indent ? ": " : ":";
        Json(out, e.value, indent, depth + 1);
      }
      Newline(out, indent, depth);
      out.push_back('}');
      return;
    }
    case Doc::Kind::kSeq: {
      if (d.items().empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      bool first = true;
      for (const Doc& item : d.items()) {
        if (!first) out.push_back(',');
        first = false;
        Newline(out, indent, depth + 1);
        Json(out, item, indent, depth + 1);
      }
      Newline(out, indent, depth);
      out.push_back(']');
      return;
    }
  }
}

// Whether a code point above U+007F may appear as itself in a YAML scalar: from U+00A0 on
// (YAML's printable set), except the line breaks YAML 1.1 adds (NEL, U+2028, U+2029), the
// byte-order mark and the non-characters U+FFFE and U+FFFF.
bool YamlPrintableAbove7F(uint32_t cp) {
  return cp >= 0xA0 && cp != 0x2028 && cp != 0x2029 && cp != 0xFEFF && cp != 0xFFFE && cp != 0xFFFF;
}

// Whether every non-ASCII character of `s` is valid UTF-8 and printable in YAML (ASCII
// controls are escaped by AppendJsonString).
bool YamlPrintable(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    if (!util::NextUtf8(s, i, cp) || !YamlPrintableAbove7F(cp)) return false;
  }
  return true;
}

// `s` as a double-quoted YAML scalar: JSON's escapes (valid YAML escapes too), and a
// character YAML cannot hold as itself as \uXXXX. A byte that is not UTF-8 becomes U+FFFD: no
// YAML string can hold it (the readers reject such input, so only strings built in memory
// can have one).
void AppendYamlQuoted(std::string& out, std::string_view s) {
  if (YamlPrintable(s)) {
    util::AppendJsonString(out, s);
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string run;  // printable characters not yet written
  auto flush = [&] {
    const std::string q = util::JsonQuote(run);
    out.append(q, 1, q.size() - 2);
    run.clear();
  };
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    uint32_t cp = 0xFFFD;
    if (!util::NextUtf8(s, i, cp)) {
      ++i;
      util::AppendUtf8(run, 0xFFFD);
      continue;
    }
    if (cp < 0x80 || YamlPrintableAbove7F(cp)) {
      run.append(s, start, i - start);
      continue;
    }
    flush();
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(cp >> shift) & 0xF]);
  }
  flush();
  out.push_back('"');
}

bool PlainSafe(const std::string& s) {
  if (s.empty() || s.size() > 200 || !YamlPrintable(s)) return false;
  if (internal::ResolvePlain(s, 0).kind() != Doc::Kind::kString) return false;
  static constexpr std::string_view kBadFirst = "-?:,[]{}#&*!|>'\"%@` \t";
  if (kBadFirst.find(s[0]) != std::string_view::npos) return false;
  if (s.back() == ' ') return false;
  // YAML 1.1 readers (kubectl's included) take 0x1F, 0777, 1_000 and dates as numbers or
  // timestamps: quote number-like strings that contain such markers.
  bool numberish = (s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '.';
  bool radix_or_octal = s[0] == '0' && s.size() > 1 && s[1] != '.';  // 0x1F, 0o7, 0b1, 0777
  if (numberish && (radix_or_octal || s.find_first_of("-_") != std::string::npos)) return false;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == ':' || c == '#') return false;
  }
  return true;
}

void YamlScalar(std::string& out, const Doc& d) {
  switch (d.kind()) {
    case Doc::Kind::kNull:
      out += "null";
      return;
    case Doc::Kind::kBool:
      out += d.bool_value() ? "true" : "false";
      return;
    case Doc::Kind::kInt:
    case Doc::Kind::kFloat:
      out += d.text();
      return;
    case Doc::Kind::kString:
      if (PlainSafe(d.text())) {
        out += d.text();
      } else {
        AppendYamlQuoted(out, d.text());
      }
      return;
    default:
      return;
  }
}

bool IsEmptyContainer(const Doc& d) {
  return (d.is_map() && d.entries().empty()) || (d.is_seq() && d.items().empty());
}

void YamlKey(std::string& out, const std::string& key) {
  if (PlainSafe(key)) {
    out += key;
  } else {
    AppendYamlQuoted(out, key);
  }
}

// Writes `d` as the value of a block context at `depth` (2 spaces per level). The caller has
// already written the key (or "- ") and the cursor stands after it.
void YamlBlock(std::string& out, const Doc& d, int depth, bool after_dash) {
  if (d.is_scalar() || IsEmptyContainer(d)) {
    out.push_back(' ');
    if (d.is_map()) {
      out += "{}";
    } else if (d.is_seq()) {
      out += "[]";
    } else {
      YamlScalar(out, d);
    }
    out.push_back('\n');
    return;
  }
  std::string pad(static_cast<size_t>(2 * depth), ' ');
  if (d.is_map()) {
    bool first = true;
    for (const DocEntry& e : d.entries()) {
      if (first && after_dash) {
        out.push_back(' ');
      } else {
        if (first) out.push_back('\n');
        out += pad;
      }
      first = false;
      YamlKey(out, e.key);
      out.push_back(':');
      YamlBlock(out, e.value, depth + 1, false);
    }
    return;
  }
  // Sequences: items at the parent's indentation, like kubectl.
  int item_depth = after_dash ? depth : depth - 1;
  std::string item_pad(static_cast<size_t>(2 * item_depth), ' ');
  bool first = true;
  for (const Doc& item : d.items()) {
    if (first && after_dash) {
      out.push_back(' ');
    } else {
      if (first) out.push_back('\n');
      out += item_pad;
    }
    first = false;
    out.push_back('-');
    YamlBlock(out, item, item_depth + 1, true);
  }
}

}  // namespace

void AppendJson(std::string& out, const Doc& doc, int indent) { Json(out, doc, indent, 0); }

std::string ToJson(const Doc& doc, int indent) {
  std::string out;
  AppendJson(out, doc, indent);
  return out;
}

void AppendYaml(std::string& out, const Doc& doc) {
  if (!doc.is_map() || doc.entries().empty()) {
    AppendJson(out, doc);  // JSON is valid YAML; only maps get block style at the top.
    out.push_back('\n');
    return;
  }
  for (const DocEntry& e : doc.entries()) {
    YamlKey(out, e.key);
    out.push_back(':');
    YamlBlock(out, e.value, 1, false);
  }
}

std::string ToYaml(const Doc& doc) {
  std::string out;
  AppendYaml(out, doc);
  return out;
}

}  // namespace gpuplane::api
