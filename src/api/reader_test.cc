#include "api/reader.h"

#include <string>

#include "api/writer.h"
#include "gtest/gtest.h"

namespace gpuplane::api {
namespace {

Doc One(const absl::StatusOr<std::vector<Doc>>& docs) {
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok() || docs->empty()) return Doc();
  EXPECT_EQ(docs->size(), 1u);
  return (*docs)[0];
}

std::string ErrorOf(const absl::StatusOr<std::vector<Doc>>& docs) {
  EXPECT_FALSE(docs.ok());
  return docs.ok() ? "" : std::string(docs.status().message());
}

TEST(JsonReaderTest, ValuesKindsAndLines) {
  Doc d = One(ReadJson("{\n \"a\": 1,\n \"b\": [true, null, -2.5e3],\n \"c\": \"x\\u00e9\\n\"\n}",
                       "t.json"));
  ASSERT_TRUE(d.is_map());
  EXPECT_EQ(d.line(), 1u);
  EXPECT_EQ(d.Find("a")->kind(), Doc::Kind::kInt);
  EXPECT_EQ(d.Find("a")->line(), 2u);
  const Doc& b = *d.Find("b");
  ASSERT_EQ(b.items().size(), 3u);
  EXPECT_TRUE(b.items()[0].bool_value());
  EXPECT_TRUE(b.items()[1].is_null());
  EXPECT_EQ(b.items()[2].kind(), Doc::Kind::kFloat);
  EXPECT_EQ(b.line(), 3u);
  EXPECT_EQ(d.Find("c")->text(), "x\xc3\xa9\n");
  EXPECT_EQ(d.entries()[2].key_line, 4u);
}

TEST(JsonReaderTest, SurrogatePairsAndStreams) {
  Doc d = One(ReadJson(R"({"s":"\ud83d\ude00"})", "t.json"));
  EXPECT_EQ(d.Find("s")->text(), "\xF0\x9F\x98\x80");
  absl::StatusOr<std::vector<Doc>> two = ReadJson("{} \n [1]", "t.json");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
}

TEST(JsonReaderTest, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ErrorOf(ReadJson("{\n  \"a\": tru\n}", "x.json")),
            "x.json:2:8: invalid JSON: unknown literal (expected true, false or null)");
  EXPECT_EQ(ErrorOf(ReadJson("{\"a\": 1,}", "x.json")),
            "x.json:1:9: invalid JSON: expected a string key");
  EXPECT_NE(ErrorOf(ReadJson("[1, 2", "x.json")).find("unexpected end of input"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("\"abc", "x.json")).find("unterminated string"), std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("\"\\ud800\"", "x.json")).find("surrogate"), std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("01", "x.json")).find("unexpected character after a value"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("\"a\tb\"", "x.json")).find("control character"), std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("-", "x.json")).find("malformed number"), std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("1.", "x.json")).find("malformed number"), std::string::npos);
}

TEST(JsonReaderTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  EXPECT_NE(ErrorOf(ReadJson(deep, "deep.json")).find("nesting deeper than 256"),
            std::string::npos);
}

TEST(YamlReaderTest, ScalarResolutionLikeKubernetes) {
  Doc d =
      One(ReadYaml("a: 1\nb: \"1\"\nc: yes\nd: 'no'\ne: ~\nf: 1.5\ng: 80Gi\nh:\ni: 1.2.3\n"
                   "j: -7\nk: .inf\n",
                   "t.yaml"));
  EXPECT_EQ(d.Find("a")->kind(), Doc::Kind::kInt);
  EXPECT_EQ(d.Find("b")->kind(), Doc::Kind::kString);
  EXPECT_EQ(d.Find("c")->kind(), Doc::Kind::kBool);
  EXPECT_TRUE(d.Find("c")->bool_value());
  EXPECT_EQ(d.Find("d")->kind(), Doc::Kind::kString);
  EXPECT_TRUE(d.Find("e")->is_null());
  EXPECT_EQ(d.Find("f")->kind(), Doc::Kind::kFloat);
  EXPECT_EQ(d.Find("g")->kind(), Doc::Kind::kString);
  EXPECT_TRUE(d.Find("h")->is_null());
  EXPECT_EQ(d.Find("i")->kind(), Doc::Kind::kString);
  EXPECT_EQ(d.Find("j")->kind(), Doc::Kind::kInt);
  EXPECT_EQ(d.Find("k")->kind(), Doc::Kind::kFloat);
  EXPECT_EQ(d.Find("g")->line(), 7u);
}

TEST(YamlReaderTest, MultipleDocumentsAndAnchors) {
  absl::StatusOr<std::vector<Doc>> docs =
      ReadYaml("---\na: &x {k: v}\nb: *x\n---\n---\nc: 3\n", "t.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);  // the empty middle document is dropped
  EXPECT_EQ(*(*docs)[0].Find("a"), *(*docs)[0].Find("b"));
}

TEST(YamlReaderTest, ErrorsNameFileAndLine) {
  EXPECT_NE(ErrorOf(ReadYaml("a: 1\nb: [1, 2\n", "x.yaml")).find("x.yaml:"), std::string::npos);
  EXPECT_EQ(ErrorOf(ReadYaml("a: 1\na: 2\n", "x.yaml")),
            "x.yaml:2:4: invalid YAML: duplicate key \"a\"");
  EXPECT_NE(ErrorOf(ReadYaml("? [a]\n: 1\n", "x.yaml")).find("map keys must be scalars"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadYaml("a: *nope\n", "x.yaml")).find("x.yaml:1:"), std::string::npos);
}

TEST(YamlReaderTest, AliasBombIsBounded) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
    prev = c;
  }
  EXPECT_NE(ErrorOf(ReadYaml(bomb, "bomb.yaml")).find("too many alias expansions"),
            std::string::npos);
}

