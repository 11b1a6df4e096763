// CEL parser: source text -> AST with macros expanded. Syntax errors carry line:column, the
// source line and a caret. Stateless functions; thread-safe.
#ifndef GPUPLANE_CEL_PARSER_H_
#define GPUPLANE_CEL_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "cel/ast.h"

namespace gpuplane::cel {

inline constexpr size_t kMaxExpressionBytes = size_t{10} * 1024;
inline constexpr int kMaxParseDepth = 250;

// Parses `source`. On error the status message reads
// "ERROR: <input>:LINE:COL: Syntax error: ...\n | <source line>\n | ....^".
absl::StatusOr<ExprPtr> Parse(std::string_view source);

// Formats a problem at byte offset `pos` the way Parse reports syntax errors.
std::string FormatIssue(std::string_view source, int32_t pos, std::string_view message);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_PARSER_H_
