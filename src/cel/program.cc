#include "cel/program.h"

#include <algorithm>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "cel/builtins.h"
#include "cel/checker.h"
#include "cel/library.h"
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

const Value& EmptyMap() {
  static const Value* const kEmpty = new Value(Value::Map({}));
  return *kEmpty;
}

const Value* TrueValue() {
  static const Value kTrue = Value::Bool(true);
  return &kTrue;
}
const Value* FalseValue() {
  static const Value kFalse = Value::Bool(false);
  return &kFalse;
}
const Value* BoolValue(bool b) { return b ? TrueValue() : FalseValue(); }

// Evaluation borrows instead of copying: every step returns a pointer either into stable
// storage (constants, bindings, parts of stable containers, static values) or to the
// temporary its caller provides. Values are copied only when a function needs owned
// arguments, which keeps selectors like `device.driver == "x"` free of allocations and of
// reference-count traffic. One Evaluator per evaluation; not thread-safe.
class Evaluator {
 public:
  Evaluator(const Activation& activation, int64_t limit) : act_(activation), limit_(limit) {}

  Value Eval(const Expr& e) {
    Value tmp;
    const Value* r = Ref(e, tmp);
    if (r == &tmp) return tmp;
    return *r;
  }

  int64_t cost() const { return cost_; }

 private:
  // Moves `local` into `out` when `r` is the local temporary, so the result outlives it.
  static const Value* Out(const Value* r, Value& local, Value& out) {
    if (r != &local) return r;
    out = std::move(local);
    return &out;
  }
  static const Value* Set(Value& out, Value v) {
    out = std::move(v);
    return &out;
  }

  const Value* CostExceeded(Value& out) {
    cost_ = limit_ + 1;
    return Set(out, Value::Error("operation cancelled: actual cost limit exceeded"));
  }
  Value LimitError() {
    Value out;
    return *CostExceeded(out);
  }

  const Value* Ref(const Expr& e, Value& out) {
    if (++cost_ > limit_) return CostExceeded(out);
    switch (e.kind) {
      case Expr::Kind::kConst:
        return &e.value;
      case Expr::Kind::kIdent:
        return Ident(e, out);
      case Expr::Kind::kSelect:
        return Select(e, out);
      case Expr::Kind::kCall:
        return Call(e, out);
      case Expr::Kind::kList:
        return Set(out, List(e));
      case Expr::Kind::kMap:
        return Set(out, Map(e));
      case Expr::Kind::kComprehension:
        return Set(out, Comprehension(e));
      case Expr::Kind::kPath:
        return Path(e, out);
    }
    return Set(out, Value::Error("unknown expression kind"));
  }

  // Fast path for constant lookups; anything unusual re-evaluates the original subtree so
  // errors, optionals and type checks behave exactly as the general evaluator's.
  const Value* Path(const Expr& e, Value& out) {
    const Value* v = Variable(e.name);
    if (v == nullptr) return Ref(*e.target, out);
    for (const std::string& step : e.path) {
      if (v->kind() != Kind::kMap) return Ref(*e.target, out);
      const Value* next = v->FindString(step);
      if (next == nullptr) {
        if (!v->missing_keys_are_empty_maps()) return Ref(*e.target, out);
        next = &EmptyMap();
      }
      v = next;
    }
    cost_ += e.path_cost - 1;
    if (cost_ > limit_) return CostExceeded(out);
    return v;
  }

  // Comprehension variables shadow bindings.
  const Value* Variable(const std::string& name) const {
    for (const Local* l = top_; l != nullptr; l = l->prev) {
      if (*l->name == name) return &l->value;
    }
    return act_.Find(name);
  }

  const Value* Ident(const Expr& e, Value& out) {
    if (const Value* v = Variable(e.name)) return v;
    if (const Value* t = TypeDenotation(e.name)) return t;
    return Set(out, Value::Error("no such attribute: " + e.name));
  }

  const Value* Select(const Expr& e, Value& out) {
    Value local;
    const Value* operand = Ref(*e.target, local);
    if (operand->is_error()) return Out(operand, local, out);
    bool optional = e.optional_select;
    if (operand->kind() == Kind::kOptional) {
      if (!operand->has_value()) {
        return e.test_only ? FalseValue() : Out(operand, local, out);
      }
      operand = &operand->optional_value();
      optional = true;
    }
    if (operand->kind() != Kind::kMap) {
      return Set(out, Value::Error(util::Cat("type '", operand->TypeName(),
                                             "' does not support field selection")));
    }
    const Value* v = operand->FindString(e.name);
    if (e.test_only) return BoolValue(v != nullptr);
    if (v == nullptr && operand->missing_keys_are_empty_maps()) v = &EmptyMap();
    if (optional) return Set(out, v ? Value::Optional(*v) : Value::OptionalNone());
    if (v == nullptr) return Set(out, Value::Error("no such key: " + e.name));
    // A member of a temporary container must be copied before the container goes away.
    return operand == &local || local.kind() != Kind::kNull ? Set(out, *v) : v;
  }

