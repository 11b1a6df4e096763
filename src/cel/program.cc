#include "cel/program.h"

#include <algorithm>
#include <optional>

#include "cel/builtins.h"
#include "cel/parser.h"
#include "util/strings.h"

namespace gpuplane::cel {

const Value* MapActivation::Find(std::string_view name) const {
  for (const auto& [n, v] : vars_) {
    if (n == name) return &v;
  }
  return nullptr;
}

namespace {

// Compile-time reference checks: every identifier is a declared variable, a comprehension
// variable in scope or a type denotation; every global function is known.
class ReferenceChecker {
 public:
  ReferenceChecker(std::string_view source, const CompileOptions& options)
      : source_(source), options_(options) {}

  absl::Status Check(const Expr& e) {
    Visit(e);
    if (problem_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(problem_);
  }

 private:
  bool Declared(const std::string& name) const {
    if (std::find(scope_.rbegin(), scope_.rend(), name) != scope_.rend()) return true;
    if (TypeDenotation(name) != nullptr) return true;
    return std::find(options_.variables.begin(), options_.variables.end(), name) !=
           options_.variables.end();
  }

  void Report(int32_t pos, const std::string& message) {
    if (problem_.empty()) problem_ = FormatIssue(source_, pos, message);
  }

  void Visit(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kConst:
        return;
      case Expr::Kind::kIdent:
        if (!Declared(e.name)) Report(e.pos, "undeclared reference to '" + e.name + "'");
        return;
      case Expr::Kind::kSelect:
        Visit(*e.target);
        return;
      case Expr::Kind::kCall:
        if (e.target) Visit(*e.target);
        for (const ExprPtr& a : e.args) Visit(*a);
        if (!IsKnownFunction(e.name)) {
          Report(e.pos, util::Cat("undeclared reference to '", e.name, "'"));
        }
        return;
      case Expr::Kind::kList:
        for (const ExprPtr& a : e.args) Visit(*a);
        return;
      case Expr::Kind::kMap:
        for (const auto& [k, v] : e.entries) {
          Visit(*k);
          Visit(*v);
        }
        return;
      case Expr::Kind::kComprehension: {
        Visit(*e.iter_range);
        scope_.push_back(e.iter_var);
        if (!e.iter_var2.empty()) scope_.push_back(e.iter_var2);
        if (e.predicate) Visit(*e.predicate);
        if (e.transform) Visit(*e.transform);
        scope_.resize(scope_.size() - (e.iter_var2.empty() ? 1 : 2));
        return;
      }
    }
  }

  std::string_view source_;
  const CompileOptions& options_;
  std::vector<std::string> scope_;
  std::string problem_;
};

const Value& EmptyMap() {
  static const Value* const kEmpty = new Value(Value::Map({}));
  return *kEmpty;
}

class Evaluator {
 public:
  Evaluator(const Activation& activation, int64_t limit) : act_(activation), limit_(limit) {}

  Value Eval(const Expr& e) {
    if (++cost_ > limit_) return CostExceeded();
    switch (e.kind) {
      case Expr::Kind::kConst:
        return e.value;
      case Expr::Kind::kIdent:
        return Ident(e);
      case Expr::Kind::kSelect:
        return Select(e);
      case Expr::Kind::kCall:
        return Call(e);
      case Expr::Kind::kList:
        return List(e);
      case Expr::Kind::kMap:
        return Map(e);
      case Expr::Kind::kComprehension:
        return Comprehension(e);
    }
    return Value::Error("unknown expression kind");
  }

  int64_t cost() const { return cost_; }

 private:
  Value CostExceeded() {
    cost_ = limit_ + 1;
    return Value::Error("operation cancelled: actual cost limit exceeded");
  }

  Value Ident(const Expr& e) {
    for (auto it = locals_.rbegin(); it != locals_.rend(); ++it) {
      if (it->first == e.name) return it->second;
    }
    if (const Value* v = act_.Find(e.name)) return *v;
    if (const Value* t = TypeDenotation(e.name)) return *t;
    return Value::Error("no such attribute: " + e.name);
  }

  Value Select(const Expr& e) {
    Value operand = Eval(*e.target);
    if (operand.is_error()) return operand;
    if (operand.kind() == Kind::kOptional) {
      if (!operand.has_value()) return e.test_only ? Value::Bool(false) : operand;
      Value inner = operand.optional_value();
      return SelectField(e, inner, true);
    }
    return SelectField(e, operand, e.optional_select);
  }

  Value SelectField(const Expr& e, const Value& operand, bool optional) {
    if (operand.kind() != Kind::kMap) {
      return Value::Error(
          util::Cat("type '", operand.TypeName(), "' does not support field selection"));
    }
    const Value* v = operand.FindString(e.name);
    if (e.test_only) return Value::Bool(v != nullptr);
    if (v == nullptr && operand.missing_keys_are_empty_maps()) v = &EmptyMap();
    if (optional) return v ? Value::Optional(*v) : Value::OptionalNone();
    if (v == nullptr) return Value::Error("no such key: " + e.name);
    return *v;
  }

