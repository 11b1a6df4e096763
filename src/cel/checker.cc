#include "cel/checker.h"

#include <map>
#include <memory>

#include "cel/builtins.h"
#include "cel/parser.h"
#include "util/strings.h"
#include "util/suggest.h"

namespace gpuplane::cel {
namespace {

// A static type's kind: the runtime value kinds (the same numbers as cel::Kind, so a constant's
// type is its value's kind), plus dyn (known only at run time) and the DRA device map.
enum class T : uint8_t {
  kNull = static_cast<uint8_t>(Kind::kNull),
  kBool = static_cast<uint8_t>(Kind::kBool),
  kInt = static_cast<uint8_t>(Kind::kInt),
  kUint = static_cast<uint8_t>(Kind::kUint),
  kDouble = static_cast<uint8_t>(Kind::kDouble),
  kString = static_cast<uint8_t>(Kind::kString),
  kBytes = static_cast<uint8_t>(Kind::kBytes),
  kList = static_cast<uint8_t>(Kind::kList),
  kMap = static_cast<uint8_t>(Kind::kMap),
  kType = static_cast<uint8_t>(Kind::kType),
  kOptional = static_cast<uint8_t>(Kind::kOptional),
  kQuantity = static_cast<uint8_t>(Kind::kQuantity),
  kSemver = static_cast<uint8_t>(Kind::kSemver),
  kDyn,
  kDevice,
};
static_assert(static_cast<uint8_t>(T::kDyn) > static_cast<uint8_t>(Kind::kSemver),
              "T extends Kind");

// A static type: kind plus element types for lists (elem), maps (key, elem) and optionals.
struct Type {
  T kind = T::kDyn;
  std::shared_ptr<const Type> key;
  std::shared_ptr<const Type> elem;
};

Type Of(T k) { return Type{k, nullptr, nullptr}; }
Type ListOf(Type e) { return Type{T::kList, nullptr, std::make_shared<const Type>(std::move(e))}; }
Type MapOf(Type k, Type v) {
  return Type{T::kMap, std::make_shared<const Type>(std::move(k)),
              std::make_shared<const Type>(std::move(v))};
}
Type OptionalOf(Type e) {
  return Type{T::kOptional, nullptr, std::make_shared<const Type>(std::move(e))};
}
Type Elem(const Type& t) { return t.elem ? *t.elem : Of(T::kDyn); }
Type Key(const Type& t) { return t.key ? *t.key : Of(T::kDyn); }

std::string_view Name(T k) {
  switch (k) {
    case T::kDyn:
      return "dyn";
    case T::kNull:
      return "null_type";
    case T::kBool:
      return "bool";
    case T::kInt:
      return "int";
    case T::kUint:
      return "uint";
    case T::kDouble:
      return "double";
    case T::kString:
      return "string";
    case T::kBytes:
      return "bytes";
    case T::kList:
      return "list";
    case T::kMap:
      return "map";
    case T::kType:
      return "type";
    case T::kOptional:
      return "optional_type";
    case T::kQuantity:
      return "kubernetes.Quantity";
    case T::kSemver:
      return "kubernetes.Semver";
    case T::kDevice:
      return "map";
  }
  return "dyn";
}

T FromName(std::string_view n) {
  static const std::map<std::string_view, T> kNames = {
      {"dyn", T::kDyn},           {"null", T::kNull},    {"bool", T::kBool},
      {"int", T::kInt},           {"uint", T::kUint},    {"double", T::kDouble},
      {"string", T::kString},     {"bytes", T::kBytes},  {"list", T::kList},
      {"map", T::kMap},           {"type", T::kType},    {"optional", T::kOptional},
      {"quantity", T::kQuantity}, {"semver", T::kSemver}};
  auto it = kNames.find(n);
  return it == kNames.end() ? T::kDyn : it->second;
}

// Overload signatures: "name(arg,...)->result" for global functions and
// "recv.name(arg,...)->result" for receiver calls. "dyn" matches anything; results of "dyn"
// are unknown (e.g. list elements).
constexpr std::string_view kSignatures[] = {
    "_+_(int,int)->int",
    "_+_(uint,uint)->uint",
    "_+_(double,double)->double",
    "_+_(string,string)->string",
    "_+_(bytes,bytes)->bytes",
    "_+_(list,list)->list",
    "_-_(int,int)->int",
    "_-_(uint,uint)->uint",
    "_-_(double,double)->double",
    "_*_(int,int)->int",
    "_*_(uint,uint)->uint",
    "_*_(double,double)->double",
    "_/_(int,int)->int",
    "_/_(uint,uint)->uint",
    "_/_(double,double)->double",
    "_%_(int,int)->int",
    "_%_(uint,uint)->uint",
    "-_(int)->int",
    "-_(double)->double",
    "!_(bool)->bool",
    "_==_(dyn,dyn)->bool",
    "_!=_(dyn,dyn)->bool",
    "@in(dyn,list)->bool",
    "@in(dyn,map)->bool",
    "size(string)->int",
    "size(bytes)->int",
    "size(list)->int",
    "size(map)->int",
    "string.size()->int",
    "bytes.size()->int",
    "list.size()->int",
    "map.size()->int",
    "string.contains(string)->bool",
    "string.startsWith(string)->bool",
    "string.endsWith(string)->bool",
    "string.matches(string)->bool",
    "matches(string,string)->bool",
    "int(int)->int",
    "int(uint)->int",
    "int(double)->int",
    "int(string)->int",
    "uint(uint)->uint",
    "uint(int)->uint",
    "uint(double)->uint",
    "uint(string)->uint",
    "double(double)->double",
    "double(int)->double",
    "double(uint)->double",
    "double(string)->double",
    "string(string)->string",
    "string(int)->string",
    "string(uint)->string",
    "string(double)->string",
    "string(bool)->string",
    "string(bytes)->string",
    "string(quantity)->string",
    "string(semver)->string",
    "bytes(bytes)->bytes",
    "bytes(string)->bytes",
    "bool(bool)->bool",
    "bool(string)->bool",
    "type(dyn)->type",
    "dyn(dyn)->dyn",
    // optional
    "optional.of(dyn)->optional",
    "optional.none()->optional",
    "optional.ofNonZeroValue(dyn)->optional",
    "optional.hasValue()->bool",
    "optional.value()->dyn",
    "optional.orValue(dyn)->dyn",
    "optional.or(optional)->optional",
    // strings extension
    "string.charAt(int)->string",
    "string.indexOf(string)->int",
    "string.indexOf(string,int)->int",
    "string.lastIndexOf(string)->int",
    "string.lastIndexOf(string,int)->int",
    "string.lowerAscii()->string",
    "string.upperAscii()->string",
    "string.replace(string,string)->string",
    "string.replace(string,string,int)->string",
    "string.split(string)->list",
    "string.split(string,int)->list",
    "string.substring(int)->string",
    "string.substring(int,int)->string",
    "string.trim()->string",
    "string.reverse()->string",
    "list.join()->string",
    "list.join(string)->string",
    "string.format(list)->string",
    "strings.quote(string)->string",
    // lists
    "list.isSorted()->bool",
    "list.sum()->dyn",
    "list.min()->dyn",
    "list.max()->dyn",
    "list.indexOf(dyn)->int",
    "list.lastIndexOf(dyn)->int",
    "list.slice(int,int)->list",
    "list.flatten()->list",
    "list.flatten(int)->list",
    "list.distinct()->list",
    "list.reverse()->list",
    "list.sort()->list",
    "list.first()->optional",
    "list.last()->optional",
    "lists.range(int)->list",
    "sets.contains(list,list)->bool",
    "sets.equivalent(list,list)->bool",
    "sets.intersects(list,list)->bool",
    // regex
    "string.find(string)->string",
    "string.findAll(string)->list",
    "string.findAll(string,int)->list",
    // quantity
    "quantity(string)->quantity",
    "isQuantity(string)->bool",
    "quantity.isInteger()->bool",
    "quantity.asInteger()->int",
    "quantity.asApproximateFloat()->double",
    "quantity.sign()->int",
    "quantity.add(quantity)->quantity",
    "quantity.add(int)->quantity",
    "quantity.sub(quantity)->quantity",
    "quantity.sub(int)->quantity",
    "quantity.compareTo(quantity)->int",
    "quantity.isGreaterThan(quantity)->bool",
    "quantity.isLessThan(quantity)->bool",
    // semver
    "semver(string)->semver",
    "semver(string,bool)->semver",
    "isSemver(string)->bool",
    "isSemver(string,bool)->bool",
    "semver.major()->int",
    "semver.minor()->int",
    "semver.patch()->int",
    "semver.compareTo(semver)->int",
    "semver.isGreaterThan(semver)->bool",
    "semver.isLessThan(semver)->bool",
};

struct Signature {
  std::string name;
  bool receiver;
  std::vector<T> params;  // receiver first
  T result;
};

const std::multimap<std::string, Signature>& Signatures() {
  static const auto* table = [] {
    auto* m = new std::multimap<std::string, Signature>();
    for (std::string_view s : kSignatures) {
      Signature sig;
      size_t open = s.find('(');
      std::string_view head = s.substr(0, open);
      size_t dot = head.find('.');
      bool ns =
          head.substr(0, dot) == "optional" && head.substr(dot + 1) != "hasValue" &&
          (head == "optional.of" || head == "optional.none" || head == "optional.ofNonZeroValue");
      if (dot != std::string_view::npos && head.substr(0, dot) != "strings" &&
          head.substr(0, dot) != "lists" && head.substr(0, dot) != "sets" && !ns) {
        sig.receiver = true;
        sig.params.push_back(FromName(head.substr(0, dot)));
        sig.name = std::string(head.substr(dot + 1));
      } else {
        sig.receiver = false;
        sig.name = std::string(head);
      }
      size_t close = s.find(')');
      std::string_view args = s.substr(open + 1, close - open - 1);
      while (!args.empty()) {
        size_t comma = args.find(',');
        sig.params.push_back(FromName(args.substr(0, comma)));
        args = comma == std::string_view::npos ? "" : args.substr(comma + 1);
      }
      sig.result = FromName(s.substr(s.find("->") + 2));
      m->emplace(sig.name, std::move(sig));
    }
    return m;
  }();
  return *table;
}

bool Matches(T param, const Type& arg) {
  if (param == T::kDyn || arg.kind == T::kDyn) return true;
  if (arg.kind == T::kDevice) return param == T::kMap;
  return param == arg.kind;
}

class Checker {
 public:
  Checker(std::string_view source, const CheckOptions& options)
      : source_(source), options_(options) {}