  const Value* Logical(const Expr& e, bool is_and, Value& out) {
    Value la, lb;
    const Value* a = Ref(*e.args[0], la);
    if (a->kind() == Kind::kBool && a->bool_value() != is_and) return BoolValue(!is_and);
    const Value* b = Ref(*e.args[1], lb);
    if (b->kind() == Kind::kBool && b->bool_value() != is_and) return BoolValue(!is_and);
    if (a->is_error()) return Out(a, la, out);
    if (b->is_error()) return Out(b, lb, out);
    if (a->kind() != Kind::kBool || b->kind() != Kind::kBool) {
      return Set(out, NoOverload(is_and ? "_&&_" : "_||_", {*a, *b}));
    }
    return BoolValue(is_and);
  }

  const Value* Call(const Expr& e, Value& out) {
    switch (e.op) {
      case CallOp::kAnd:
        return Logical(e, true, out);
      case CallOp::kOr:
        return Logical(e, false, out);
      case CallOp::kCond: {
        Value lc;
        const Value* c = Ref(*e.args[0], lc);
        if (c->is_error()) return Out(c, lc, out);
        if (c->kind() != Kind::kBool) return Set(out, NoOverload("_?_:_", {*c}));
        return Ref(*e.args[c->bool_value() ? 1 : 2], out);
      }
      case CallOp::kEq:
      case CallOp::kNe:
      case CallOp::kLt:
      case CallOp::kLe:
      case CallOp::kGt:
      case CallOp::kGe:
      case CallOp::kIn:
      case CallOp::kIndex:
      case CallOp::kOptIndex:
        return Binary(e, out);
      case CallOp::kNot: {
        Value la;
        const Value* a = Ref(*e.args[0], la);
        if (a->is_error()) return Out(a, la, out);
        if (a->kind() != Kind::kBool) return Set(out, NoOverload("!_", {*a}));
        return BoolValue(!a->bool_value());
      }
      case CallOp::kGeneric:
        break;
    }
    absl::InlinedVector<Value, 4> args;
    if (e.target) args.push_back(Eval(*e.target));
    // opt.or(x) and opt.orValue(x) evaluate x only when opt is empty, as cel-go does.
    if (e.shape == CallShape::kOptionalOr && args[0].kind() == Kind::kOptional &&
        args[0].has_value()) {
      return Set(out, e.name == "or" ? args[0] : args[0].optional_value());
    }
    for (const ExprPtr& a : e.args) args.push_back(Eval(*a));
    for (const Value& a : args) {
      if (a.is_error()) return Set(out, a);
    }
    // Functions are charged for what they scan: characters of string and bytes arguments,
    // elements of list and map arguments.
    for (const Value& a : args) cost_ += ScanCost(a);
    if (e.shape != CallShape::kPlain) cost_ += PairwiseCost(e.shape, args);
    if (cost_ > limit_) return CostExceeded(out);
    std::span<const Value> span(args.data(), args.size());
    if (e.regex) {  // a constant pattern, compiled when the program was planned
      return Set(out, e.name == "matches" ? MatchesWith(*e.regex, span)
                                          : FindWith(*e.regex, span, e.name == "findAll"));
    }
    if (e.library != nullptr) return Set(out, e.library->fn(span));
    return Set(
        out,
        CallBuiltin(e.name, e.target != nullptr ? CallStyle::kReceiver : CallStyle::kGlobal, span));
  }

  // distinct() and the sets functions compare every element with every other: they are
  // charged for the pairs, so the cost limit bounds their quadratic work.
  static int64_t PairwiseCost(CallShape shape, std::span<const Value> args) {
    auto size = [&](size_t i) {
      return i < args.size() && args[i].kind() == Kind::kList
                 ? static_cast<int64_t>(args[i].list().size())
                 : 0;
    };
    if (shape == CallShape::kPairsSelf) return size(0) * size(0) / 2;
    if (shape == CallShape::kPairsBoth) return size(0) * size(1);
    return 0;
  }

