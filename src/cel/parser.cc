// Recursive-descent CEL parser following the CEL grammar's precedence:
// ternary < || < && < relations (== != < <= > >= in) < + - < * / % < unary (! -) < member.
#include "cel/parser.h"

#include <cmath>
#include <optional>

#include "cel/lexer.h"
#include "cel/library.h"
#include "util/strings.h"

namespace gpuplane::cel {
namespace {

struct SyntaxError {
  int32_t pos;
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source), lexer_(source) { Advance(); }

  absl::StatusOr<ExprPtr> ParseAll() {
    ExprPtr e = Expression();
    if (!error_ && tok_.kind != Token::Kind::kEof) {
      Fail(tok_.pos, util::Cat("mismatched input '", tok_.text, "' expecting <EOF>"));
    }
    if (error_) {
      return absl::InvalidArgumentError(FormatIssue(source_, error_->pos, error_->message));
    }
    return e;
  }

 private:
  void Advance() {
    tok_ = lexer_.Next();
    if (tok_.kind == Token::Kind::kError) Fail(tok_.pos, tok_.str);
  }

  void Fail(int32_t pos, std::string message) {
    if (!error_) error_ = SyntaxError{pos, std::move(message)};
    tok_.kind = Token::Kind::kEof;
  }

  bool IsPunct(std::string_view p) const {
    return tok_.kind == Token::Kind::kPunct && tok_.text == p;
  }

  bool Accept(std::string_view p) {
    if (!IsPunct(p)) return false;
    Advance();
    return true;
  }

  void Expect(std::string_view p) {
    if (Accept(p)) return;
    std::string got = tok_.kind == Token::Kind::kEof ? "<EOF>" : std::string(tok_.text);
    Fail(tok_.pos, util::Cat("mismatched input '", got, "' expecting '", p, "'"));
  }

  ExprPtr Node(Expr::Kind kind, int32_t pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  ExprPtr Call(std::string fn, int32_t pos, std::vector<ExprPtr> args, ExprPtr target = nullptr) {
    ExprPtr e = Node(Expr::Kind::kCall, pos);
    e->name = std::move(fn);
    e->args = std::move(args);
    e->target = std::move(target);
    return e;
  }

  ExprPtr Binary(std::string fn, int32_t pos, ExprPtr a, ExprPtr b) {
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return Call(std::move(fn), pos, std::move(args));
  }

  // Guards recursion so deeply nested input is an error, not a stack overflow.
  struct Depth {
    explicit Depth(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxParseDepth)
        parser.Fail(parser.tok_.pos, "expression nests too deeply");
    }
    ~Depth() { --parser.depth_; }
    Parser& parser;
  };

  ExprPtr Expression() {
    Depth guard(*this);
    if (error_) return Node(Expr::Kind::kConst, tok_.pos);
    ExprPtr cond = Or();
    if (!IsPunct("?")) return cond;
    int32_t pos = tok_.pos;
    Advance();
    ExprPtr a = Or();
    Expect(":");
    ExprPtr b = Expression();
    std::vector<ExprPtr> args;
    args.push_back(std::move(cond));
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return Call("_?_:_", pos, std::move(args));
  }

  ExprPtr Or() {
    ExprPtr e = And();
    while (IsPunct("||")) {
      int32_t pos = tok_.pos;
      Advance();
      e = Binary("_||_", pos, std::move(e), And());
    }
    return e;
  }

  ExprPtr And() {
    ExprPtr e = Relation();
    while (IsPunct("&&")) {
      int32_t pos = tok_.pos;
      Advance();
      e = Binary("_&&_", pos, std::move(e), Relation());
    }
    return e;
  }

  ExprPtr Relation() {
    ExprPtr e = Addition();
    while (true) {
      std::string fn;
      if (tok_.kind == Token::Kind::kPunct) {
        std::string_view t = tok_.text;
        if (t == "==" || t == "!=" || t == "<" || t == "<=" || t == ">" || t == ">=") {
          fn = util::Cat("_", t, "_");
        }
      } else if (tok_.kind == Token::Kind::kIdent && tok_.text == "in") {
        fn = "@in";
      }
      if (fn.empty()) return e;
      int32_t pos = tok_.pos;
      Advance();
      e = Binary(fn, pos, std::move(e), Addition());
    }
  }