TEST(YamlReaderTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(5000, '[');
  EXPECT_FALSE(ReadYaml(deep, "deep.yaml").ok());
}

TEST(WriterTest, YamlQuotesWhatWouldChangeMeaning) {
  Doc d = Doc::Map();
  for (const char* s :
       {"yes",  "123",         "",           "-x",    "a: b",   "x #y", "1.5",     "null", "~",
        "true", "multi\nline", "tab\there",  " lead", "trail ", "[x]",  "ünïcode", "0x1F", "@at",
        "80Gi", "9.0.0",       "2024-01-01", "0777",  "1_000",  "0b1",  "1g.10gb"}) {
    d.Add(s, Doc::String(s));
  }
  d.Add("n", Doc::Scalar(Doc::Kind::kInt, "42"));
  Doc nested = Doc::Seq();
  nested.Push(Doc::Map());
  nested.Push(Doc::Seq());
  Doc inner = Doc::Map();
  inner.Add("k", Doc::String("v"));
  Doc inner_seq = Doc::Seq();
  inner_seq.Push(Doc::String("a"));
  inner.Add("list", inner_seq);
  nested.Push(inner);
  d.Add("nested", nested);
  std::string yaml = ToYaml(d);
  Doc back = One(ReadYaml(yaml, "round.yaml"));
  EXPECT_EQ(back, d) << yaml;
  // YAML 1.1 readers would take these for numbers or timestamps: they must be quoted.
  for (const char* quoted : {"\"0x1F\"", "\"0777\"", "\"1_000\"", "\"2024-01-01\""}) {
    EXPECT_NE(yaml.find(quoted), std::string::npos) << quoted << " in\n" << yaml;
  }
  for (const char* plain : {": 80Gi\n", ": 9.0.0\n", ": 1g.10gb\n"}) {
    EXPECT_NE(yaml.find(plain), std::string::npos) << plain << " in\n" << yaml;
  }
  Doc from_json = One(ReadJson(ToJson(d, 2), "round.json"));
  EXPECT_EQ(from_json, d);
}

// YAML cannot hold C1 controls, DEL, its own line breaks (NEL, U+2028, U+2029), the
// byte-order mark or U+FFFE/U+FFFF as themselves in a scalar:
// they are escaped, and the YAML reader gets the same strings back.
TEST(WriterTest, YamlEscapesWhatYamlCannotHoldAsItself) {
  Doc d = Doc::Map();
  for (const char* s :
       {"c1 \u0080 \u009f", "del \x7f", "bom \ufeff", "nonchar \uffff \ufffe",
        "nel \u0085 ls \u2028 ps \u2029", "nbsp \u00a0 \U0001F600", "ctrl \x01 \x1f"}) {
    d.Add(s, Doc::String(s));
  }
  std::string yaml = ToYaml(d);
  EXPECT_EQ(One(ReadYaml(yaml, "round.yaml")), d) << yaml;
  // A byte that is not UTF-8 cannot be written to YAML at all: it becomes U+FFFD.
  Doc bad = Doc::Map();
  bad.Add("k", Doc::String("a\xff b"));
  Doc expected = Doc::Map();
  expected.Add("k", Doc::String("a\uFFFD b"));
  EXPECT_EQ(One(ReadYaml(ToYaml(bad), "bad.yaml")), expected);
}

TEST(ReaderTest, InvalidUtf8IsAnErrorInBothFormats) {
  EXPECT_NE(ErrorOf(ReadJson("{\"a\": \"x\xff\"}", "x.json")).find("invalid UTF-8 in string"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadJson("{\"a\xc0\xaf\": 1}", "x.json")).find("invalid UTF-8"),
            std::string::npos);  // an overlong '/'
  EXPECT_NE(ErrorOf(ReadYaml("a: x\xff\n", "x.yaml")).find("x.yaml:1:"), std::string::npos);
  EXPECT_TRUE(ReadJson("{\"a\": \"\xc3\xbc \xf0\x9f\x98\x80\"}", "x.json").ok());
}

TEST(WriterTest, JsonNormalizesYamlNumbers) {
  Doc d = One(ReadYaml("a: +5\nb: 007\nc: .5\nd: -0\n", "t.yaml"));
  EXPECT_EQ(ToJson(d), R"({"a":5,"b":7,"c":0.5,"d":0})");
}

TEST(ReaderTest, DetectFormat) {
  EXPECT_EQ(DetectFormat("a.json", ""), Format::kJson);
  EXPECT_EQ(DetectFormat("a.yml", "{}"), Format::kYaml);
  EXPECT_EQ(DetectFormat("-", "  {\"a\":1}"), Format::kJson);
  EXPECT_EQ(DetectFormat("-", "a: 1"), Format::kYaml);
}

}  // namespace
}  // namespace gpuplane::api
