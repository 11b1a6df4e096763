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
  kDyn,     // not inferred: matches anything
  kDevice,  // the DRA `device` variable
  kAny,     // declared dynamic (dyn(), variables): matches anything, but a literal's
            // elements must all be kAny or none (Kubernetes' homogeneous literals)
  kAttr,    // a device attribute value: Kubernetes types it google.protobuf.Any; like kAny,
            // and format() will not take it
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
    case T::kAny:
      return "dyn";
    case T::kAttr:
      return "any";
  }
  return "dyn";
}

bool IsDyn(T k) { return k == T::kDyn || k == T::kAny || k == T::kAttr; }

// "list(int)", "map(string, dyn)": a type as Kubernetes' errors print it.
std::string Describe(const Type& t) {
  switch (t.kind) {
    case T::kList:
      return util::Cat("list(", Describe(Elem(t)), ")");
    case T::kMap:
      return util::Cat("map(", Describe(Key(t)), ", ", Describe(Elem(t)), ")");
    case T::kOptional:
      return util::Cat("optional_type(", Describe(Elem(t)), ")");
    default:
      return std::string(Name(t.kind));
  }
}

// Whether values of the two types could ever be equal (cel-go's _==_(A, A)): types not
// inferred, or declared dyn, match anything; otherwise kinds match (1 == 1.0 is an error),
// element by element.
bool Compatible(const Type& a, const Type& b) {
  if (IsDyn(a.kind) || IsDyn(b.kind)) return true;
  if (a.kind != b.kind) return a.kind == T::kDevice || b.kind == T::kDevice;
  if ((a.elem && b.elem && !Compatible(*a.elem, *b.elem)) ||
      (a.key && b.key && !Compatible(*a.key, *b.key))) {
    return false;
  }
  return true;
}

// Whether two elements of one literal agree (cel-go's HomogeneousAggregateLiterals): only
// types not inferred match anything; declared-dyn values match only each other.
bool Homogeneous(const Type& a, const Type& b) {
  if (a.kind == T::kDyn || b.kind == T::kDyn) return true;
  if (a.kind != b.kind) return false;
  if ((a.elem && b.elem && !Homogeneous(*a.elem, *b.elem)) ||
      (a.key && b.key && !Homogeneous(*a.key, *b.key))) {
    return false;
  }
  return true;
}

