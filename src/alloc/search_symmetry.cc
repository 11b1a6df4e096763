#include "alloc/search.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuplane::alloc {

// FilterCode is defined `inline` and called only from this file (see search.cc).

using model::DeviceId;

bool Search::Alike(DeviceId x, DeviceId y) {
  if (!Symmetric(x) || !Symmetric(y) || state_.in_use(x) != state_.in_use(y) ||
      StaticId(x) != StaticId(y)) {
    return false;
  }
  for (const Slot& slot : slots_) {
    const std::vector<Alternative>& alts = Alts(slot);
    for (size_t a = 0; a < alts.size(); ++a) {
      const size_t index = slot.first_alternative + a;
      if (FilterCode(index, alts[a], x) != FilterCode(index, alts[a], y)) return false;
    }
  }
  for (const CompiledClaim* c : claims_) {
    for (const CompiledConstraint& k : c->constraints) {
      const api::DeviceAttribute* vx = inv_.Attribute(x, k.attribute);
      const api::DeviceAttribute* vy = inv_.Attribute(y, k.attribute);
      if ((vx == nullptr) != (vy == nullptr)) return false;
      if (vx != nullptr && model::AttributeKey(*vx) != model::AttributeKey(*vy)) return false;
    }
  }
  return true;
}

int32_t Search::ClassOf(DeviceId d) {
  if (!classes_ready_) ComputeClasses();
  const std::vector<DeviceId>& devs = inv_.nodes()[node_].devices;
  size_t pos = std::lower_bound(devs.begin(), devs.end(), d) - devs.begin();
  return class_[pos];
}

void Search::ComputeClasses() {
  classes_ready_ = true;
  const std::vector<DeviceId>& devs = inv_.nodes()[node_].devices;
  std::vector<const std::string*> attrs;  // read by constraints (StaticId has the scorer's)
  for (const CompiledClaim* c : claims_) {
    for (const CompiledConstraint& k : c->constraints) attrs.push_back(&k.attribute);
  }
  // Per device a row of small integers: in use, its static id, how each alternative's static
  // filters treat it (FilterCode), the constraint attributes' values (interned); equal rows,
  // one class.
  size_t alternatives = 0;
  for (const Slot& slot : slots_) alternatives += Alts(slot).size();
  const size_t width = 2 + alternatives + attrs.size();
  std::vector<int32_t> rows(devs.size() * width, -1);
  std::vector<size_t> eligible;
  eligible.reserve(devs.size());
  for (size_t pos = 0; pos < devs.size(); ++pos) {
    DeviceId d = devs[pos];
    if (Shareable(d) || !inv_.devices()[d].consumes.empty()) continue;
    eligible.push_back(pos);
    rows[pos * width] = state_.in_use(d) ? 1 : 0;
    rows[pos * width + 1] = StaticId(d);
  }
  size_t column = 2;
  for (const Slot& slot : slots_) {
    const std::vector<Alternative>& alts = Alts(slot);
    for (size_t a = 0; a < alts.size(); ++a, ++column) {
      FilterColumn(slot.first_alternative + a, alts[a], eligible, rows, width, column);
    }
  }
  std::unordered_map<std::string, int32_t> values;
  for (size_t i = 0; i < attrs.size(); ++i, ++column) {
    for (size_t pos : eligible) {
      const api::DeviceAttribute* v = inv_.Attribute(devs[pos], *attrs[i]);
      rows[pos * width + column] =
          v == nullptr
              ? -1
              : values.emplace(model::AttributeKey(*v), static_cast<int32_t>(values.size()))
                    .first->second;
    }
  }
  GroupRows(rows, width, eligible);
}

void Search::GroupRows(const std::vector<int32_t>& rows, size_t width,
                       const std::vector<size_t>& eligible) {
  auto row = [&](size_t pos) { return rows.begin() + static_cast<std::ptrdiff_t>(pos * width); };
  std::vector<std::pair<uint64_t, size_t>> keyed;
  keyed.reserve(eligible.size());
  for (size_t pos : eligible) {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a over the row's integers
    for (auto it = row(pos); it != row(pos) + static_cast<std::ptrdiff_t>(width); ++it) {
      h = (h ^ static_cast<uint32_t>(*it)) * 1099511628211ULL;
    }
    keyed.emplace_back(h, pos);
  }
  std::sort(keyed.begin(), keyed.end());
  class_.assign(inv_.nodes()[node_].devices.size(), -1);
  int32_t next = 0;
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i + 1;
    while (j < keyed.size() && keyed[j].first == keyed[i].first &&
           std::equal(row(keyed[i].second),
                      row(keyed[i].second) + static_cast<std::ptrdiff_t>(width),
                      row(keyed[j].second))) {
      ++j;
    }
    if (j - i >= 2) {
      for (size_t k = i; k < j; ++k) class_[keyed[k].second] = next;
      ++next;
    }
    i = j;
  }
}

