#include "cel/lexer.h"

#include <cerrno>
#include <cstdlib>

#include "util/strings.h"

namespace gpuplane::cel {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

bool IsReservedWord(std::string_view w) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  for (std::string_view r : kReserved) {
    if (r == w) return true;
  }
  return false;
}

Token Lexer::Error(size_t at, std::string message) {
  Token t;
  t.kind = Token::Kind::kError;
  t.pos = static_cast<int32_t>(at);
  t.str = std::move(message);
  pos_ = s_.size();
  return t;
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < s_.size()) {
    char c = s_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  Token t;
  t.pos = static_cast<int32_t>(pos_);
  if (pos_ >= s_.size()) return t;
  size_t start = pos_;
  char c = s_[pos_];
  if (IsDigit(c) || (c == '.' && pos_ + 1 < s_.size() && IsDigit(s_[pos_ + 1]))) return Number();
  if (IsIdentStart(c)) {
    // String prefixes: r, b, rb, br in any case, directly followed by a quote.
    size_t p = pos_;
    Prefix prefix;
    for (int i = 0; i < 2 && p < s_.size(); ++i) {
      char l = static_cast<char>(s_[p] | 0x20);
      if (l == 'r' && !prefix.raw) {
        prefix.raw = true;
      } else if (l == 'b' && prefix.literal == Literal::kString) {
        prefix.literal = Literal::kBytes;
      } else {
        break;
      }
      ++p;
      if (p < s_.size() && (s_[p] == '"' || s_[p] == '\'')) {
        pos_ = p;
        return Quoted(prefix, start);
      }
    }
    while (pos_ < s_.size() && IsIdentChar(s_[pos_])) ++pos_;
    t.kind = Token::Kind::kIdent;
    t.text = s_.substr(start, pos_ - start);
    return t;
  }
  if (c == '"' || c == '\'') return Quoted(Prefix{}, start);
  if (c == '`') {  // quoted identifier (field names such as `content-type`)
    size_t end = s_.find('`', pos_ + 1);
    if (end == std::string_view::npos) return Error(start, "unterminated quoted identifier");
    t.kind = Token::Kind::kIdent;
    t.text = s_.substr(start, end + 1 - start);
    t.str = std::string(s_.substr(start + 1, end - start - 1));
    pos_ = end + 1;
    return t;
  }
  static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
  for (std::string_view op : kTwo) {
    if (s_.substr(pos_, 2) == op) {
      pos_ += 2;
      t.kind = Token::Kind::kPunct;
      t.text = op;
      return t;
    }
  }
  static constexpr std::string_view kOne = "<>!+-*/%?:.,[](){}";
  if (kOne.find(c) != std::string_view::npos) {
    ++pos_;
    t.kind = Token::Kind::kPunct;
    t.text = s_.substr(start, 1);
    return t;
  }
  if (c == '=') return Error(start, "unexpected '=' (use == to compare)");
  return Error(start, std::string("unexpected character '") + c + "'");
}

Token Lexer::Number() {
  size_t start = pos_;
  Token t;
  t.pos = static_cast<int32_t>(start);
  if (s_.substr(pos_, 2) == "0x" || s_.substr(pos_, 2) == "0X") {
    pos_ += 2;
    size_t digits = pos_;
    uint64_t v = 0;
    bool overflow = false;
    while (pos_ < s_.size() && IsHex(s_[pos_])) {
      if (v > (UINT64_MAX >> 4)) overflow = true;
      v = (v << 4) | static_cast<uint64_t>(HexValue(s_[pos_]));
      ++pos_;
    }
    if (pos_ == digits) return Error(start, "malformed hexadecimal literal");
    t.uint_value = v;
    t.int_overflow = overflow;
    t.kind = Token::Kind::kInt;
    if (pos_ < s_.size() && (s_[pos_] == 'u' || s_[pos_] == 'U')) {
      ++pos_;
      t.kind = Token::Kind::kUint;
    }
    t.text = s_.substr(start, pos_ - start);
    if (overflow) return Error(start, "integer literal out of range");
    return t;
  }
  bool is_float = false;
  while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
  if (pos_ + 1 < s_.size() && s_[pos_] == '.' && IsDigit(s_[pos_ + 1])) {
    is_float = true;
    ++pos_;
    while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
  }
  if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
    size_t p = pos_ + 1;
    if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
    if (p < s_.size() && IsDigit(s_[p])) {
      is_float = true;
      pos_ = p;
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
  }
  t.text = s_.substr(start, pos_ - start);
  if (is_float) {
    std::string text(t.text);
    errno = 0;
    t.double_value = std::strtod(text.c_str(), nullptr);
    t.kind = Token::Kind::kDouble;
    return t;
  }
  uint64_t v = 0;
  for (char d : t.text) {
    uint64_t digit = static_cast<uint64_t>(d - '0');
    if (v > (UINT64_MAX - digit) / 10) t.int_overflow = true;
    v = v * 10 + digit;
  }
  t.uint_value = v;
  t.kind = Token::Kind::kInt;
  if (pos_ < s_.size() && (s_[pos_] == 'u' || s_[pos_] == 'U')) {
    ++pos_;
    t.kind = Token::Kind::kUint;
    t.text = s_.substr(start, pos_ - start);
  }
  if (t.int_overflow) return Error(start, "integer literal out of range");
  return t;
}