// The type of a value that is either an `a` or a `b` (a ternary's branches, list `+`, a
// literal's elements): what is not inferred takes the other's type ([[], [1]] is a
// list(list(int))); kinds that differ give the most general (cel-go: [1] + [dyn(1)] is a
// list(dyn); c ? attribute : 'x' is an any).
Type Joined(const Type& a, const Type& b) {
  if (a.kind == T::kDyn) return b;
  if (b.kind == T::kDyn) return a;
  if (a.kind != b.kind) {
    // Declared dyn and any against each other: the second, as cel-go binds the type parameter
    // (c ? attribute : dyn(1) is a dyn, c ? dyn(1) : attribute an any). Either against a
    // concrete type: the dynamic one. Two concrete types: dyn.
    const bool a_dyn = a.kind == T::kAny || a.kind == T::kAttr;
    const bool b_dyn = b.kind == T::kAny || b.kind == T::kAttr;
    if (b_dyn) return b;
    return a_dyn ? a : Of(T::kAny);
  }
  switch (a.kind) {
    case T::kList:
      return ListOf(Joined(Elem(a), Elem(b)));
    case T::kMap:
      return MapOf(Joined(Key(a), Key(b)), Joined(Elem(a), Elem(b)));
    case T::kOptional:
      return OptionalOf(Joined(Elem(a), Elem(b)));
    default:
      return a;
  }
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
    "sign(quantity)->int",
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
  if (param == T::kDyn || IsDyn(arg.kind)) return true;
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
    if (field == "attributes") return MapOf(Of(T::kString), MapOf(Of(T::kString), Of(T::kAttr)));
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
        return (options_.dra_device && v == "device") ? Of(T::kDevice) : Of(T::kAny);
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
    if (e.quoted_field && options_.kubernetes) {
      return Fail(e.pos, "backtick-quoted field names are not in Kubernetes' CEL; write x['" +
                             e.name + "']");
    }
    Type result = Of(T::kDyn);
    switch (operand.kind) {
      case T::kDyn:
      case T::kAny:
      case T::kAttr:
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
    // format()'s argument literals may mix types (cel-go exempts them from the homogeneous
    // rule), however deeply nested.
    const bool exempt = e.name == "format";
    exempt_depth_ += exempt ? 1 : 0;
    for (const ExprPtr& a : e.args) args.push_back(Infer(*a));
    exempt_depth_ -= exempt ? 1 : 0;
    const std::string& n = e.name;
    if (n == "_&&_" || n == "_||_") {
      for (size_t i = 0; i < 2; ++i) {
        if (!Matches(T::kBool, args[i])) return NoMatch(e, args);
      }
      return Of(T::kBool);
    }
    if (n == "_?_:_") {
      if (!Matches(T::kBool, args[0]) || !Compatible(args[1], args[2])) return NoMatch(e, args);
      return Joined(args[1], args[2]);
    }
    if (n == "_==_" || n == "_!=_" || (n == "_+_" && args[0].kind == T::kList)) {
      if (!Compatible(args[0], args[1])) return NoMatch(e, args);
    }
    if (n == "@in" && (args[1].kind == T::kList || args[1].kind == T::kMap) &&
        !Compatible(args[0], args[1].kind == T::kList ? Elem(args[1]) : Key(args[1]))) {
      return NoMatch(e, args);
    }
    if (n == "dyn" && args.size() == 1 && e.target == nullptr) return Of(T::kAny);
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
    // Several overloads fit: arguments declared dyn make the result dyn, as cel-go types it;
    // arguments not inferred leave it not inferred.
    bool declared_dyn = false;
    for (const Type& a : args)
      declared_dyn = declared_dyn || a.kind == T::kAny || a.kind == T::kAttr;
    for (const Signature* s : fits) {
      if (s->result != result) result = declared_dyn ? T::kAny : T::kDyn;
    }
    if (n == "format") CheckFormatArguments(e);
    if (e.target != nullptr && args[0].kind == T::kList) return ListFunction(e, args, result);
    if (n == "_+_" && args[0].kind == T::kList && args[1].kind == T::kList) {
      return Joined(args[0], args[1]);
    }
    if (n == "lists.range") return ListOf(Of(T::kInt));
    if (n == "split" || n == "findAll") return ListOf(Of(T::kString));
    if (n == "optional.of" || n == "optional.ofNonZeroValue") return OptionalOf(args[0]);
    if (n == "value" && args[0].kind == T::kOptional) return Elem(args[0]);
    if ((n == "orValue") && args[0].kind == T::kOptional) return Joined(Elem(args[0]), args[1]);
    return Of(result);
  }

  // Result types of the list functions on a list receiver, as Kubernetes types them.
  Type ListFunction(const Expr& e, const std::vector<Type>& args, T signature_result) {
    const std::string& n = e.name;
    const Type& list = args[0];
    // cel-go declares sort, min, max and sum per element type; on a list of dyn (or of
    // attribute values) they match its dyn overload, whose result is dyn.
    const bool dyn_elements = Elem(list).kind == T::kAny || Elem(list).kind == T::kAttr;
    if (n == "sort" && dyn_elements) return Of(T::kAny);
    if (n == "slice" || n == "distinct" || n == "reverse" || n == "sort") return list;
    if (n == "first" || n == "last") return OptionalOf(Elem(list));
    if (n == "min" || n == "max" || n == "sum") return dyn_elements ? Of(T::kAny) : Elem(list);
    if (n == "flatten" && args.size() == 2) return ListOf(Of(T::kAny));
    if (n == "flatten") {  // declared for list(list(T)) only
      const Type inner = Elem(list);
      if (inner.kind != T::kList && !IsDyn(inner.kind) && list.elem != nullptr) {
        return NoMatch(e, args);
      }
      return ListOf(Elem(inner));
    }
    return Of(signature_result);
  }

  // Kubernetes checks a constant format string's list literal when it compiles, and will
  // not format a device attribute (its static type, google.protobuf.Any, fits no clause).
  void CheckFormatArguments(const Expr& e) {
    if (e.target == nullptr || e.target->kind != Expr::Kind::kConst || e.args.size() != 1 ||
        e.args[0]->kind != Expr::Kind::kList) {
      return;
    }
    ++exempt_depth_;  // re-inferred as the call's arguments were
    for (const ExprPtr& item : e.args[0]->args) {
      if (HasAttr(*item)) {
        --exempt_depth_;
        Fail(item->pos,
             "format: Kubernetes will not format a device attribute (static type "
             "google.protobuf.Any); convert it first, e.g. string(x) or int(x)");
        return;
      }
    }
    --exempt_depth_;
  }

  // Whether a format() argument is a device attribute, itself or as an element of a list or
  // map literal (Kubernetes looks inside literals only: [a].reverse() is just a list).
  bool HasAttr(const Expr& e) {
    if (Infer(e).kind == T::kAttr) return true;
    if (e.kind == Expr::Kind::kList) {
      for (const ExprPtr& item : e.args) {
        if (HasAttr(*item)) return true;
      }
    }
    for (const auto& [k, v] : e.entries) {
      if (HasAttr(*k) || HasAttr(*v)) return true;
    }
    return false;
  }

  Type Ordering(const Expr& e, const std::vector<Type>& args) {
    auto orderable = [](T k) {
      return IsDyn(k) || k == T::kInt || k == T::kUint || k == T::kDouble || k == T::kString ||
             k == T::kBytes || k == T::kBool;
    };
    auto numeric = [](T k) { return k == T::kInt || k == T::kUint || k == T::kDouble; };
    T a = args[0].kind, b = args[1].kind;
    bool ok = orderable(a) && orderable(b) &&
              (IsDyn(a) || IsDyn(b) || a == b || (numeric(a) && numeric(b)));
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
      case T::kAny:
      case T::kAttr:
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
      types += Describe(args[i]);
    }
    std::string shown = e.name == "@in" ? "in" : e.name;
    // Kubernetes documents <Quantity>.sign() but declares only sign(<Quantity>).
    const char* hint = e.name == "sign" && e.target != nullptr
                           ? "; Kubernetes declares sign as a global function: write sign(q)"
                           : "";
    return Fail(e.pos, util::Cat("found no matching overload for '", shown, "' applied to '(",
                                 types, ")'", hint));
  }

  // A constant's type is its value's kind (errors and optionals: dyn, as before checking).
  static Type Literal(const Expr& e) {
    const Kind k = e.value.kind();
    if (k == Kind::kError || k == Kind::kOptional) return Of(T::kDyn);
    return Of(static_cast<T>(k));
  }

  // The element type of a literal's elements (or keys, or values). Under Kubernetes' rules
  // they must agree, else the first that differs is the error; in core CEL a mix is dyn.
  Type Join(const std::vector<const Expr*>& exprs, const std::vector<Type>& types) {
    if (types.empty()) return Of(T::kDyn);
    Type joined = types[0];
    for (size_t i = 1; i < types.size(); ++i) {
      if (!Homogeneous(joined, types[i]) && options_.kubernetes && exempt_depth_ == 0) {
        return Fail(exprs[i]->pos, util::Cat("expected type '", Describe(joined), "' but found '",
                                             Describe(types[i]), "'"));
      }
      joined = Joined(joined, types[i]);
    }
    return joined;
  }

  Type MapLiteral(const Expr& e) {
    std::vector<Type> keys, values;
    std::vector<const Expr*> key_exprs, value_exprs;
    for (const auto& [k, v] : e.entries) {
      keys.push_back(Infer(*k));
      key_exprs.push_back(k.get());
      values.push_back(Infer(*v));
      value_exprs.push_back(v.get());
    }
    Type key = Join(key_exprs, keys);
    bool any_optional = false;  // `?key: optional` entries: values are optionals, unwrapped
    for (bool o : e.optional) any_optional = any_optional || o;
    return MapOf(key, any_optional ? Of(T::kDyn) : Join(value_exprs, values));
  }

  Type Comprehension(const Expr& e) {
    Type range = Infer(*e.iter_range);
    const bool opt = e.macro == Macro::kOptMap || e.macro == Macro::kOptFlatMap;
    if (e.macro == Macro::kBind || opt) {
      if (opt && range.kind != T::kOptional && !IsDyn(range.kind)) {
        return Fail(e.pos, util::Cat("found no matching overload for '",
                                     e.macro == Macro::kOptMap ? "optMap" : "optFlatMap",
                                     "' applied to '", Describe(range), "'"));
      }
      scope_.emplace_back(e.iter_var, opt ? Elem(range) : range);
      Type body = Infer(*e.transform);
      scope_.pop_back();
      if (e.macro == Macro::kOptMap) return OptionalOf(body);
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
      case T::kAny:  // declared dyn: so are the variables
      case T::kAttr:
        v1 = v2 = Of(T::kAny);
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
      if (result.kind != T::kMap && !IsDyn(result.kind)) {
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
        std::vector<const Expr*> exprs;
        for (const ExprPtr& a : e.args) {
          elems.push_back(Infer(*a));
          exprs.push_back(a.get());
        }
        bool any_optional = false;
        for (bool o : e.optional) any_optional = any_optional || o;
        return ListOf(any_optional ? Of(T::kDyn) : Join(exprs, elems));
      }
      case Expr::Kind::kMap:
        return MapLiteral(e);
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
  int exempt_depth_ = 0;  // > 0 inside the arguments of a format() call
};

}  // namespace

absl::Status Check(const Expr& e, std::string_view source, const CheckOptions& options) {
  return Checker(source, options).Run(e);
}

}  // namespace gpuplane::cel