  absl::Status Run(const Expr& e) {
    Infer(e);
    if (problem_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(problem_);
  }

 private:
  Type Fail(int32_t pos, const std::string& message) {
    if (problem_.empty()) problem_ = FormatIssue(source_, pos, message);
    return Of(T::kDyn);
  }

  static Type DeviceField(const std::string& field) {
    if (field == "driver") return Of(T::kString);
    if (field == "attributes") return MapOf(Of(T::kString), MapOf(Of(T::kString), Of(T::kDyn)));
    if (field == "capacity") {
      return MapOf(Of(T::kString), MapOf(Of(T::kString), Of(T::kQuantity)));
    }
    if (field == "allowMultipleAllocations") return Of(T::kBool);
    return Of(T::kNull);  // marks an unknown field
  }

  Type Ident(const Expr& e) {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->first == e.name) return it->second;
    }
    for (const std::string& v : options_.variables) {
      if (v == e.name) {
        return (options_.dra_device && v == "device") ? Of(T::kDevice) : Of(T::kDyn);
      }
    }
    if (TypeDenotation(e.name) != nullptr) return Of(T::kType);
    std::vector<std::string> names = options_.variables;
    for (const auto& [name, type] : scope_) names.push_back(name);
    return Fail(e.pos,
                "undeclared reference to '" + e.name + "'" + util::DidYouMean(e.name, names));
  }

