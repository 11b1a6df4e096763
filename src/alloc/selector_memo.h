// Selector results remembered per device. A device's attributes and capacity never change
// within one Inventory and a compiled selector is a pure function of them, so a selector
// evaluated once on a device gives the same answer every time: searches for thousands of
// claims with the same selectors evaluate each (selector, device) pair once instead of once
// per claim and node visit.
//
// Devices alike for a selector share one evaluation: when the selector reads `device` only
// through constant paths (cel::DeviceReads), the values those paths see form a key, and a
// device whose key was evaluated before takes that result without building its CEL value
// (8 H100s of a node differ in index and UUID, which a product or memory selector never reads).
// The `device` values the remaining evaluations need are built on first use and kept.
//
// Keyed by the compiled program's identity (cel::Program::identity()); the memo keeps a copy
// of each program it has seen, so an identity is never reused for another program while
// the memo lives. Errors are remembered as errors; their text is recomputed on demand (the
// rare path). Bounded: past kMaxPrograms distinct programs it starts over.
//
// Ownership: borrows the inventory, which must outlive it. Not thread-safe: one memo may be
// shared by Allocators and a NodeIndex over the same inventory (AllocatorOptions::memo), all
// used from one thread.
#ifndef GPUPLANE_ALLOC_SELECTOR_MEMO_H_
#define GPUPLANE_ALLOC_SELECTOR_MEMO_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cel/device_env.h"
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

  // The same through a program's entry, looked up once for many devices. An entry stays valid
  // until the memo starts over (past kMaxPrograms, when it adds a program): generation() then
  // changes.
  struct Entry;
  Entry& EntryFor(const cel::Program& program);
  Result Evaluate(Entry& entry, model::DeviceId device);
  uint64_t generation() const { return generation_; }
  // Why the selector fails on `device` (the error value's text, or that it returned no bool).
  std::string ErrorText(const cel::Program& program, model::DeviceId device) const;

  // How many CEL evaluations ran, how many answers came from a device's own earlier answer
  // (hits) and how many from a device alike for the selector (shared); for tests and benches.
  int64_t evaluations() const { return evaluations_; }
  int64_t hits() const { return hits_; }
  int64_t shared() const { return shared_; }

  struct Entry {
    cel::Program program;                               // pins the identity
    std::optional<std::vector<cel::DeviceRead>> reads;  // nullopt: every device evaluated
    std::vector<Result> results;
    std::unordered_map<std::string, Result> by_key;  // with reads: result per device read key
  };

 private:
  Result Run(const cel::Program& program, model::DeviceId device);
  const cel::Value& DeviceValue(model::DeviceId device);

  const model::Inventory& inventory_;
  std::unordered_map<const void*, Entry> entries_;
  // The entries looked up last, most recent first (claims repeat selectors, and a class
  // selector alternates with a request's own).
  static constexpr size_t kRecent = 4;
  std::array<std::pair<const void*, Entry*>, kRecent> recent_{};
  uint64_t generation_ = 0;         // how many times the memo started over
  std::vector<cel::Value> values_;  // per device, built on first use (`built_`)
  std::vector<uint8_t> built_;
  cel::DeviceValueCache value_cache_;  // equal names and values shared between devices
  std::string key_;                    // scratch for read keys
  int64_t evaluations_ = 0;
  int64_t hits_ = 0;
  int64_t shared_ = 0;
};

// A memo given to share (borrowed), else one of its own: what an Allocator or a NodeIndex
// holds. Moving it keeps the memo where it is.
class MemoRef {
 public:
  MemoRef(const model::Inventory& inventory, SelectorMemo* shared)
      : own_(shared == nullptr ? std::make_unique<SelectorMemo>(inventory) : nullptr),
        memo_(shared != nullptr ? shared : own_.get()) {}
  SelectorMemo& operator*() const { return *memo_; }

 private:
  std::unique_ptr<SelectorMemo> own_;
  SelectorMemo* memo_;
};

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_SELECTOR_MEMO_H_
