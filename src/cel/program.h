// Compiled CEL programs: compile once (parse, macro expansion, reference checks), evaluate
// many times against variable bindings. A Program is immutable and may be evaluated from
// several threads at once; each evaluation keeps its own state.
#ifndef GPUPLANE_CEL_PROGRAM_H_
#define GPUPLANE_CEL_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cel/ast.h"
#include "cel/value.h"

namespace gpuplane::cel {

// Variable bindings for one evaluation.
class Activation {
 public:
  virtual ~Activation() = default;
  // nullptr when the name is not bound.
  virtual const Value* Find(std::string_view name) const = 0;
};

class MapActivation : public Activation {
 public:
  void Bind(std::string name, Value v) { vars_.emplace_back(std::move(name), std::move(v)); }
  const Value* Find(std::string_view name) const override;

 private:
  std::vector<std::pair<std::string, Value>> vars_;
};

struct CompileOptions {
  // Variables an expression may reference; any other identifier is a compile error
  // ("undeclared reference"), as are calls to unknown functions.
  std::vector<std::string> variables;
  // Type-check calls: an overload that can never match is a compile error.
  bool check_references = true;
  // `device` has the DRA selector structure (driver, attributes, capacity,
  // allowMultipleAllocations), so misuse of its fields is caught at compile time.
  bool dra_device = false;
  // Kubernetes' checks beyond core CEL (see CheckOptions::kubernetes); false for core CEL.
  bool kubernetes = true;
};

inline constexpr int64_t kDefaultCostLimit = 1'000'000;

class Program {
 public:
  // Returns the syntax or reference problems as the status message (line:column, source
  // line and caret).
  static absl::StatusOr<Program> Compile(std::string_view source, const CompileOptions& options);

  // Evaluates; problems are error values (Kind::kError), never exceptions. `cost` (optional)
  // receives the evaluation cost; exceeding `cost_limit` stops evaluation with an error.
  Value Evaluate(const Activation& activation, int64_t cost_limit = kDefaultCostLimit,
                 int64_t* cost = nullptr) const;

  const std::string& source() const { return *source_; }
  // Equal for copies of one compiled Program (they share the AST), different for Programs
  // compiled separately even from the same text; stable while any copy lives.
  const void* identity() const { return ast_.get(); }
  // The planned syntax tree (for static analyses such as DeviceReads).
  const Expr& expr() const { return *ast_; }

 private:
  Program(std::shared_ptr<const Expr> ast, std::shared_ptr<const std::string> source)
      : ast_(std::move(ast)), source_(std::move(source)) {}
  // shared_ptr: copies of a Program share the immutable AST and source.
  std::shared_ptr<const Expr> ast_;
  std::shared_ptr<const std::string> source_;
};

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_PROGRAM_H_