  static int64_t ScanCost(const Value& a) {
    switch (a.kind()) {
      case Kind::kString:
      case Kind::kBytes:
        return static_cast<int64_t>(a.str().size());
      case Kind::kList:
        return static_cast<int64_t>(a.list().size());
      case Kind::kMap:
        return static_cast<int64_t>(a.map().size());
      default:
        return 0;
    }
  }

  const Value* Binary(const Expr& e, Value& out) {
    Value la, lb;
    const Value* a = Ref(*e.args[0], la);
    const Value* b = Ref(*e.args[1], lb);
    if (a->is_error()) return Out(a, la, out);
    if (b->is_error()) return Out(b, lb, out);
    switch (e.op) {
      case CallOp::kEq:
        cost_ += ScanCost(*a);
        return BoolValue(Equal(*a, *b));
      case CallOp::kNe:
        cost_ += ScanCost(*a);
        return BoolValue(!Equal(*a, *b));
      case CallOp::kIn:
        cost_ += ScanCost(*b);
        return Set(out, CallBuiltin("@in", CallStyle::kGlobal, {{*a, *b}}));
      case CallOp::kIndex:
      case CallOp::kOptIndex: {
        const Value* v = Index(*a, *b, e.op == CallOp::kOptIndex, out);
        if (v == &out) return v;
        // A member of a temporary container must be copied before the container goes away.
        return a == &la ? Set(out, *v) : v;
      }
      default:
        break;
    }
    int c = 0;
    Value ok = Compare(*a, *b, &c);
    static constexpr const char* kNames[] = {"_<_", "_<=_", "_>_", "_>=_"};
    int which = static_cast<int>(e.op) - static_cast<int>(CallOp::kLt);
    if (ok.is_error()) return Set(out, NoOverload(kNames[which], {*a, *b}));
    // NaN: unordered, an error in cel-go (Kubernetes), which CEL's definition leaves open.
    if (c == 2) return Set(out, Value::Error("NaN values cannot be ordered"));
    switch (e.op) {
      case CallOp::kLt:
        return BoolValue(c < 0);
      case CallOp::kLe:
        return BoolValue(c <= 0);
      case CallOp::kGt:
        return BoolValue(c > 0);
      default:
        return BoolValue(c >= 0);
    }
  }

