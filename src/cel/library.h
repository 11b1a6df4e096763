// Registry of the Kubernetes CEL libraries beyond the core operators: optional types, the
// strings and lists extensions, sets, regex find/findAll, quantity and semver; and what the
// library files share (the largest string a function builds, argument kind checks). Internal
// to cel/. Immutable after static initialization; thread-safe.
#ifndef GPUPLANE_CEL_LIBRARY_H_
#define GPUPLANE_CEL_LIBRARY_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cel/value.h"

namespace gpuplane::cel {

using LibraryFn = Value (*)(std::span<const Value> args);

// Largest string a library function builds: the cost limit charges what functions scan, so a
// single replace('', big) or format() could otherwise multiply memory use before any limit is
// checked.
inline constexpr size_t kMaxResultBytes = size_t{8} << 20;

inline bool IsStr(const Value& v) { return v.kind() == Kind::kString; }

struct LibraryOverload {
  std::string_view name;  // "charAt", "optional.of", "sets.contains"
  bool receiver;          // x.f(...) (args[0] is x) or f(...)
  int arity;              // including the receiver
  LibraryFn fn;
};

// How a function is called: f(x, ...) or x.f(...).
enum class CallStyle { kGlobal, kReceiver };

// nullptr when no overload has this name, call style and arity.
const LibraryOverload* FindLibraryOverload(std::string_view name, CallStyle style, size_t arity);
bool IsLibraryFunction(std::string_view name);
// The library's function names, sorted, each once.
std::vector<std::string> LibraryFunctionNames();

// Namespaces whose `ns.f(...)` calls name global functions (optional.of, sets.contains...).
bool IsFunctionNamespace(std::string_view ident);

// Per-file tables, concatenated by the registry.
std::span<const LibraryOverload> StringsLibrary();
std::span<const LibraryOverload> FormatLibrary();
std::span<const LibraryOverload> ListsLibrary();
std::span<const LibraryOverload> KubernetesLibrary();

// Checks a format() call whose format string is a constant and whose argument is a list
// literal of `arg_count` values, as Kubernetes does when it compiles one: every clause is known,
// and clauses and values pair up exactly. Returns the problem, or "" when there is none.
std::string CheckFormatCall(const std::string& format, size_t arg_count);

// Helpers shared by the library files.
Value ArgError(std::string_view name, std::span<const Value> args);
std::vector<size_t> CodePointOffsets(const std::string& s);  // byte offset of each code point
// kNormalize accepts "v1", "1.2" and leading zeros, as Kubernetes' semver(s, true) does.
enum class SemverParse { kStrict, kNormalize };
Value ParseSemver(const std::string& text, SemverParse mode);
int CompareSemver(const Semver& a, const Semver& b);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_LIBRARY_H_
