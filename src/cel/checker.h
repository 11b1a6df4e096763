// Compile-time checks (the "check" layer): undeclared variables, unknown functions, and calls
// whose argument types are known and fit no overload of the function, found by light type
// inference (literals, the typed `device` variable, function results). Types it cannot infer
// match anything, so the checker only rejects what Kubernetes' checker rejects too: besides
// unknown names and overloads, `==`, `!=`, `in`, `?:` and list `+` whose operand types can
// never be equal (1 == 1.0 is an error, as in cel-go; values declared `dyn` match anything).
// Stateless functions; thread-safe.
#ifndef GPUPLANE_CEL_CHECKER_H_
#define GPUPLANE_CEL_CHECKER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "cel/ast.h"

namespace gpuplane::cel {

struct CheckOptions {
  std::vector<std::string> variables;  // all of type dyn, except a `device` variable below
  bool dra_device = false;             // `device` has the DRA selector structure
  // Kubernetes' environment on top of core CEL: list and map literals must be homogeneous
  // (cel-go's HomogeneousAggregateLiterals: elements of one exact type, `dyn` included), and
  // field names may not be backtick-quoted (cel-go 0.26, Kubernetes 1.35, lacks that syntax).
  bool kubernetes = true;
};

// Returns the first problem formatted like a syntax error (line:column, source, caret).
absl::Status Check(const Expr& e, std::string_view source, const CheckOptions& options);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_CHECKER_H_