  Type Select(const Expr& e) {
    Type operand = Infer(*e.target);
    bool optional = e.optional_select;
    if (operand.kind == T::kOptional) {
      operand = Elem(operand);
      optional = true;
    }
    Type result = Of(T::kDyn);
    switch (operand.kind) {
      case T::kDyn:
        break;
      case T::kMap:
        result = Elem(operand);
        break;
      case T::kDevice:
        result = DeviceField(e.name);
        if (result.kind == T::kNull) {
          return Fail(e.pos, "undefined field '" + e.name +
                                 "' (device has driver, attributes, "
                                 "capacity, allowMultipleAllocations)");
        }
        break;
      default:
        return Fail(e.pos,
                    util::Cat("type '", Name(operand.kind), "' does not support field selection"));
    }
    if (e.test_only) return Of(T::kBool);
    return optional ? OptionalOf(result) : result;
  }

  Type Call(const Expr& e) {
    std::vector<Type> args;
    if (e.target) args.push_back(Infer(*e.target));
    for (const ExprPtr& a : e.args) args.push_back(Infer(*a));
    const std::string& n = e.name;
    if (n == "_&&_" || n == "_||_") {
      for (size_t i = 0; i < 2; ++i) {
        if (!Matches(T::kBool, args[i])) return NoMatch(e, args);
      }
      return Of(T::kBool);
    }
    if (n == "_?_:_") {
      if (!Matches(T::kBool, args[0])) return NoMatch(e, args);
      return args[1].kind == args[2].kind ? args[1] : Of(T::kDyn);
    }
    if (n == "_<_" || n == "_<=_" || n == "_>_" || n == "_>=_") return Ordering(e, args);
    if (n == "_[_]" || n == "_[?_]") return Index(e, args, n == "_[?_]");
    if (!IsKnownFunction(n)) {
      return Fail(
          e.pos, "undeclared reference to '" + n + "'" + util::DidYouMean(n, KnownFunctionNames()));
    }
    auto [lo, hi] = Signatures().equal_range(n);
    if (lo == hi) return Of(T::kDyn);  // known to the runtime, no signature recorded
    std::vector<const Signature*> fits;
    bool arity_exists = false;
    for (auto it = lo; it != hi; ++it) {
      const Signature& s = it->second;
      if (s.receiver != (e.target != nullptr) || s.params.size() != args.size()) continue;
      arity_exists = true;
      bool ok = true;
      for (size_t i = 0; i < args.size() && ok; ++i) ok = Matches(s.params[i], args[i]);
      if (ok) fits.push_back(&s);
    }
    if (!arity_exists || fits.empty()) return NoMatch(e, args);
    T result = fits[0]->result;
    for (const Signature* s : fits) {
      if (s->result != result) result = T::kDyn;
    }
    if (n == "optional.of" || n == "optional.ofNonZeroValue") return OptionalOf(args[0]);
    if (n == "value" && args[0].kind == T::kOptional) return Elem(args[0]);
    if ((n == "orValue") && args[0].kind == T::kOptional) return Elem(args[0]);
    return Of(result);
  }

