// Test helpers for cel/ tests: compile-and-evaluate with readable failures. Not for
// production code.
// Stateless helpers; thread-safe.
#ifndef GPUPLANE_CEL_TESTING_H_
#define GPUPLANE_CEL_TESTING_H_

#include <string>

#include "cel/program.h"
#include "cel/typed_json.h"
#include "gtest/gtest.h"

namespace gpuplane::cel::testing {

// Compiles and evaluates; a compile problem becomes an error value carrying its message.
inline Value Run(const std::string& expr, const Activation& act,
                 const CompileOptions& options = {}) {
  absl::StatusOr<Program> p = Program::Compile(expr, options);
  if (!p.ok()) return Value::Error(std::string(p.status().message()));
  return p->Evaluate(act);
}

struct Case {
  const char* expr;
  const char* want;  // a CEL expression giving the expected value, or "error: <fragment>"
};

inline void ExpectCase(const Case& c, const Activation& act, const CompileOptions& options) {
  Value got = Run(c.expr, act, options);
  std::string want(c.want);
  if (want.rfind("error: ", 0) == 0) {
    ASSERT_TRUE(got.is_error()) << c.expr << " gave " << ValueToTypedJson(got).dump();
    EXPECT_NE(got.str().find(want.substr(7)), std::string::npos)
        << c.expr << ": error \"" << got.str() << "\" lacks \"" << want.substr(7) << "\"";
    return;
  }
  MapActivation empty;
  CompileOptions core;  // expectations are plain CEL literals, mixed types included
  core.kubernetes = false;
  Value expected = Run(want, empty, core);
  ASSERT_FALSE(expected.is_error()) << "bad expectation " << want << ": " << expected.str();
  ASSERT_FALSE(got.is_error()) << c.expr << ": " << got.str();
  EXPECT_TRUE(SameValue(got, expected) || (got.kind() == Kind::kQuantity && Equal(got, expected)))
      << c.expr << " gave " << ValueToTypedJson(got).dump() << ", want "
      << ValueToTypedJson(expected).dump();
}

}  // namespace gpuplane::cel::testing

#endif  // GPUPLANE_CEL_TESTING_H_
