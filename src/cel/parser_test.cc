#include "cel/parser.h"

#include "gtest/gtest.h"

namespace gpuplane::cel {
namespace {

std::string ErrorOf(std::string_view source) {
  absl::StatusOr<ExprPtr> e = Parse(source);
  EXPECT_FALSE(e.ok()) << source;
  return e.ok() ? "" : std::string(e.status().message());
}

TEST(ParserTest, SyntaxErrorsShowLineColumnSourceAndCaret) {
  EXPECT_EQ(ErrorOf("device.driver == "),
            "ERROR: <input>:1:18: mismatched input '<EOF>' expecting an expression\n"
            " | device.driver == \n"
            " | .................^");
  EXPECT_EQ(ErrorOf("a &&\n  b c"),
            "ERROR: <input>:2:5: mismatched input 'c' expecting <EOF>\n"
            " |   b c\n"
            " | ....^");
  EXPECT_NE(ErrorOf("a = 1").find("use == to compare"), std::string::npos);
  EXPECT_NE(ErrorOf("1 + 'abc").find("unterminated string literal"), std::string::npos);
  EXPECT_NE(ErrorOf("has(a)").find("invalid argument to has() macro"), std::string::npos);
  EXPECT_NE(ErrorOf("[1].all(1, true)").find("argument must be a simple name"), std::string::npos);
  EXPECT_NE(ErrorOf("if").find("reserved identifier"), std::string::npos);
  EXPECT_NE(ErrorOf("9223372036854775808").find("invalid int literal"), std::string::npos);
}

TEST(ParserTest, LimitsAreErrorsNotCrashes) {
  EXPECT_NE(ErrorOf(std::string(300, '(') + "1" + std::string(300, ')')).find("nests too deeply"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(200, '-') + "!" + std::string(10, '[')).find("ERROR"),
            std::string::npos);
  std::string big = "1";
  while (big.size() <= size_t{10} * 1024) big += " + 1";
  EXPECT_NE(ErrorOf(big).find("the limit is 10240"), std::string::npos);
}

TEST(ParserTest, AcceptsTheFullSyntax) {
  for (const char* ok :
       {"-9223372036854775808", "0x7fffffffffffffff", "1u + 2U", "1e3 + .5 + 2.5e-1",
        "r'\\d' + R\"x\" + '''multi\nline''' + \"\"\"q\"\"\"", "b'\\xff' + B\"a\"",
        "a.b.c[1]['k'].?d[?0]", "{1: 'a', 'b': [1, 2,], ?'c': optional.none()}",
        "x ? y : z ? w : v", "!!!a || -(-b) && c in [1]", "has(a.b) && a.all(x, x > 0)",
        "[1, 2].exists_one(x, x == 1) && [1].map(x, x * 2).filter(x, x > 0).size() > 0",
        "cel.bind(x, 1, x + 1)", ".a.b", "{ 'while': 1 }.while", "a.`content-type`",
        "// comment\n1"}) {
    absl::StatusOr<ExprPtr> e = Parse(ok);
    EXPECT_TRUE(e.ok()) << ok << ": " << e.status();
  }
}

}  // namespace
}  // namespace gpuplane::cel