  Type Ordering(const Expr& e, const std::vector<Type>& args) {
    auto orderable = [](T k) {
      return k == T::kDyn || k == T::kInt || k == T::kUint || k == T::kDouble || k == T::kString ||
             k == T::kBytes || k == T::kBool;
    };
    auto numeric = [](T k) { return k == T::kInt || k == T::kUint || k == T::kDouble; };
    T a = args[0].kind, b = args[1].kind;
    bool ok = orderable(a) && orderable(b) &&
              (a == T::kDyn || b == T::kDyn || a == b || (numeric(a) && numeric(b)));
    return ok ? Of(T::kBool) : NoMatch(e, args);
  }

  Type Index(const Expr& e, const std::vector<Type>& args, bool optional) {
    Type c = args[0];
    if (c.kind == T::kOptional) {
      c = Elem(c);
      optional = true;
    }
    Type result = Of(T::kDyn);
    switch (c.kind) {
      case T::kDyn:
        break;
      case T::kList:
        if (!Matches(T::kInt, args[1]) && !Matches(T::kUint, args[1]) &&
            !Matches(T::kDouble, args[1])) {
          return NoMatch(e, args);
        }
        result = Elem(c);
        break;
      case T::kMap:
        result = Elem(c);
        break;
      case T::kDevice:
        if (!Matches(T::kString, args[1])) return NoMatch(e, args);
        break;
      default:
        return NoMatch(e, args);
    }
    return optional ? OptionalOf(result) : result;
  }

