// YAML reading through yaml-cpp's event API (faster than building YAML::Node trees), resolving
// plain scalars as Kubernetes' YAML->JSON conversion does (YAML 1.1 booleans included).
#include <istream>
#include <map>
#include <streambuf>

#include "api/internal/yaml_scalar.h"
#include "api/reader.h"
#include "util/strings.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace gpuplane::api {
namespace {

// Read-only streambuf over existing memory, so the parser does not copy the input.
class MemoryBuf : public std::streambuf {
 public:
  explicit MemoryBuf(std::string_view s) {
    char* p = const_cast<char*>(s.data());
    setg(p, p, p + s.size());
  }
};

// Thrown only inside this file to stop yaml-cpp from a handler; caught in ReadYaml.
struct HandlerError {
  YAML::Mark mark;
  std::string message;
};

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsFloat(std::string_view s) {
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "-.inf" || s == "+.inf" || s == "-.Inf" ||
      s == "+.Inf" || s == ".nan" || s == ".NaN" || s == ".NAN") {
    return true;
  }
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  bool int_digits = i > int_start;
  bool frac_digits = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t f = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    frac_digits = i > f;
  }
  if (!int_digits && !frac_digits) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!IsDigits(s.substr(i))) return false;
    return true;
  }
  return i == s.size();
}

}  // namespace

namespace internal {

Doc ResolvePlain(const std::string& v, uint32_t line) {
  switch (v.size()) {
    case 0:
      return Doc::Scalar(Doc::Kind::kNull, "", line);
    default:
      break;
  }
  char c = v[0];
  if (c == '~' || c == 'n' || c == 'N') {
    if (v == "~" || v == "null" || v == "Null" || v == "NULL") {
      return Doc::Scalar(Doc::Kind::kNull, "", line);
    }
  }
  static const char* const kTrue[] = {"y",  "Y",  "yes",  "Yes",  "YES", "on",
                                      "On", "ON", "true", "True", "TRUE"};
  static const char* const kFalse[] = {"n",   "N",   "no",    "No",    "NO",   "off",
                                       "Off", "OFF", "false", "False", "FALSE"};
  if (v.size() <= 5) {
    for (const char* t : kTrue) {
      if (v == t) return Doc::Scalar(Doc::Kind::kBool, v, line);
    }
    for (const char* f : kFalse) {
      if (v == f) return Doc::Scalar(Doc::Kind::kBool, v, line);
    }
  }
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
    std::string_view body(v);
    if (body[0] == '-' || body[0] == '+') body.remove_prefix(1);
    if (IsDigits(body)) return Doc::Scalar(Doc::Kind::kInt, v, line);
    if (IsFloat(v)) return Doc::Scalar(Doc::Kind::kFloat, v, line);
  }
  return Doc::String(v, line);
}

}  // namespace internal

namespace {

using internal::ResolvePlain;

class TreeBuilder : public YAML::EventHandler {
 public:
  // yaml-cpp 0.7 can loop forever emitting events on some malformed flow collections; real
  // documents produce far fewer events than 4 per input byte, so more means no progress.
  explicit TreeBuilder(size_t input_size) : event_budget_(4 * input_size + 64) {}

  std::vector<Doc> TakeDocs() { return std::move(docs_); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Count(mark);
    Attach(Doc::Scalar(Doc::Kind::kNull, "", Line(mark)), mark, anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Count(mark);
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw HandlerError{mark, "alias to an unknown anchor"};
    // Bound alias expansion so "billion laughs" input cannot exhaust memory.
    alias_budget_ -= static_cast<int64_t>(it->second.size);
    if (alias_budget_ < 0) throw HandlerError{mark, "too many alias expansions"};
    Doc copy = it->second.doc;
    Finish(std::move(copy), mark, 0, it->second.size);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Count(mark);
    uint32_t line = Line(mark);
    bool plain = tag == "?";
    bool want_string = tag == "!" || tag == "tag:yaml.org,2002:str";
    Doc d = (plain || !want_string) && tag != "!" ? ResolvePlain(value, line)
                                                  : Doc::String(value, line);
    Attach(std::move(d), mark, anchor);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Count(mark);
    Open(Doc::Seq(Line(mark)), mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Count(mark);
    Open(Doc::Map(Line(mark)), mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    Doc doc;
    YAML::Mark mark;
    YAML::anchor_t anchor = 0;
    bool has_key = false;
    std::string key;
    uint32_t key_line = 0;
    size_t nodes = 1;
  };
  struct Anchored {
    Doc doc;
    size_t size;
  };

  void Count(const YAML::Mark& mark) {
    if (event_budget_-- == 0) {
      throw HandlerError{mark, "malformed input: the YAML parser stopped making progress"};
    }
  }

  static uint32_t Line(const YAML::Mark& m) { return static_cast<uint32_t>(m.line + 1); }

  void Open(Doc d, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (!stack_.empty() && stack_.back().doc.is_map() && !stack_.back().has_key) {
      throw HandlerError{mark, "map keys must be scalars"};
    }
    if (stack_.size() >= static_cast<size_t>(kMaxDocDepth)) {
      throw HandlerError{mark, "nesting deeper than 256 levels"};
    }
    stack_.push_back(Frame{std::move(d), mark, anchor});
  }

  void Close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Finish(std::move(f.doc), f.mark, f.anchor, f.nodes);
  }

  void Attach(Doc d, const YAML::Mark& mark, YAML::anchor_t anchor) {
    Finish(std::move(d), mark, anchor, 1);
  }

  void Finish(Doc d, const YAML::Mark& mark, YAML::anchor_t anchor, size_t nodes) {
    if (anchor != 0) anchors_[anchor] = Anchored{d, nodes};
    if (stack_.empty()) {
      docs_.push_back(std::move(d));
      return;
    }
    Frame& top = stack_.back();
    top.nodes += nodes;
    if (top.doc.is_seq()) {
      top.doc.Push(std::move(d));
      return;
    }
    if (!top.has_key) {
      if (!d.is_scalar()) throw HandlerError{mark, "map keys must be scalars"};
      top.key = d.text();
      if (d.kind() == Doc::Kind::kNull) top.key = "null";
      top.key_line = d.line();
      top.has_key = true;
      return;
    }
    if (top.doc.Find(top.key) != nullptr) {
      throw HandlerError{mark, util::Cat("duplicate key \"", top.key, "\"")};
    }
    top.doc.Add(std::move(top.key), std::move(d), top.key_line);
    top.key.clear();
    top.has_key = false;
  }

  std::vector<Frame> stack_;
  std::vector<Doc> docs_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  int64_t alias_budget_ = 1'000'000;
  size_t event_budget_;
};

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadYaml(std::string_view text, std::string_view file) {
  MemoryBuf buf(text);
  std::istream in(&buf);
  TreeBuilder builder(text.size());
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const HandlerError& e) {
    return absl::InvalidArgumentError(util::Cat(file, ":", e.mark.line + 1, ":", e.mark.column + 1,
                                                ": invalid YAML: ", e.message));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        util::Cat(file, ":", e.mark.line + 1, ":", e.mark.column + 1, ": invalid YAML: ", e.msg));
  }
  std::vector<Doc> docs = builder.TakeDocs();
  // An empty document (a trailing `---`) is not an object.
  std::erase_if(docs, [](const Doc& d) { return d.is_null(); });
  return docs;
}

}  // namespace gpuplane::api
