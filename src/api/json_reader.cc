// A small, fast JSON reader (RFC 8259) that records the line of every value. Hand-written
// because the JSON libraries packaged for Debian do not report source lines.
#include <cstring>

#include "api/reader.h"
#include "util/strings.h"

namespace gpuplane::api {
namespace {

class JsonReader {
 public:
  JsonReader(std::string_view text, std::string_view file) : s_(text), file_(file) {}

  absl::StatusOr<std::vector<Doc>> ReadAll() {
    std::vector<Doc> docs;
    SkipSpace();
    if (pos_ < s_.size() && static_cast<unsigned char>(s_[pos_]) == 0xEF) SkipBom();
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size()) break;
      Doc d = Value(0);
      if (error_.empty() && pos_ < s_.size() && d.kind() != Doc::Kind::kString && d.is_scalar() &&
          s_[pos_] != ' ' && s_[pos_] != '\n' && s_[pos_] != '\t' && s_[pos_] != '\r') {
        Fail("unexpected character after a value");
      }
      if (!error_.empty()) return absl::InvalidArgumentError(error_);
      docs.push_back(std::move(d));
    }
    return docs;
  }

 private:
  void SkipBom() {
    if (s_.substr(pos_, 3) == "\xEF\xBB\xBF") pos_ += 3;
  }

