// CEL lexer: tokens with byte offsets; decodes number and string/bytes literals (every quote
// and escape form of the CEL spec). Internal to cel/. Not thread-safe (one per parse).
// It borrows the source text, which must outlive it.
#ifndef GPUPLANE_CEL_LEXER_H_
#define GPUPLANE_CEL_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuplane::cel {

struct Token {
  enum class Kind : uint8_t { kEof, kInt, kUint, kDouble, kString, kBytes, kIdent, kPunct, kError };
  Kind kind = Kind::kEof;
  int32_t pos = 0;
  std::string_view text;      // source text of the token
  std::string str;            // decoded string / bytes literal; error message for kError
  uint64_t uint_value = 0;    // kInt (magnitude, sign applied by the parser) and kUint
  bool int_overflow = false;  // kInt magnitude above 2^64-1
  double double_value = 0;
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : s_(source) {}
  Token Next();
  size_t pos() const { return pos_; }

 private:
  void SkipSpaceAndComments();
  Token Number();
  enum class Literal { kString, kBytes };
  // A string literal's prefix: r (escapes not processed) and b (bytes).
  struct Prefix {
    bool raw = false;
    Literal literal = Literal::kString;
  };
  Token Quoted(Prefix prefix, size_t start);
  // The escape after a backslash (pos_ past `e`), appended to `out`: "" or the problem.
  std::string Escape(char e, Literal literal, std::string& out);
  std::string HexEscape(char e, Literal literal, std::string& out);
  Token Error(size_t at, std::string message);

  std::string_view s_;
  size_t pos_ = 0;
};

bool IsReservedWord(std::string_view ident);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_LEXER_H_
