#include "alloc/selector_memo.h"

#include "cel/device_env.h"

namespace gpuplane::alloc {

SelectorMemo::Entry& SelectorMemo::EntryFor(const cel::Program& program) {
  const void* key = program.identity();
  if (key == last_key_ && last_ != nullptr) return *last_;
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxPrograms) entries_.clear();
    it = entries_
             .emplace(key, Entry{program, std::vector<Result>(inventory_.devices().size(),
                                                              Result::kUnknown)})
             .first;
  }
  last_key_ = key;
  last_ = &it->second;
  return it->second;
}

SelectorMemo::Result SelectorMemo::Evaluate(const cel::Program& program, model::DeviceId device) {
  Entry& e = EntryFor(program);
  Result& r = e.results[device];
  if (r != Result::kUnknown) {
    ++hits_;
    return r;
  }
  ++evaluations_;
  cel::Value v = program.Evaluate(cel::DeviceActivation(inventory_.devices()[device].cel_value));
  if (v.is_error() || v.kind() != cel::Kind::kBool) {
    r = Result::kError;
  } else {
    r = v.bool_value() ? Result::kMatch : Result::kNoMatch;
  }
  return r;
}

std::string SelectorMemo::ErrorText(const cel::Program& program, model::DeviceId device) const {
  cel::Value v = program.Evaluate(cel::DeviceActivation(inventory_.devices()[device].cel_value));
  return v.is_error() ? v.str() : "the selector did not return a bool";
}

}  // namespace gpuplane::alloc