  ExprPtr Addition() {
    ExprPtr e = Multiplication();
    while (IsPunct("+") || IsPunct("-")) {
      std::string fn = util::Cat("_", tok_.text, "_");
      int32_t pos = tok_.pos;
      Advance();
      e = Binary(fn, pos, std::move(e), Multiplication());
    }
    return e;
  }

  ExprPtr Multiplication() {
    ExprPtr e = Unary();
    while (IsPunct("*") || IsPunct("/") || IsPunct("%")) {
      std::string fn = util::Cat("_", tok_.text, "_");
      int32_t pos = tok_.pos;
      Advance();
      e = Binary(fn, pos, std::move(e), Unary());
    }
    return e;
  }

  ExprPtr Unary() {
    Depth guard(*this);
    int32_t pos = tok_.pos;
    if (IsPunct("!") || IsPunct("-")) {
      std::string_view op = tok_.text;
      int count = 0;
      while (IsPunct(op)) {
        ++count;
        Advance();
      }
      // A single '-' directly before a number literal is part of the literal.
      if (op == "-" && count % 2 == 1 &&
          (tok_.kind == Token::Kind::kInt || tok_.kind == Token::Kind::kDouble)) {
        ExprPtr lit = NumberLiteral(true, pos);
        return MemberSuffix(std::move(lit));
      }
      ExprPtr operand = Member();
      if (count % 2 == 0) return operand;  // as the CEL reference parser does
      std::vector<ExprPtr> args;
      args.push_back(std::move(operand));
      return Call(op == "!" ? "!_" : "-_", pos, std::move(args));
    }
    return Member();
  }

  ExprPtr NumberLiteral(bool negative, int32_t pos) {
    ExprPtr e = Node(Expr::Kind::kConst, pos);
    if (tok_.kind == Token::Kind::kDouble) {
      e->value = Value::Double(negative ? -tok_.double_value : tok_.double_value);
    } else if (tok_.kind == Token::Kind::kUint) {
      e->value = Value::Uint(tok_.uint_value);
    } else {
      uint64_t mag = tok_.uint_value;
      if (negative ? mag > (uint64_t{1} << 63) : mag > static_cast<uint64_t>(INT64_MAX)) {
        Fail(tok_.pos, util::Cat("invalid int literal '", negative ? "-" : "", tok_.text, "'"));
        return e;
      }
      e->value = Value::Int(negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag));
    }
    Advance();
    return e;
  }

  ExprPtr Member() { return MemberSuffix(Primary()); }

  ExprPtr MemberSuffix(ExprPtr e) {
    while (!error_) {
      int32_t pos = tok_.pos;
      if (Accept(".")) {
        bool optional = Accept("?");
        if (tok_.kind != Token::Kind::kIdent) {
          Fail(tok_.pos, "expected a field or method name after '.'");
          return e;
        }
        std::string name = tok_.str.empty() ? std::string(tok_.text) : tok_.str;
        bool quoted = !tok_.str.empty();
        Advance();
        if (!optional && !quoted && IsPunct("(")) {
          e = MethodCall(std::move(e), std::move(name), pos);
          continue;
        }
        ExprPtr sel = Node(Expr::Kind::kSelect, pos);
        sel->name = std::move(name);
        sel->target = std::move(e);
        sel->optional_select = optional;
        sel->quoted_field = quoted;
        e = std::move(sel);
      } else if (Accept("[")) {
        bool optional = Accept("?");
        ExprPtr index = Expression();
        Expect("]");
        e = Binary(optional ? "_[?_]" : "_[_]", pos, std::move(e), std::move(index));
      } else {
        return e;
      }
    }
    return e;
  }

  std::vector<ExprPtr> Arguments() {
    std::vector<ExprPtr> args;
    Expect("(");
    if (Accept(")")) return args;
    do {
      args.push_back(Expression());
    } while (!error_ && Accept(","));
    Expect(")");
    return args;
  }