  // Returns a pointer into `c` or to `out`.
  const Value* Index(const Value& c, const Value& key, bool optional, Value& out) {
    if (c.kind() == Kind::kOptional) {
      if (!c.has_value()) return Set(out, c);
      return Index(c.optional_value(), key, true, out);
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
        return Set(out, NoOverload("_[_]", {c, key}));
      }
      if (i < 0 || i >= static_cast<int64_t>(c.list().size())) {
        if (optional) return Set(out, Value::OptionalNone());
        return Set(out, Value::Error(util::Cat("index out of bounds: ", i)));
      }
      const Value& v = c.list()[static_cast<size_t>(i)];
      return optional ? Set(out, Value::Optional(v)) : &v;
    }
    if (c.kind() == Kind::kMap) {
      Kind k = key.kind();
      if (k != Kind::kString && k != Kind::kInt && k != Kind::kUint && k != Kind::kBool &&
          k != Kind::kDouble) {
        return Set(out, NoOverload("_[_]", {c, key}));
      }
      const Value* v = k == Kind::kString ? c.FindString(key.str()) : c.Find(key);
      if (v == nullptr && k == Kind::kString && c.missing_keys_are_empty_maps()) v = &EmptyMap();
      if (optional) return Set(out, v ? Value::Optional(*v) : Value::OptionalNone());
      if (v == nullptr) return Set(out, Value::Error("no such key: " + KeyText(key)));
      return v;
    }
    return Set(out, NoOverload("_[_]", {c, key}));
  }

  static std::string KeyText(const Value& key) {
    Value s = CallBuiltin("string", CallStyle::kGlobal, {&key, 1});
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

  // A comprehension variable: a frame on the C++ stack, linked to the enclosing ones, so
  // binding needs no allocation and references to outer variables stay valid.
  struct Local {
    Local(Evaluator& ev, const std::string& n, Value v)
        : evaluator(ev), name(&n), value(std::move(v)), prev(ev.top_) {
      evaluator.top_ = this;
    }
    ~Local() { evaluator.top_ = prev; }
    Local(const Local&) = delete;
    Local& operator=(const Local&) = delete;
    Evaluator& evaluator;
    const std::string* name;
    Value value;
    Local* prev;
  };

  Value Comprehension(const Expr& e) {
    Value range = Eval(*e.iter_range);
    if (e.macro == Macro::kBind) {  // an error is bound like any value: it counts if used
      Local bound(*this, e.iter_var, range);
      return Eval(*e.transform);
    }
    if (range.is_error()) return range;
    if (e.macro == Macro::kOptMap || e.macro == Macro::kOptFlatMap) return OptMap(e, range);
    if (range.kind() != Kind::kList && range.kind() != Kind::kMap) {
      return Value::Error(
          util::Cat("cannot iterate over a value of type '", range.TypeName(), "'"));
    }
    if (e.macro == Macro::kTransformList || e.macro == Macro::kTransformMap ||
        e.macro == Macro::kTransformMapEntry) {
      return Transform(e, range);
    }
    return Iterate(e, range);
  }

  Value OptMap(const Expr& e, const Value& opt) {
    const char* name = e.macro == Macro::kOptMap ? "optMap" : "optFlatMap";
    if (opt.kind() != Kind::kOptional) return NoOverload(name, {opt});
    if (!opt.has_value()) return opt;
    Local bound(*this, e.iter_var, opt.optional_value());
    Value t = Eval(*e.transform);
    if (t.is_error() || e.macro == Macro::kOptMap) return t.is_error() ? t : Value::Optional(t);
    return t.kind() == Kind::kOptional ? t : NoOverload(name, {t});
  }

  // all, exists, exists_one, map and filter over a list or a map.
  Value Iterate(const Expr& e, const Value& range) {
    bool is_map = range.kind() == Kind::kMap;
    size_t n = is_map ? range.map().size() : range.list().size();
    bool two = !e.iter_var2.empty();
    Value error;
    bool has_error = false;
    int64_t count = 0;
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      if (++cost_ > limit_) return LimitError();
      Value first = is_map ? range.map()[i].key : Value::Int(static_cast<int64_t>(i));
      const Value& second = is_map ? range.map()[i].value : range.list()[i];
      // One variable: the element of a list or the key of a map. Two: index/key and value.
      Local v1(*this, e.iter_var, two || is_map ? first : second);
      std::optional<Local> v2;
      if (two) v2.emplace(*this, e.iter_var2, second);
      Value p;
      if (e.predicate) p = Eval(*e.predicate);
      if (cost_ > limit_) return LimitError();
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

  // transformList, transformMap, transformMapEntry over a list (index, element) or a map (key,
  // value). transformMapEntry's entries may not repeat a key (an error, as in cel-go).
  Value Transform(const Expr& e, const Value& range) {
    const bool is_map = range.kind() == Kind::kMap;
    const size_t n = is_map ? range.map().size() : range.list().size();
    std::vector<Value> list;
    std::vector<MapEntry> entries;
    for (size_t i = 0; i < n; ++i) {
      if (++cost_ > limit_) return LimitError();
      Value first = is_map ? range.map()[i].key : Value::Int(static_cast<int64_t>(i));
      Local v1(*this, e.iter_var, first);
      Local v2(*this, e.iter_var2, is_map ? range.map()[i].value : range.list()[i]);
      if (e.predicate) {
        Value p = Eval(*e.predicate);
        if (p.kind() != Kind::kBool) return p.is_error() ? p : NoOverload("filter", {p});
        if (!p.bool_value()) continue;
      }
      Value t = Eval(*e.transform);
      if (cost_ > limit_) return LimitError();
      if (t.is_error()) return t;
      if (e.macro == Macro::kTransformList) {
        list.push_back(std::move(t));
      } else if (e.macro == Macro::kTransformMap) {
        entries.push_back(MapEntry{std::move(first), std::move(t)});
      } else if (Value merged = MergeEntries(t, entries); merged.is_error()) {
        return merged;
      } else if (cost_ > limit_) {
        return LimitError();
      }
    }
    if (e.macro == Macro::kTransformList) return Value::List(std::move(list));
    return Value::Map(std::move(entries));
  }

  // Each new key is compared with every key so far, and charged for it: the cost limit bounds
  // the quadratic work (100,000 entries would otherwise take billions of comparisons).
  Value MergeEntries(const Value& entry, std::vector<MapEntry>& into) {
    if (entry.kind() != Kind::kMap) return NoOverload("transformMapEntry", {entry});
    for (const MapEntry& add : entry.map()) {
      cost_ += static_cast<int64_t>(into.size());
      if (cost_ > limit_) return Value::Bool(true);  // the caller reports the exceeded limit
      for (const MapEntry& existing : into) {
        if (Equal(existing.key, add.key)) {
          return Value::Error(
              util::Cat("insert failed: key ", ToCelText(add.key), " already exists"));
        }
      }
      into.push_back(add);
    }
    return Value::Bool(true);
  }

  const Activation& act_;
  int64_t limit_;
  int64_t cost_ = 0;
  Local* top_ = nullptr;
};

// Collapses `x.a["b"].c` (plain selects and constant string indexes over an identifier) into
// one kPath node. Returns false when `e` is not such a chain.
bool CollectPath(const Expr& e, std::string* root, std::vector<std::string>* steps, int* cost) {
  if (e.kind == Expr::Kind::kIdent) {
    *root = e.name;
    *cost += 1;
    return true;
  }
  if (e.kind == Expr::Kind::kPath) {  // planned bottom-up: extend the inner path
    *root = e.name;
    steps->insert(steps->end(), e.path.begin(), e.path.end());
    *cost += e.path_cost;
    return true;
  }
  if (e.kind == Expr::Kind::kSelect && !e.test_only && !e.optional_select) {
    if (!CollectPath(*e.target, root, steps, cost)) return false;
    steps->push_back(e.name);
    *cost += 1;
    return true;
  }
  if (e.kind == Expr::Kind::kCall && e.op == CallOp::kIndex &&
      e.args[1]->kind == Expr::Kind::kConst && e.args[1]->value.kind() == Kind::kString) {
    if (!CollectPath(*e.args[0], root, steps, cost)) return false;
    steps->push_back(e.args[1]->value.str());
    *cost += 2;
    return true;
  }
  return false;
}

void MakePath(Expr& e) {
  std::string root;
  std::vector<std::string> steps;
  int cost = 0;
  if (e.kind == Expr::Kind::kIdent || e.kind == Expr::Kind::kPath ||
      !CollectPath(e, &root, &steps, &cost)) {
    return;
  }
  auto original = std::make_unique<Expr>(std::move(e));
  e = Expr();
  e.kind = Expr::Kind::kPath;
  e.pos = original->pos;
  e.name = std::move(root);
  e.path = std::move(steps);
  e.path_cost = cost;
  e.target = std::move(original);
}

// The pattern argument of a matches/find/findAll call, or null for other calls.
const Expr* PatternOf(const Expr& e) {
  if (e.kind != Expr::Kind::kCall) return nullptr;
  const bool receiver = e.target != nullptr;
  if (e.name == "matches") {
    if (receiver && e.args.size() == 1) return e.args[0].get();
    if (!receiver && e.args.size() == 2) return e.args[1].get();
  }
  if ((e.name == "find" || e.name == "findAll") && receiver && !e.args.empty()) {
    return e.args[0].get();
  }
  return nullptr;
}

// Compiles a constant regular expression once; a bad one is the program's compile error.
void PlanRegex(Expr& e, std::string_view source, std::string& problem) {
  const Expr* pattern = PatternOf(e);
  if (pattern == nullptr || pattern->kind != Expr::Kind::kConst ||
      pattern->value.kind() != Kind::kString) {
    return;
  }
  e.regex = CompileRegex(pattern->value.str());
  if (!e.regex->ok() && problem.empty()) {
    problem = FormatIssue(source, pattern->pos, "invalid regular expression: " + e.regex->error());
  }
}

// A format() call on a constant format string with a list literal checks at compile time, as
// Kubernetes does: a bad clause, a count mismatch or (all values constant) a value its clause
// does not take is the program's compile error. Runs before the call's operands are folded,
// so only literals count, as in Kubernetes.
void PlanFormat(const Expr& e, std::string_view source, std::string& problem) {
  if (e.kind != Expr::Kind::kCall || e.name != "format" || e.target == nullptr ||
      e.args.size() != 1 || !problem.empty()) {
    return;
  }
  const Expr& format = *e.target;
  const Expr& list = *e.args[0];
  if (format.kind != Expr::Kind::kConst || format.value.kind() != Kind::kString ||
      list.kind != Expr::Kind::kList ||
      std::find(list.optional.begin(), list.optional.end(), true) != list.optional.end()) {
    return;
  }
  std::string bad = CheckFormatCall(format.value.str(), list.args.size());
  if (bad.empty()) {
    std::vector<Value> values;
    for (const ExprPtr& item : list.args) {
      if (item->kind != Expr::Kind::kConst) return;
      values.push_back(item->value);
    }
    const Value args[] = {format.value, Value::List(std::move(values))};
    const LibraryOverload* fn = FindLibraryOverload("format", CallStyle::kReceiver, 2);
    if (Value v = fn->fn(std::span<const Value>(args)); v.is_error()) bad = v.str();
  }
  if (!bad.empty()) problem = FormatIssue(source, e.pos, bad);
}

CallShape CallShapeOf(const Expr& e) {
  const bool receiver = e.target != nullptr;
  if (receiver && e.args.size() == 1 && (e.name == "or" || e.name == "orValue")) {
    return CallShape::kOptionalOr;
  }
  if (receiver && e.args.empty() && e.name == "distinct") return CallShape::kPairsSelf;
  if (!receiver && e.args.size() == 2 &&
      (e.name == "sets.contains" || e.name == "sets.equivalent" || e.name == "sets.intersects")) {
    return CallShape::kPairsBoth;
  }
  return CallShape::kPlain;
}

// Resolves every call once (operators to CallOp, library functions to their overload,
// constant regular expressions compiled) and evaluates calls, lists and maps whose operands
// are all constants, so selectors like `... >= quantity("40Gi")` do not re-parse their
// constants on every evaluation. Calls whose constant evaluation is an error are left for run
// time, where the error belongs. The first bad constant pattern goes to `problem`.
void Plan(Expr& e, std::string_view source, std::string& problem) {
  PlanFormat(e, source, problem);
  if (e.target) Plan(*e.target, source, problem);
  for (ExprPtr& a : e.args) Plan(*a, source, problem);
  for (auto& [k, v] : e.entries) {
    Plan(*k, source, problem);
    Plan(*v, source, problem);
  }
  if (e.iter_range) Plan(*e.iter_range, source, problem);
  if (e.predicate) Plan(*e.predicate, source, problem);
  if (e.transform) Plan(*e.transform, source, problem);
  PlanRegex(e, source, problem);
  if (e.kind == Expr::Kind::kCall) {
    static const std::pair<std::string_view, CallOp> kOps[] = {
        {"_&&_", CallOp::kAnd},   {"_||_", CallOp::kOr},        {"_?_:_", CallOp::kCond},
        {"_[_]", CallOp::kIndex}, {"_[?_]", CallOp::kOptIndex}, {"_==_", CallOp::kEq},
        {"_!=_", CallOp::kNe},    {"_<_", CallOp::kLt},         {"_<=_", CallOp::kLe},
        {"_>_", CallOp::kGt},     {"_>=_", CallOp::kGe},        {"@in", CallOp::kIn},
        {"!_", CallOp::kNot}};
    for (const auto& [name, op] : kOps) {
      if (!e.target && e.name == name) e.op = op;
    }
    if (e.op == CallOp::kGeneric) {
      e.shape = CallShapeOf(e);
      e.library = FindLibraryOverload(
          e.name, e.target != nullptr ? CallStyle::kReceiver : CallStyle::kGlobal,
          e.args.size() + (e.target ? 1 : 0));
    }
  }
  bool foldable =
      e.kind == Expr::Kind::kCall || e.kind == Expr::Kind::kList || e.kind == Expr::Kind::kMap;
  if (!foldable) {
    MakePath(e);
    return;
  }
  auto is_const = [](const ExprPtr& x) { return x->kind == Expr::Kind::kConst; };
  bool all_const = !e.target || is_const(e.target);
  for (const ExprPtr& a : e.args) all_const = all_const && is_const(a);
  for (const auto& [k, v] : e.entries) all_const = all_const && is_const(k) && is_const(v);
  if (!all_const) {
    MakePath(e);
    return;
  }
  MapActivation none;
  Evaluator ev(none, kDefaultCostLimit);
  Value v = ev.Eval(e);
  if (v.is_error()) return;
  // (reached only when every operand is constant)
  auto folded = std::make_unique<Expr>();
  folded->kind = Expr::Kind::kConst;
  folded->pos = e.pos;
  folded->value = std::move(v);
  e = std::move(*folded);
}

}  // namespace

absl::StatusOr<Program> Program::Compile(std::string_view source, const CompileOptions& options) {
  absl::StatusOr<ExprPtr> ast = Parse(source);
  if (!ast.ok()) return ast.status();
  if (options.check_references) {
    absl::Status s = Check(**ast, source,
                           CheckOptions{options.variables, options.dra_device, options.kubernetes});
    if (!s.ok()) return s;
  }
  std::string problem;
  Plan(**ast, source, problem);
  if (!problem.empty()) return absl::InvalidArgumentError(problem);
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
