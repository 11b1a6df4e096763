// Small string helpers shared by parsers and printers. Pure functions; thread-safe.
#ifndef GPUPLANE_UTIL_STRINGS_H_
#define GPUPLANE_UTIL_STRINGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::util {

namespace internal {
inline void AppendPiece(std::string& out, std::string_view s) { out.append(s); }
inline void AppendPiece(std::string& out, const char* s) { out.append(s); }
inline void AppendPiece(std::string& out, const std::string& s) { out.append(s); }
inline void AppendPiece(std::string& out, char c) { out.push_back(c); }
template <typename T>
requires std::is_arithmetic_v<T>
void AppendPiece(std::string& out, T v) { out.append(std::to_string(v)); }
}  // namespace internal

// Concatenates strings, string_views and numbers (Debian's abseil StrCat takes no
// std::string_view, hence this).
template <typename... Ts>
void Append(std::string& out, const Ts&... parts) {
  (internal::AppendPiece(out, parts), ...);
}
template <typename... Ts>
std::string Cat(const Ts&... parts) {
  std::string out;
  Append(out, parts...);
  return out;
}

// Appends `s` as a JSON string literal (with quotes and escapes) to `out`.
void AppendJsonString(std::string& out, std::string_view s);

// Appends the UTF-8 encoding of code point `cp` (REQUIRES: cp <= 0x10FFFF).
void AppendUtf8(std::string& out, uint32_t cp);

// Decodes the UTF-8 sequence at s[i] into `cp` and moves `i` past it; false, with `i`
// unchanged, when it is not valid UTF-8 (truncated, overlong, a surrogate, above U+10FFFF).
// REQUIRES: i < s.size().
bool NextUtf8(std::string_view s, size_t& i, uint32_t& cp);
// Whether all of `s` is valid UTF-8.
bool ValidUtf8(std::string_view s);

// Returns `s` as a JSON string literal.
std::string JsonQuote(std::string_view s);

// `v` with exactly `digits` decimals ("%.*f"): 2.5 with 2 -> "2.50".
std::string Fixed(double v, int digits);

// Reads a whole file; the error names the path and the OS reason.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// The pieces of `s` between `sep`s, empty pieces dropped ("a  b" by ' ' is {"a", "b"}).
std::vector<std::string> SplitNonEmpty(std::string_view s, char sep);

}  // namespace gpuplane::util

#endif  // GPUPLANE_UTIL_STRINGS_H_
