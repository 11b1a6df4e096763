// Compile-time checks (the "check" layer): undeclared variables, unknown functions, and calls
// whose argument types are known and fit no overload of the function, found by light type
// inference (literals, the typed `device` variable, function results). Unknown types are
// `dyn` and match anything, so the checker only rejects what can never evaluate. Stateless
// functions; thread-safe.
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
};

// Returns the first problem formatted like a syntax error (line:column, source, caret).
absl::Status Check(const Expr& e, std::string_view source, const CheckOptions& options);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_CHECKER_H_
