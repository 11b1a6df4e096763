// The CEL abstract syntax tree produced by the parser (macros already expanded into
// comprehensions). Immutable after parsing; safe to share between threads.
#ifndef GPUPLANE_CEL_AST_H_
#define GPUPLANE_CEL_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cel/value.h"

namespace gpuplane::cel {

struct Expr;
struct LibraryOverload;
}  // namespace gpuplane::cel
namespace re2 {
class RE2;
}  // namespace re2
namespace gpuplane::cel {
using ExprPtr = std::unique_ptr<Expr>;

// Calls resolved at compile time (Program::Compile's planning pass) so evaluation does not
// compare function names.
enum class CallOp : uint8_t {
  kGeneric,
  kAnd,
  kOr,
  kCond,
  kIndex,
  kOptIndex,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNot
};

// Which macro a comprehension came from; the evaluator implements each directly.
// The transform* macros are the two-variable comprehensions of CEL's comprehensions extension
// (cel-go ext.TwoVarComprehensions, part of Kubernetes' CEL environment).
enum class Macro : uint8_t {
  kNone,
  kAll,
  kExists,
  kExistsOne,
  kMap,
  kMapFilter,
  kFilter,
  kBind,
  kTransformList,      // (i, v, [filter,] value) -> list
  kTransformMap,       // (k, v, [filter,] value) -> map from the index/key to the value
  kTransformMapEntry,  // (k, v, [filter,] {key: value}) -> the entries merged into one map
  kOptMap,             // optional.optMap(x, value): none stays none, else optional.of(value)
  kOptFlatMap,         // optional.optFlatMap(x, optional value)
};

// Generic calls that evaluate or charge unlike the rest, recognised once by the planner so the
// evaluator compares a byte instead of the function's name on every call.
enum class CallShape : uint8_t {
  kPlain,
  kOptionalOr,  // opt.or(x) / opt.orValue(x): x is evaluated only when opt is empty
  kPairsSelf,   // distinct(): charged for the pairs of its receiver's elements
  kPairsBoth,   // sets.contains/equivalent/intersects: charged for the pairs across two lists
};

struct Expr {
  // kPath is made by the planner only: `name.step.step` / `name["step"]` lookups of constant
  // string keys through plain maps; `target` keeps the original subtree as the fallback.
  enum class Kind : uint8_t { kConst, kIdent, kSelect, kCall, kList, kMap, kComprehension, kPath };
  Kind kind = Kind::kConst;
  int32_t pos = 0;  // byte offset of the expression in the source

  Value value;                // kConst
  std::string name;           // kIdent: variable; kSelect: field; kCall: function
  ExprPtr target;             // kSelect: operand; kCall: receiver (nullptr for global calls)
  std::vector<ExprPtr> args;  // kCall: arguments; kList: elements
  std::vector<std::pair<ExprPtr, ExprPtr>> entries;  // kMap
  std::vector<bool> optional;                        // kList elements / kMap entries written `?x`
  std::vector<std::string> path;                     // kPath: keys after the root variable `name`
  int32_t path_cost = 0;                             // kPath: cost of the nodes it replaces
  CallOp op = CallOp::kGeneric;                      // kCall, set by the planner
  CallShape shape = CallShape::kPlain;               // kCall, set by the planner
  const LibraryOverload* library = nullptr;          // kCall: resolved library function, if any
  // kCall of matches/find/findAll whose pattern is a constant: compiled by the planner.
  std::shared_ptr<const re2::RE2> regex;
  bool test_only = false;        // kSelect inside has()
  bool optional_select = false;  // kSelect written `.?field`
  bool quoted_field = false;     // kSelect whose field name was written in backticks

  // kComprehension (macro expansion)
  Macro macro = Macro::kNone;
  std::string iter_var;
  std::string iter_var2;  // two-variable forms: index/key and value
  ExprPtr iter_range;
  ExprPtr predicate;  // all/exists/exists_one/filter predicate; map and transform* filter
  ExprPtr transform;  // map and transform* transform; bind: the body
};

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_AST_H_
