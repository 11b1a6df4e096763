// The CEL standard library: operators, size, string functions, conversions. Internal to
// cel/. Pure functions; thread-safe.
#ifndef GPUPLANE_CEL_BUILTINS_H_
#define GPUPLANE_CEL_BUILTINS_H_

#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cel/library.h"
#include "cel/value.h"
#include "re2/re2.h"

namespace gpuplane::cel {

// Calls `name` on already-evaluated arguments (none of them errors). For kReceiver
// (`x.f(...)`) calls, args[0] is x. Unknown names or argument types yield the error
// "no matching overload for 'NAME' applied to '(TYPES)'".
Value CallBuiltin(std::string_view name, CallStyle style, std::span<const Value> args);

// Whether `name` is a function the runtime knows (for compile-time reference checks).
bool IsKnownFunction(std::string_view name);
// The names a call may use (operators left out), for "did you mean" in errors.
std::vector<std::string> KnownFunctionNames();

// CEL comparison for <, <=, >, >=: -1, 0, 1, or an error value for unsupported operands.
Value Compare(const Value& a, const Value& b, int* result);

// -1, 0 or 1 for two numbers (int, uint, double; no NaN), as cel-go orders them.
int CompareNumbers(const Value& a, const Value& b);

// Type denotations usable as identifiers: int, uint, double, bool, string, bytes, list, map,
// null_type, type. nullptr when `name` is not one.
const Value* TypeDenotation(std::string_view name);

Value NoOverload(std::string_view name, std::span<const Value> args);

// A compiled RE2 for `pattern` (check ok()). Patterns that are constants in a program are
// compiled once, when it is planned (Expr::regex).
std::shared_ptr<const re2::RE2> CompileRegex(const std::string& pattern);
// The same for patterns known only at evaluation: the last few each thread compiled are
// reused (a per-thread cache: no lock, no state shared between threads).
std::shared_ptr<const re2::RE2> RuntimeRegex(const std::string& pattern);
// s.matches(pattern) and matches(s, pattern) with the pattern compiled: `args` are the
// string and the pattern (for type checks and errors).
Value MatchesWith(const re2::RE2& re, std::span<const Value> args);
// s.find(pattern) / s.findAll(pattern[, limit]) with the pattern compiled.
Value FindWith(const re2::RE2& re, std::span<const Value> args, bool all);
Value NoOverload(std::string_view name, std::initializer_list<Value> args);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_BUILTINS_H_