int32_t Search::StaticId(DeviceId d) const {
  const std::vector<int32_t>& ids = cache_->static_ids;
  return !ids.empty() && ids[d] >= 0 ? ids[d] : ComputeStaticId(d);
}

int32_t Search::ComputeStaticId(DeviceId d) const {
  SearchCache& keys = *cache_;
  if (keys.static_ids.empty()) keys.static_ids.assign(inv_.devices().size(), -1);
  // Raw bytes: a fixed-size part (the capacities' count, each capacity's interned name and
  // value (its nano amount), each scorer attribute's value id or its value's length), then
  // the values of attributes the scorer has no ids for.
  const std::vector<model::DeviceCapacityInfo>& caps = inv_.devices()[d].capacity;
  const std::vector<std::string>& attrs = scorer_.attributes();
  std::string key(sizeof(uint32_t) +
                      caps.size() * (sizeof(model::CapacityId) + sizeof(api::Int128)) +
                      attrs.size() * (1 + sizeof(uint32_t)),
                  '\0');
  char* out = key.data();
  auto put = [&out](const auto& v) {
    std::memcpy(out, &v, sizeof v);
    out += sizeof v;
  };
  put(static_cast<uint32_t>(caps.size()));
  for (const model::DeviceCapacityInfo& cap : caps) {
    put(cap.id);
    put(cap.spec->value.nano());
  }
  std::string values;
  for (size_t k = 0; k < attrs.size(); ++k) {
    if (const std::vector<int32_t>* ids = scorer_.ValueIds(k)) {
      *out++ = '#';
      put((*ids)[d]);
      continue;
    }
    const api::DeviceAttribute* v = inv_.Attribute(d, attrs[k]);
    const std::string value = v == nullptr ? "-" : model::AttributeKey(*v);
    *out++ = '|';
    put(static_cast<uint32_t>(value.size()));
    values += value;
  }
  key += values;
  auto it = keys.interned.find(key);
  if (it == keys.interned.end()) {
    it = keys.interned.emplace(std::move(key), static_cast<int32_t>(keys.interned.size())).first;
  }
  keys.static_ids[d] = it->second;
  return it->second;
}

inline char Search::FilterCode(size_t index, const Alternative& alt, DeviceId d) const {
  const std::vector<DeviceId>* known = candidates_[index];
  if (known == nullptr) return StaticCode(alt, d);
  return std::find(known->begin(), known->end(), d) != known->end() ? 'y' : 'n';
}

void Search::FilterColumn(size_t index, const Alternative& alt, const std::vector<size_t>& eligible,
                          std::vector<int32_t>& rows, size_t width, size_t column) const {
  const std::vector<DeviceId>& devs = inv_.nodes()[node_].devices;
  const std::vector<DeviceId>* known = candidates_[index];
  for (size_t pos : eligible) {
    rows[pos * width + column] =
        static_cast<unsigned char>(known == nullptr ? StaticCode(alt, devs[pos]) : 'n');
  }
  if (known == nullptr) return;
  for (DeviceId d : *known) {
    const size_t pos = std::lower_bound(devs.begin(), devs.end(), d) - devs.begin();
    if (rows[pos * width] >= 0) rows[pos * width + column] = static_cast<unsigned char>('y');
  }
}

char Search::StaticCode(const Alternative& alt, DeviceId d) const {
  const model::DeviceInfo& info = inv_.devices()[d];
  for (const Selector& s : alt.selectors) {
    const SelectorMemo::Result r = memo_.Evaluate(s.program, d);
    if (r == SelectorMemo::Result::kError) return 'e';
    if (r == SelectorMemo::Result::kNoMatch) return 'n';
  }
  for (const api::Taint& t : info.spec->taints) {
    if (!Tolerates(alt.tolerations, t)) return 'n';
  }
  return 'y';
}

}  // namespace gpuplane::alloc