namespace {

// A one-character escape's value, or -1.
int SimpleEscape(char e) {
  switch (e) {
    case '\\':
    case '?':
    case '"':
    case '\'':
    case '`':
      return e;
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      return -1;
  }
}

}  // namespace

std::string Lexer::Escape(char e, Literal literal, std::string& out) {
  const bool bytes = literal == Literal::kBytes;
  if (int c = SimpleEscape(e); c >= 0) {
    out.push_back(static_cast<char>(c));
    return "";
  }
  if (e == 'x' || e == 'X' || e == 'u' || e == 'U') return HexEscape(e, literal, out);
  if (e >= '0' && e <= '3') {
    uint32_t v = static_cast<uint32_t>(e - '0');
    for (int i = 0; i < 2; ++i) {
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '7') {
        return "malformed octal escape (three digits needed)";
      }
      v = v * 8 + static_cast<uint32_t>(s_[pos_++] - '0');
    }
    if (bytes) {
      out.push_back(static_cast<char>(v));
    } else {
      util::AppendUtf8(out, v);
    }
    return "";
  }
  return std::string("invalid escape sequence \\") + e;
}

std::string Lexer::HexEscape(char e, Literal literal, std::string& out) {
  const bool bytes = literal == Literal::kBytes;
  int n = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
  if (bytes && (e == 'u' || e == 'U')) {
    return "\\u and \\U escapes are not allowed in bytes literals";
  }
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) {
    if (pos_ >= s_.size() || !IsHex(s_[pos_])) return "malformed hex escape";
    v = v * 16 + static_cast<uint32_t>(HexValue(s_[pos_++]));
  }
  if (bytes) {
    out.push_back(static_cast<char>(v));
    return "";
  }
  if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return "invalid Unicode code point in escape";
  util::AppendUtf8(out, v);
  return "";
}

// REQUIRES: pos_ at the opening quote.
Token Lexer::Quoted(Prefix prefix, size_t start) {
  char q = s_[pos_];
  bool triple = s_.substr(pos_, 3) == std::string(3, q);
  size_t qlen = triple ? 3 : 1;
  pos_ += qlen;
  std::string out;
  while (true) {
    if (pos_ >= s_.size()) return Error(start, "unterminated string literal");
    char c = s_[pos_];
    if (triple ? s_.substr(pos_, 3) == std::string(3, q) : c == q) {
      pos_ += qlen;
      break;
    }
    if (!triple && (c == '\n' || c == '\r')) {
      return Error(start, "newline in string literal (use a triple-quoted string)");
    }
    if (c != '\\' || prefix.raw) {
      out.push_back(c);
      ++pos_;
      continue;
    }
    size_t esc = pos_;
    ++pos_;
    if (pos_ >= s_.size()) return Error(esc, "unterminated escape sequence");
    if (std::string problem = Escape(s_[pos_++], prefix.literal, out); !problem.empty()) {
      return Error(esc, std::move(problem));
    }
  }
  Token t;
  t.kind = prefix.literal == Literal::kBytes ? Token::Kind::kBytes : Token::Kind::kString;
  t.pos = static_cast<int32_t>(start);
  t.text = s_.substr(start, pos_ - start);
  t.str = std::move(out);
  return t;
}

}  // namespace gpuplane::cel
