// Selector results remembered per device. A device's attributes and capacity never change
// within one Inventory and a compiled selector is a pure function of them, so a selector
// evaluated once on a device gives the same answer every time: searches for thousands of
// claims with the same selectors evaluate each (selector, device) pair once instead of once
// per claim and node visit.
//
// Keyed by the compiled program's identity (cel::Program::identity()); the memo keeps a copy
// of each program it has seen, so an identity is never reused for another program while
// the memo lives. Errors are remembered as errors; their text is recomputed on demand (the
// rare path). Bounded: past kMaxPrograms distinct programs it starts over.
//
// Ownership: borrows the inventory, which must outlive it. Not thread-safe (one per
// Allocator, and an Allocator is used by one thread).
#ifndef GPUPLANE_ALLOC_SELECTOR_MEMO_H_
#define GPUPLANE_ALLOC_SELECTOR_MEMO_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cel/program.h"
#include "model/inventory.h"

namespace gpuplane::alloc {

class SelectorMemo {
 public:
  enum class Result : uint8_t { kUnknown = 0, kMatch, kNoMatch, kError };
  static constexpr size_t kMaxPrograms = 4096;

  explicit SelectorMemo(const model::Inventory& inventory) : inventory_(inventory) {}

  // The selector's result on `device`: kMatch, kNoMatch, or kError (an error value, or a
  // value that is not a bool). Evaluates the first time only.
  Result Evaluate(const cel::Program& program, model::DeviceId device);
  // Why the selector fails on `device` (the error value's text, or that it returned no bool).
  std::string ErrorText(const cel::Program& program, model::DeviceId device) const;

  // How many evaluations ran and how many answers came from memory (for tests and benches).
  int64_t evaluations() const { return evaluations_; }
  int64_t hits() const { return hits_; }

 private:
  struct Entry {
    cel::Program program;  // pins the identity
    std::vector<Result> results;
  };
  Entry& EntryFor(const cel::Program& program);

  const model::Inventory& inventory_;
  std::unordered_map<const void*, Entry> entries_;
  const void* last_key_ = nullptr;  // the last entry looked up (claims repeat selectors)
  Entry* last_ = nullptr;
  int64_t evaluations_ = 0;
  int64_t hits_ = 0;
};

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_SELECTOR_MEMO_H_
