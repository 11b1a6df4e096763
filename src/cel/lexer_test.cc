// Literal decoding per the CEL language definition, including the escapes for which the
// shared conformance vectors are wrong (see testdata/cel/conformance-known-wrong.txt).
#include "cel/lexer.h"

#include "gtest/gtest.h"

namespace gpuplane::cel {
namespace {

Token Lex(std::string_view s) {
  Lexer lexer(s);
  return lexer.Next();
}

TEST(LexerTest, UnicodeEscapesAreCodePoints) {
  EXPECT_EQ(Lex(R"(' \u0000 \u000A \u007F \u0100 \uFFFB ')").str,
            std::string(" \0 \n \x7f \xc4\x80 \xef\xbf\xbb ", 14));
  EXPECT_EQ(Lex(R"(" \U00010000 \U0001F62C ")").str, " \xf0\x90\x80\x80 \xf0\x9f\x98\xac ");
  EXPECT_EQ(Lex(R"(''' \x4a \X4D \u01aB \U000001aB ''')").str, " J M \xc6\xab \xc6\xab ");
  EXPECT_EQ(Lex(R"(' \U00088888 ')").str, " \xf2\x88\xa2\x88 ");
  EXPECT_EQ(Lex(R"(' \377 ')").str, " \xc3\xbf ");  // octal in a string: code point U+00FF
}

TEST(LexerTest, BytesLiterals) {
  EXPECT_EQ(Lex(R"(b''' ? " ' ` ''')").str, " ? \" ' ` ");
  EXPECT_EQ(Lex(R"(b' \377 \xFF ')").str, " \xff \xff ");
  EXPECT_EQ(Lex(R"(b' \u00ff ')").kind, Token::Kind::kError);
  EXPECT_EQ(Lex(R"(B" \x4a ")").str, " J ");
}

TEST(LexerTest, RawStringsKeepBackslashes) {
  EXPECT_EQ(Lex(R"(r" \n \\ ")").str, R"( \n \\ )");
  EXPECT_EQ(Lex(R"(bR''' \a ''')").str, R"( \a )");
}

TEST(LexerTest, BadLiterals) {
  EXPECT_EQ(Lex("'abc").kind, Token::Kind::kError);
  EXPECT_EQ(Lex("'a\nb'").kind, Token::Kind::kError);
  EXPECT_EQ(Lex(R"('\q')").kind, Token::Kind::kError);
  EXPECT_EQ(Lex(R"('\uD800')").kind, Token::Kind::kError);
  EXPECT_EQ(Lex(R"('\U00110000')").kind, Token::Kind::kError);
  EXPECT_EQ(Lex("18446744073709551616").kind, Token::Kind::kError);
  EXPECT_EQ(Lex("0x").kind, Token::Kind::kError);
}

TEST(LexerTest, Numbers) {
  Token t = Lex("0x1F");
  EXPECT_EQ(t.kind, Token::Kind::kInt);
  EXPECT_EQ(t.uint_value, 31u);
  EXPECT_EQ(Lex("18446744073709551615u").kind, Token::Kind::kUint);
  EXPECT_EQ(Lex("1e3").kind, Token::Kind::kDouble);
  EXPECT_EQ(Lex(".5").double_value, 0.5);
  EXPECT_EQ(Lex("2.5e-1").double_value, 0.25);
}

}  // namespace
}  // namespace gpuplane::cel
