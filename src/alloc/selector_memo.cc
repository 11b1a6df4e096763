#include "alloc/selector_memo.h"

#include <algorithm>

namespace gpuplane::alloc {

SelectorMemo::Entry& SelectorMemo::EntryFor(const cel::Program& program) {
  const void* key = program.identity();
  for (size_t i = 0; i < kRecent; ++i) {
    if (recent_[i].first == key) {
      std::swap(recent_[i], recent_[0]);
      return *recent_[0].second;
    }
  }
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxPrograms) {
      entries_.clear();
      recent_.fill({nullptr, nullptr});
      ++generation_;
    }
    Entry e{program,
            cel::DeviceReads(program),
            std::vector<Result>(inventory_.devices().size(), Result::kUnknown),
            {}};
    it = entries_.emplace(key, std::move(e)).first;
  }
  std::move_backward(recent_.begin(), recent_.end() - 1, recent_.end());
  recent_[0] = {key, &it->second};
  return it->second;
}

const cel::Value& SelectorMemo::DeviceValue(model::DeviceId device) {
  if (values_.empty()) {
    values_.resize(inventory_.devices().size());
    built_.assign(inventory_.devices().size(), 0);
  }
  if (built_[device] == 0) {
    const model::DeviceInfo& info = inventory_.devices()[device];
    values_[device] =
        cel::DeviceValue(inventory_.pools()[info.pool].driver, *info.spec, &value_cache_);
    built_[device] = 1;
  }
  return values_[device];
}

SelectorMemo::Result SelectorMemo::Run(const cel::Program& program, model::DeviceId device) {
  ++evaluations_;
  cel::Value v = program.Evaluate(cel::DeviceActivation(DeviceValue(device)));
  if (v.is_error() || v.kind() != cel::Kind::kBool) return Result::kError;
  return v.bool_value() ? Result::kMatch : Result::kNoMatch;
}

SelectorMemo::Result SelectorMemo::Evaluate(const cel::Program& program, model::DeviceId device) {
  return Evaluate(EntryFor(program), device);
}

SelectorMemo::Result SelectorMemo::Evaluate(Entry& e, model::DeviceId device) {
  Result& r = e.results[device];
  if (r != Result::kUnknown) {
    ++hits_;
    return r;
  }
  if (!e.reads) return r = Run(e.program, device);
  const model::DeviceInfo& info = inventory_.devices()[device];
  key_.clear();
  cel::AppendDeviceReadKey(inventory_.pools()[info.pool].driver, *info.spec, *e.reads, &key_);
  auto [it, inserted] = e.by_key.try_emplace(key_, Result::kUnknown);
  if (inserted) {
    it->second = Run(e.program, device);
  } else {
    ++shared_;
  }
  return r = it->second;
}

std::string SelectorMemo::ErrorText(const cel::Program& program, model::DeviceId device) const {
  const model::DeviceInfo& info = inventory_.devices()[device];
  cel::Value v = program.Evaluate(
      cel::DeviceActivation(cel::DeviceValue(inventory_.pools()[info.pool].driver, *info.spec)));
  return v.is_error() ? v.str() : "the selector did not return a bool";
}

}  // namespace gpuplane::alloc