  void SkipSpace() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }

  void Fail(std::string_view what) {
    if (!error_.empty()) return;
    error_ = util::Cat(file_, ":", line_, ":", pos_ - line_start_ + 1, ": invalid JSON: ", what);
    pos_ = s_.size();
  }

  Doc Value(int depth) {
    if (depth > kMaxDocDepth) {
      Fail("nesting deeper than 256 levels");
      return Doc();
    }
    SkipSpace();
    if (pos_ >= s_.size()) {
      Fail("unexpected end of input, expected a value");
      return Doc();
    }
    uint32_t line = line_;
    char c = s_[pos_];
    switch (c) {
      case '{':
        return Object(depth, line);
      case '[':
        return Array(depth, line);
      case '"':
        return Doc::String(String(), line);
      case 't':
        return Literal("true", Doc::Kind::kBool, line);
      case 'f':
        return Literal("false", Doc::Kind::kBool, line);
      case 'n':
        return Literal("null", Doc::Kind::kNull, line);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number(line);
        Fail(util::Cat("unexpected character '", std::string_view(&s_[pos_], 1), "'"));
        return Doc();
    }
  }

  Doc Literal(std::string_view word, Doc::Kind kind, uint32_t line) {
    if (s_.substr(pos_, word.size()) != word) {
      Fail("unknown literal (expected true, false or null)");
      return Doc();
    }
    pos_ += word.size();
    return Doc::Scalar(kind, kind == Doc::Kind::kNull ? "" : std::string(word), line);
  }

  Doc Number(uint32_t line) {
    size_t start = pos_;
    bool is_float = false;
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (pos_ < s_.size() && s_[pos_] >= '1' && s_[pos_] <= '9') {
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    } else {
      Fail("malformed number");
      return Doc();
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      is_float = true;
      ++pos_;
      if (!Digits()) return Doc();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!Digits()) return Doc();
    }
    return Doc::Scalar(is_float ? Doc::Kind::kFloat : Doc::Kind::kInt,
                       std::string(s_.substr(start, pos_ - start)), line);
  }

  bool Digits() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    if (pos_ == start) {
      Fail("malformed number");
      return false;
    }
    return true;
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool Hex4(uint32_t& out) {
    if (pos_ + 4 > s_.size()) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int h = Hex(s_[pos_ + i]);
      if (h < 0) return false;
      out = out * 16 + static_cast<uint32_t>(h);
    }
    pos_ += 4;
    return true;
  }

  // One escape after the backslash, appended to `out`; false (failed) on a bad one.
  bool Escape(char e, std::string& out) {
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        return true;
      case 'b':
        out.push_back('\b');
        return true;
      case 'f':
        out.push_back('\f');
        return true;
      case 'n':
        out.push_back('\n');
        return true;
      case 'r':
        out.push_back('\r');
        return true;
      case 't':
        out.push_back('\t');
        return true;
      case 'u':
        return UnicodeEscape(out);
      default:
        Fail("unknown escape in string");
        return false;
    }
  }

  // \uXXXX, or a surrogate pair of them, as UTF-8.
  bool UnicodeEscape(std::string& out) {
    uint32_t cp;
    if (!Hex4(cp)) {
      Fail("bad \\u escape (expected 4 hex digits)");
      return false;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t lo;
      if (s_.substr(pos_, 2) != "\\u" || (pos_ += 2, !Hex4(lo)) || lo < 0xDC00 || lo > 0xDFFF) {
        Fail("unpaired UTF-16 surrogate in \\u escape");
        return false;
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      Fail("unpaired UTF-16 surrogate in \\u escape");
      return false;
    }
    util::AppendUtf8(out, cp);
    return true;
  }

  // REQUIRES: s_[pos_] == '"'.
  std::string String() {
    ++pos_;
    std::string out;
    size_t run = pos_;
    while (true) {
      // Copy runs of ordinary characters in one append; a run with non-ASCII bytes must be
      // UTF-8 (as YAML input must be, so every string read can be written back).
      bool ascii = true;
      while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\\' &&
             static_cast<unsigned char>(s_[pos_]) >= 0x20) {
        ascii = ascii && static_cast<unsigned char>(s_[pos_]) < 0x80;
        ++pos_;
      }
      const std::string_view chars = s_.substr(run, pos_ - run);
      uint32_t cp = 0;
      for (size_t i = 0; !ascii && i < chars.size();) {
        if (!util::NextUtf8(chars, i, cp)) {
          pos_ = run + i;  // the error names the first byte that is not UTF-8
          Fail("invalid UTF-8 in string");
          return out;
        }
      }
      out.append(chars);
      if (pos_ >= s_.size()) {
        Fail("unterminated string");
        return out;
      }
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c != '\\') {
        Fail("control character in string (escape it)");
        return out;
      }
      ++pos_;
      if (pos_ >= s_.size()) {
        Fail("unterminated string");
        return out;
      }
      if (!Escape(s_[pos_++], out)) return out;
      run = pos_;
    }
  }

  // Children are collected on scratch stacks shared by all containers and moved into an
  // exactly-sized vector when the container closes: no regrowth of every map and list.
  Doc Object(int depth, uint32_t line) {
    ++pos_;
    Doc d = Doc::Map(line);
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return d;
    }
    size_t base = entries_.size();
    while (error_.empty()) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        Fail("expected a string key");
        break;
      }
      uint32_t key_line = line_;
      std::string key = String();
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') {
        Fail("expected ':' after key");
        break;
      }
      ++pos_;
      Doc value = Value(depth + 1);
      entries_.push_back(DocEntry{std::move(key), key_line, std::move(value)});
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        break;
      }
      Fail(pos_ >= s_.size() ? "unexpected end of input, expected ',' or '}'"
                             : "expected ',' or '}' in object");
    }
    d.entries().assign(
        std::make_move_iterator(entries_.begin() + static_cast<std::ptrdiff_t>(base)),
        std::make_move_iterator(entries_.end()));
    entries_.resize(base);
    return d;
  }

  Doc Array(int depth, uint32_t line) {
    ++pos_;
    Doc d = Doc::Seq(line);
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return d;
    }
    size_t base = items_.size();
    while (error_.empty()) {
      Doc item = Value(depth + 1);
      items_.push_back(std::move(item));
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        break;
      }
      Fail(pos_ >= s_.size() ? "unexpected end of input, expected ',' or ']'"
                             : "expected ',' or ']' in array");
    }
    d.items().assign(std::make_move_iterator(items_.begin() + static_cast<std::ptrdiff_t>(base)),
                     std::make_move_iterator(items_.end()));
    items_.resize(base);
    return d;
  }

  std::string_view s_;
  std::string_view file_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  uint32_t line_ = 1;
  std::string error_;
  std::vector<DocEntry> entries_;
  std::vector<Doc> items_;
};

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadJson(std::string_view text, std::string_view file) {
  return JsonReader(text, file).ReadAll();
}

Format DetectFormat(std::string_view path, std::string_view text) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends_with(".json")) return Format::kJson;
  if (ends_with(".yaml") || ends_with(".yml")) return Format::kYaml;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return (c == '{' || c == '[') ? Format::kJson : Format::kYaml;
  }
  return Format::kYaml;
}

absl::StatusOr<std::vector<Doc>> ReadDocs(std::string_view text, std::string_view file,
                                          Format format) {
  return format == Format::kJson ? ReadJson(text, file) : ReadYaml(text, file);
}

}  // namespace gpuplane::api