  Value Logical(const Expr& e, bool is_and) {
    Value a = Eval(*e.args[0]);
    if (a.kind() == Kind::kBool && a.bool_value() != is_and) return a;  // short circuit
    Value b = Eval(*e.args[1]);
    if (b.kind() == Kind::kBool && b.bool_value() != is_and) return b;
    if (a.is_error()) return a;
    if (b.is_error()) return b;
    if (a.kind() != Kind::kBool || b.kind() != Kind::kBool) {
      return NoOverload(is_and ? "_&&_" : "_||_", {a, b});
    }
    return Value::Bool(is_and);
  }

  Value Call(const Expr& e) {
    if (e.name == "_&&_") return Logical(e, true);
    if (e.name == "_||_") return Logical(e, false);
    if (e.name == "_?_:_") {
      Value c = Eval(*e.args[0]);
      if (c.is_error()) return c;
      if (c.kind() != Kind::kBool) return NoOverload("_?_:_", {c});
      return Eval(*e.args[c.bool_value() ? 1 : 2]);
    }
    std::vector<Value> args;
    args.reserve(e.args.size() + 1);
    if (e.target) args.push_back(Eval(*e.target));
    for (const ExprPtr& a : e.args) args.push_back(Eval(*a));
    for (const Value& a : args) {
      if (a.is_error()) return a;
    }
    if (e.name == "_[_]" || e.name == "_[?_]") return Index(args[0], args[1], e.name == "_[?_]");
    // Functions are charged for what they scan: characters of string and bytes arguments,
    // elements of list and map arguments.
    for (const Value& a : args) {
      switch (a.kind()) {
        case Kind::kString:
        case Kind::kBytes:
          cost_ += static_cast<int64_t>(a.str().size());
          break;
        case Kind::kList:
          cost_ += static_cast<int64_t>(a.list().size());
          break;
        case Kind::kMap:
          cost_ += static_cast<int64_t>(a.map().size());
          break;
        default:
          break;
      }
    }
    if (cost_ > limit_) return CostExceeded();
    return CallBuiltin(e.name, e.target != nullptr, args);
  }

  Value Index(const Value& c, const Value& key, bool optional) {
    if (c.kind() == Kind::kOptional) {
      if (!c.has_value()) return c;
      return Index(c.optional_value(), key, true);
    }
    if (c.kind() == Kind::kList) {
      int64_t i;
      if (key.kind() == Kind::kInt) {
        i = key.int_value();
      } else if (key.kind() == Kind::kUint && key.uint_value() <= INT64_MAX) {
        i = static_cast<int64_t>(key.uint_value());
      } else if (key.kind() == Kind::kDouble &&
                 key.double_value() ==
                     static_cast<double>(static_cast<int64_t>(key.double_value()))) {
        i = static_cast<int64_t>(key.double_value());
      } else {
        return NoOverload("_[_]", {c, key});
      }
      if (i < 0 || i >= static_cast<int64_t>(c.list().size())) {
        if (optional) return Value::OptionalNone();
        return Value::Error(util::Cat("index out of bounds: ", i));
      }
      const Value& v = c.list()[static_cast<size_t>(i)];
      return optional ? Value::Optional(v) : v;
    }
    if (c.kind() == Kind::kMap) {
      Kind k = key.kind();
      if (k != Kind::kString && k != Kind::kInt && k != Kind::kUint && k != Kind::kBool &&
          k != Kind::kDouble) {
        return NoOverload("_[_]", {c, key});
      }
      const Value* v = c.Find(key);
      if (v == nullptr && k == Kind::kString && c.missing_keys_are_empty_maps()) v = &EmptyMap();
      if (optional) return v ? Value::Optional(*v) : Value::OptionalNone();
      if (v == nullptr) return Value::Error("no such key: " + KeyText(key));
      return *v;
    }
    return NoOverload("_[_]", {c, key});
  }

  static std::string KeyText(const Value& key) {
    Value s = CallBuiltin("string", false, {&key, 1});
    return s.is_error() ? std::string(key.TypeName()) : s.str();
  }

  Value List(const Expr& e) {
    std::vector<Value> items;
    items.reserve(e.args.size());
    for (size_t i = 0; i < e.args.size(); ++i) {
      Value v = Eval(*e.args[i]);
      if (v.is_error()) return v;
      if (e.optional[i]) {
        if (v.kind() != Kind::kOptional) return NoOverload("optional list element", {v});
        if (v.has_value()) items.push_back(v.optional_value());
        continue;
      }
      items.push_back(std::move(v));
    }
    return Value::List(std::move(items));
  }