  Type NoMatch(const Expr& e, const std::vector<Type>& args) {
    std::string types;
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) types += ", ";
      types += Name(args[i].kind);
    }
    std::string shown = e.name == "@in" ? "in" : e.name;
    return Fail(e.pos, util::Cat("found no matching overload for '", shown, "' applied to '(",
                                 types, ")'"));
  }

  // A constant's type is its value's kind (errors and optionals: dyn, as before checking).
  static Type Literal(const Expr& e) {
    const Kind k = e.value.kind();
    if (k == Kind::kError || k == Kind::kOptional) return Of(T::kDyn);
    return Of(static_cast<T>(k));
  }

  // Element type of a homogeneous literal, else dyn.
  static Type Join(const std::vector<Type>& types) {
    if (types.empty()) return Of(T::kDyn);
    for (const Type& t : types) {
      if (t.kind != types[0].kind || t.kind == T::kList || t.kind == T::kMap) return Of(T::kDyn);
    }
    return types[0];
  }

  Type Comprehension(const Expr& e) {
    Type range = Infer(*e.iter_range);
    if (e.macro == Macro::kBind) {
      scope_.emplace_back(e.iter_var, range);
      Type body = Infer(*e.transform);
      scope_.pop_back();
      return body;
    }
    Type v1 = Of(T::kDyn), v2 = Of(T::kDyn);
    bool two = !e.iter_var2.empty();
    switch (range.kind) {
      case T::kList:
        v1 = two ? Of(T::kInt) : Elem(range);
        v2 = Elem(range);
        break;
      case T::kMap:
        v1 = Key(range);
        v2 = Elem(range);
        break;
      case T::kDevice:
        v1 = Of(T::kString);
        break;
      case T::kDyn:
        break;
      default:
        return Fail(e.pos,
                    util::Cat("cannot iterate over a value of type '", Name(range.kind), "'"));
    }
    scope_.emplace_back(e.iter_var, v1);
    if (two) scope_.emplace_back(e.iter_var2, v2);
    Type result = Of(T::kBool);
    if (e.predicate) {
      Type p = Infer(*e.predicate);
      if (!Matches(T::kBool, p)) {
        Fail(e.predicate->pos, util::Cat("the predicate must be a bool, not ", Name(p.kind)));
      }
    }
    if (e.macro == Macro::kMap || e.macro == Macro::kMapFilter ||
        e.macro == Macro::kTransformList) {
      result = ListOf(Infer(*e.transform));
    } else if (e.macro == Macro::kFilter) {
      result = ListOf(v1);
    } else if (e.macro == Macro::kTransformMap) {
      result = MapOf(v1, Infer(*e.transform));
    } else if (e.macro == Macro::kTransformMapEntry) {
      result = Infer(*e.transform);
      if (result.kind != T::kMap && result.kind != T::kDyn) {
        result = Fail(e.transform->pos,
                      util::Cat("transformMapEntry needs a map entry, not ", Name(result.kind)));
      }
    }
    scope_.resize(scope_.size() - (two ? 2 : 1));
    return result;
  }

  Type Infer(const Expr& e) {
    if (!problem_.empty()) return Of(T::kDyn);
    switch (e.kind) {
      case Expr::Kind::kConst:
        return Literal(e);
      case Expr::Kind::kIdent:
        return Ident(e);
      case Expr::Kind::kSelect:
        return Select(e);
      case Expr::Kind::kCall:
        return Call(e);
      case Expr::Kind::kList: {
        std::vector<Type> elems;
        for (const ExprPtr& a : e.args) elems.push_back(Infer(*a));
        bool any_optional = false;
        for (bool o : e.optional) any_optional = any_optional || o;
        return ListOf(any_optional ? Of(T::kDyn) : Join(elems));
      }
      case Expr::Kind::kMap: {
        std::vector<Type> keys, values;
        for (const auto& [k, v] : e.entries) {
          keys.push_back(Infer(*k));
          values.push_back(Infer(*v));
        }
        return MapOf(Join(keys), Join(values));
      }
      case Expr::Kind::kComprehension:
        return Comprehension(e);
      case Expr::Kind::kPath:
        return Of(T::kDyn);
    }
    return Of(T::kDyn);
  }

  std::string_view source_;
  const CheckOptions& options_;
  std::vector<std::pair<std::string, Type>> scope_;
  std::string problem_;
};

}  // namespace

absl::Status Check(const Expr& e, std::string_view source, const CheckOptions& options) {
  return Checker(source, options).Run(e);
}

}  // namespace gpuplane::cel
