#include "alloc/allocator.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "alloc/search.h"
#include "util/strings.h"

namespace gpuplane::alloc {

void SearchCache::Trim() {
  if (candidate_devices <= kMaxCandidateDevices) return;
  candidates.clear();
  filter_keys.clear();
  filter_key_at.clear();
  candidate_devices = 0;
}

uint32_t SearchCache::FilterKeyId(const std::shared_ptr<const std::string>& key) {
  auto at = filter_key_at.find(key.get());
  if (at != filter_key_at.end()) return at->second.second;
  auto [it, added] = filter_keys.try_emplace(*key, static_cast<uint32_t>(filter_keys.size()));
  filter_key_at.emplace(key.get(), std::make_pair(key, it->second));
  return it->second;
}

Allocator::Allocator(const model::Inventory& inventory, AllocatorOptions options)
    : inventory_(inventory),
      options_(options),
      cache_(std::make_unique<SearchCache>()),
      scratch_(std::make_unique<SearchScratch>()),
      memo_(inventory, options.memo) {
  if (options_.scorer == nullptr) default_scorer_ = std::make_unique<DefaultScorer>(inventory);
}

Allocator::~Allocator() = default;
Allocator::Allocator(Allocator&&) noexcept = default;

Outcome Allocator::Allocate(const std::vector<const CompiledClaim*>& claims, model::NodeId node,
                            const model::AllocationState& state, const DeviceFilter* filter) const {
  if (node >= inventory_.nodes().size()) {
    Outcome out;
    out.reasons.push_back(util::Cat("node id ", node, " is not in the inventory"));
    return out;
  }
  cache_->Trim();
  return Search(inventory_, state, claims, node, options_,
                options_.scorer != nullptr ? *options_.scorer : *default_scorer_, filter,
                cache_.get(), *memo_, scratch_->Clear())
      .Run();
}

absl::Status Allocator::Commit(const Outcome& outcome,
                               const std::vector<const CompiledClaim*>& claims,
                               model::AllocationState& state) const {
  for (const Choice& ch : outcome.choices) {
    const Alternative& alt = claims[ch.claim]->requests[ch.request].alternatives[ch.alternative];
    if (alt.admin_access) continue;
    absl::Status s = state.Allocate(inventory_, ch.device, ch.consumed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Allocator::Release(const std::vector<Choice>& choices,
                                model::AllocationState& state) const {
  for (const Choice& ch : choices) {
    if (ch.admin_access) continue;
    absl::Status s = state.Release(inventory_, ch.device, ch.consumed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gpuplane::alloc