  Value Map(const Expr& e) {
    std::vector<MapEntry> entries;
    entries.reserve(e.entries.size());
    for (size_t i = 0; i < e.entries.size(); ++i) {
      Value k = Eval(*e.entries[i].first);
      if (k.is_error()) return k;
      Value v = Eval(*e.entries[i].second);
      if (v.is_error()) return v;
      Kind kk = k.kind();
      if (kk != Kind::kString && kk != Kind::kInt && kk != Kind::kUint && kk != Kind::kBool) {
        return Value::Error(util::Cat("unsupported map key type: ", k.TypeName()));
      }
      if (e.optional[i]) {
        if (v.kind() != Kind::kOptional) return NoOverload("optional map entry", {v});
        if (!v.has_value()) continue;
        v = v.optional_value();
      }
      for (const MapEntry& existing : entries) {
        if (Equal(existing.key, k)) return Value::Error("Failed with repeated key");
      }
      entries.push_back(MapEntry{std::move(k), std::move(v)});
    }
    return Value::Map(std::move(entries));
  }

  struct Local {
    Local(Evaluator& ev, const std::string& name, Value v) : ev_(ev) {
      ev_.locals_.emplace_back(name, std::move(v));
    }
    ~Local() { ev_.locals_.pop_back(); }
    Evaluator& ev_;
  };

  Value Comprehension(const Expr& e) {
    Value range = Eval(*e.iter_range);
    if (range.is_error()) return range;
    if (e.macro == Macro::kBind) {
      Local bound(*this, e.iter_var, range);
      return Eval(*e.transform);
    }
    std::vector<std::pair<Value, Value>> elems;  // (index or key, value)
    if (range.kind() == Kind::kList) {
      for (size_t i = 0; i < range.list().size(); ++i) {
        elems.emplace_back(Value::Int(static_cast<int64_t>(i)), range.list()[i]);
      }
    } else if (range.kind() == Kind::kMap) {
      for (const MapEntry& m : range.map()) elems.emplace_back(m.key, m.value);
    } else {
      return Value::Error(
          util::Cat("cannot iterate over a value of type '", range.TypeName(), "'"));
    }
    bool two = !e.iter_var2.empty();
    bool is_map = range.kind() == Kind::kMap;
    Value error;
    bool has_error = false;
    int64_t count = 0;
    std::vector<Value> out;
    for (const auto& [first, second] : elems) {
      if (++cost_ > limit_) return CostExceeded();
      // One variable: the element of a list or the key of a map. Two: index/key and value.
      Local v1(*this, e.iter_var, two ? first : (is_map ? first : second));
      std::optional<Local> v2;
      if (two) v2.emplace(*this, e.iter_var2, second);
      Value p;
      if (e.predicate) p = Eval(*e.predicate);
      if (cost_ > limit_) return CostExceeded();
      switch (e.macro) {
        case Macro::kAll:
        case Macro::kExists: {
          bool stop = e.macro == Macro::kExists;  // the value that decides the result
          if (p.kind() == Kind::kBool) {
            if (p.bool_value() == stop) return Value::Bool(stop);
          } else if (!has_error) {
            has_error = true;
            error = p.is_error() ? p : NoOverload(e.macro == Macro::kAll ? "all" : "exists", {p});
          }
          break;
        }
        case Macro::kExistsOne:
          if (p.kind() != Kind::kBool) return p.is_error() ? p : NoOverload("exists_one", {p});
          count += p.bool_value() ? 1 : 0;
          break;
        case Macro::kFilter:
        case Macro::kMapFilter:
          if (p.kind() != Kind::kBool) return p.is_error() ? p : NoOverload("filter", {p});
          if (!p.bool_value()) break;
          if (e.macro == Macro::kFilter) {
            out.push_back(is_map ? first : second);
            break;
          }
          [[fallthrough]];
        case Macro::kMap: {
          Value t = Eval(*e.transform);
          if (t.is_error()) return t;
          out.push_back(std::move(t));
          break;
        }
        default:
          return Value::Error("unsupported comprehension");
      }
    }
    switch (e.macro) {
      case Macro::kAll:
      case Macro::kExists:
        return has_error ? error : Value::Bool(e.macro == Macro::kAll);
      case Macro::kExistsOne:
        return Value::Bool(count == 1);
      default:
        return Value::List(std::move(out));
    }
  }

  const Activation& act_;
  int64_t limit_;
  int64_t cost_ = 0;
  std::vector<std::pair<std::string, Value>> locals_;
};

}  // namespace

absl::StatusOr<Program> Program::Compile(std::string_view source, const CompileOptions& options) {
  absl::StatusOr<ExprPtr> ast = Parse(source);
  if (!ast.ok()) return ast.status();
  if (options.check_references) {
    absl::Status s = ReferenceChecker(source, options).Check(**ast);
    if (!s.ok()) return s;
  }
  return Program(std::shared_ptr<const Expr>(std::move(*ast)),
                 std::make_shared<const std::string>(source));
}

Value Program::Evaluate(const Activation& activation, int64_t cost_limit, int64_t* cost) const {
  Evaluator ev(activation, cost_limit);
  Value v = ev.Eval(*ast_);
  if (cost != nullptr) *cost = ev.cost();
  return v;
}

}  // namespace gpuplane::cel