  ExprPtr MethodCall(ExprPtr target, std::string name, int32_t pos) {
    std::vector<ExprPtr> args = Arguments();
    if (error_) return target;
    ExprPtr macro = ExpandReceiverMacro(target, name, args, pos);
    if (macro) return macro;
    // optional.of(x), sets.contains(a, b), lists.range(n), strings.quote(s): global functions.
    if (target->kind == Expr::Kind::kIdent && IsFunctionNamespace(target->name)) {
      return Call(target->name + "." + name, pos, std::move(args));
    }
    return Call(std::move(name), pos, std::move(args), std::move(target));
  }

  bool SimpleName(const ExprPtr& e, std::string* name) {
    if (e->kind != Expr::Kind::kIdent) return false;
    *name = e->name;
    return true;
  }

  ExprPtr Comprehension(Macro m, ExprPtr range, std::string var, std::string var2, int32_t pos) {
    ExprPtr c = Node(Expr::Kind::kComprehension, pos);
    c->macro = m;
    c->iter_range = std::move(range);
    c->iter_var = std::move(var);
    c->iter_var2 = std::move(var2);
    return c;
  }

  // all, exists, exists_one, map, filter (and two-variable all/exists/existsOne).
  ExprPtr ExpandReceiverMacro(ExprPtr& target, const std::string& name, std::vector<ExprPtr>& args,
                              int32_t pos) {
    if (name.starts_with("transform")) return ExpandTransformMacro(target, name, args, pos);
    if (name == "optMap" || name == "optFlatMap") return ExpandOptMacro(target, name, args, pos);
    Macro m = Macro::kNone;
    if (name == "all") m = Macro::kAll;
    if (name == "exists") m = Macro::kExists;
    if (name == "exists_one" || name == "existsOne") m = Macro::kExistsOne;
    if (name == "map") m = args.size() == 3 ? Macro::kMapFilter : Macro::kMap;
    if (name == "filter") m = Macro::kFilter;
    if (m == Macro::kNone || args.size() < 2 || args.size() > 3) return nullptr;
    bool two_var = args.size() == 3 && m != Macro::kMapFilter;
    if (args.size() == 3 && (m == Macro::kMap || m == Macro::kFilter)) return nullptr;
    std::string var, var2;
    if (!SimpleName(args[0], &var) || (two_var && !SimpleName(args[1], &var2))) {
      Fail(args[0]->pos, "argument must be a simple name");
      return nullptr;
    }
    if (two_var && var == var2) {
      Fail(args[1]->pos, util::Cat("duplicate variable name: ", var));
      return nullptr;
    }
    ExprPtr c = Comprehension(m, std::move(target), var, var2, pos);
    if (two_var) {
      c->predicate = std::move(args[2]);
    } else if (m == Macro::kMap) {
      c->transform = std::move(args[1]);
    } else if (m == Macro::kMapFilter) {
      c->predicate = std::move(args[1]);
      c->transform = std::move(args[2]);
    } else {
      c->predicate = std::move(args[1]);
    }
    return c;
  }

  // optMap and optFlatMap of the optional library: (var, value).
  ExprPtr ExpandOptMacro(ExprPtr& target, const std::string& name, std::vector<ExprPtr>& args,
                         int32_t pos) {
    if (args.size() != 2) return nullptr;
    std::string var;
    if (!SimpleName(args[0], &var)) {
      Fail(args[0]->pos, "argument must be a simple name");
      return nullptr;
    }
    ExprPtr c = Comprehension(name == "optMap" ? Macro::kOptMap : Macro::kOptFlatMap,
                              std::move(target), var, "", pos);
    c->transform = std::move(args[1]);
    return c;
  }

  // transformList, transformMap, transformMapEntry: (var, var2, [filter,] transform).
  ExprPtr ExpandTransformMacro(ExprPtr& target, const std::string& name, std::vector<ExprPtr>& args,
                               int32_t pos) {
    Macro m = Macro::kNone;
    if (name == "transformList") m = Macro::kTransformList;
    if (name == "transformMap") m = Macro::kTransformMap;
    if (name == "transformMapEntry") m = Macro::kTransformMapEntry;
    if (m == Macro::kNone || args.size() < 3 || args.size() > 4) return nullptr;
    std::string var, var2;
    if (!SimpleName(args[0], &var) || !SimpleName(args[1], &var2)) {
      Fail(args[0]->pos, "argument must be a simple name");
      return nullptr;
    }
    if (var == var2) {
      Fail(args[1]->pos, util::Cat("duplicate variable name: ", var));
      return nullptr;
    }
    ExprPtr c = Comprehension(m, std::move(target), var, var2, pos);
    if (args.size() == 4) c->predicate = std::move(args[2]);
    c->transform = std::move(args.back());
    return c;
  }

  ExprPtr Primary() {
    Depth guard(*this);
    int32_t pos = tok_.pos;
    switch (tok_.kind) {
      case Token::Kind::kInt:
      case Token::Kind::kUint:
      case Token::Kind::kDouble:
        return NumberLiteral(false, pos);
      case Token::Kind::kString:
      case Token::Kind::kBytes: {
        ExprPtr e = Node(Expr::Kind::kConst, pos);
        e->value = tok_.kind == Token::Kind::kString ? Value::String(std::move(tok_.str))
                                                     : Value::Bytes(std::move(tok_.str));
        Advance();
        return e;
      }
      case Token::Kind::kIdent:
        return IdentOrCall(pos, false);
      case Token::Kind::kPunct:
        if (Accept("(")) {
          ExprPtr e = Expression();
          Expect(")");
          return e;
        }
        if (Accept("[")) return ListLiteral(pos);
        if (Accept("{")) return MapLiteral(pos);
        if (Accept(".")) {
          if (tok_.kind != Token::Kind::kIdent) {
            Fail(tok_.pos, "expected an identifier after a leading '.'");
            return Node(Expr::Kind::kConst, pos);
          }
          return IdentOrCall(pos, true);
        }
        [[fallthrough]];
      default: {
        std::string got = tok_.kind == Token::Kind::kEof ? "<EOF>" : std::string(tok_.text);
        Fail(tok_.pos, util::Cat("mismatched input '", got, "' expecting an expression"));
        return Node(Expr::Kind::kConst, pos);
      }
    }
  }

  ExprPtr IdentOrCall(int32_t pos, bool leading_dot) {
    if (!tok_.str.empty()) {  // a `quoted` identifier stands only after '.'
      Fail(tok_.pos, "quoted identifiers are only allowed as field names");
      return Node(Expr::Kind::kConst, pos);
    }
    std::string name(tok_.text);
    if (name == "true" || name == "false" || name == "null") {
      Advance();
      ExprPtr e = Node(Expr::Kind::kConst, pos);
      e->value = name == "null" ? Value::Null() : Value::Bool(name == "true");
      return e;
    }
    if (name == "in" || IsReservedWord(name)) {
      Fail(pos, util::Cat("reserved identifier: ", name));
      return Node(Expr::Kind::kConst, pos);
    }
    Advance();
    if (leading_dot) name = "." + name;
    if (IsPunct("(")) {
      std::vector<ExprPtr> args = Arguments();
      if (error_) return Node(Expr::Kind::kConst, pos);
      if (name == "has") return ExpandHas(std::move(args), pos);
      return Call(std::move(name), pos, std::move(args));
    }
    if (IsPunct("{")) {
      Fail(tok_.pos, "message construction is not supported (no protobuf types)");
      return Node(Expr::Kind::kConst, pos);
    }
    ExprPtr e = Node(Expr::Kind::kIdent, pos);
    e->name = std::move(name);
    // cel.bind(var, init, body)
    if (e->name == "cel" && IsPunct(".")) return e;
    return e;
  }

  ExprPtr ExpandHas(std::vector<ExprPtr> args, int32_t pos) {
    if (args.size() != 1 || args[0]->kind != Expr::Kind::kSelect || args[0]->optional_select) {
      Fail(pos, "invalid argument to has() macro");
      return Node(Expr::Kind::kConst, pos);
    }
    args[0]->test_only = true;
    return std::move(args[0]);
  }

  ExprPtr ListLiteral(int32_t pos) {
    ExprPtr e = Node(Expr::Kind::kList, pos);
    while (!error_ && !IsPunct("]")) {
      e->optional.push_back(Accept("?"));
      e->args.push_back(Expression());
      if (!Accept(",")) break;
    }
    Expect("]");
    return e;
  }

  ExprPtr MapLiteral(int32_t pos) {
    ExprPtr e = Node(Expr::Kind::kMap, pos);
    while (!error_ && !IsPunct("}")) {
      e->optional.push_back(Accept("?"));
      ExprPtr key = Expression();
      Expect(":");
      ExprPtr value = Expression();
      e->entries.emplace_back(std::move(key), std::move(value));
      if (!Accept(",")) break;
    }
    Expect("}");
    return e;
  }

  std::string_view source_;
  Lexer lexer_;
  Token tok_;
  std::optional<SyntaxError> error_;
  int depth_ = 0;
};

// cel.bind(v, init, body) is a call on the identifier `cel`; rewrite it after parsing.
void ExpandBind(ExprPtr& e, std::optional<SyntaxError>& error) {
  if (!e) return;
  for (ExprPtr& a : e->args) ExpandBind(a, error);
  for (auto& [k, v] : e->entries) {
    ExpandBind(k, error);
    ExpandBind(v, error);
  }
  ExpandBind(e->target, error);
  ExpandBind(e->iter_range, error);
  ExpandBind(e->predicate, error);
  ExpandBind(e->transform, error);
  if (e->kind == Expr::Kind::kCall && e->name == "bind" && e->target &&
      e->target->kind == Expr::Kind::kIdent && e->target->name == "cel" && e->args.size() == 3) {
    if (e->args[0]->kind != Expr::Kind::kIdent) {
      if (!error) error = SyntaxError{e->args[0]->pos, "cel.bind() variable must be a simple name"};
      return;
    }
    auto c = std::make_unique<Expr>();
    c->kind = Expr::Kind::kComprehension;
    c->pos = e->pos;
    c->macro = Macro::kBind;
    c->iter_var = e->args[0]->name;
    c->iter_range = std::move(e->args[1]);
    c->transform = std::move(e->args[2]);
    e = std::move(c);
  }
}

}  // namespace

std::string FormatIssue(std::string_view source, int32_t pos, std::string_view message) {
  size_t p = std::min(static_cast<size_t>(std::max(pos, 0)), source.size());
  size_t line_start = source.rfind('\n', p == 0 ? 0 : p - 1);
  line_start = (line_start == std::string_view::npos || p == 0) ? 0 : line_start + 1;
  if (p > 0 && source[p - 1] == '\n') line_start = p;
  size_t line_end = source.find('\n', p);
  if (line_end == std::string_view::npos) line_end = source.size();
  int line = 1;
  for (size_t i = 0; i < line_start; ++i) line += source[i] == '\n' ? 1 : 0;
  size_t column = p - line_start;
  return util::Cat("ERROR: <input>:", line, ":", column + 1, ": ", message, "\n | ",
                   source.substr(line_start, line_end - line_start), "\n | ",
                   std::string(column, '.'), "^");
}

absl::StatusOr<ExprPtr> Parse(std::string_view source) {
  if (source.size() > kMaxExpressionBytes) {
    return absl::InvalidArgumentError(
        util::Cat("expression is ", source.size(), " bytes; the limit is ", kMaxExpressionBytes));
  }
  Parser parser(source);
  absl::StatusOr<ExprPtr> e = parser.ParseAll();
  if (!e.ok()) return e;
  std::optional<SyntaxError> error;
  ExpandBind(*e, error);
  if (error) return absl::InvalidArgumentError(FormatIssue(source, error->pos, error->message));
  return e;
}

}  // namespace gpuplane::cel
