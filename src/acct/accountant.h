// Incremental attribution for the agent: each sampling pass closes a window (from the previous
// pass to this one) that is attributed on its own and added to running totals. Windows use the
// previous pass as their starting point, so the sum over windows equals attributing the whole
// recording at once (same step integrals, same sample periods); costs conserve per window.
// An Accountant owns its running totals and the last pass it saw; the passes it is given are
// borrowed for the call. Not thread-safe: the agent calls it under its state mutex.
#ifndef GPUPLANE_ACCT_ACCOUNTANT_H_
#define GPUPLANE_ACCT_ACCOUNTANT_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "acct/attribution.h"
#include "acct/recording.h"

namespace gpuplane::acct {

class Accountant {
 public:
  Accountant(PidResolver resolve, Prices prices)
      : resolve_(std::move(resolve)), prices_(std::move(prices)) {}

  void SetOwnership(Ownership ownership) { ownership_ = std::move(ownership); }
  const Ownership& ownership() const { return ownership_; }

  // Adds one pass (every record stamped with the same time, later than the previous pass).
  // Returns the window it closes; nothing for the first pass, which only starts the window.
  // New isolation findings (first seen for their pid and device) go to `new_findings`.
  std::optional<Attribution> Add(const Recording& pass,
                                 std::vector<AuditFinding>* new_findings = nullptr);

  // Forgets the open window (after a gap, such as a restart): the next pass starts a new one.
  void Reset() { have_anchor_ = false; }

  // Running totals: per container and device, per device, every finding so far.
  Attribution Totals() const;
  // Adds totals carried over (from the ledger, after a restart).
  void AddTotals(const Attribution& totals);
  double last_t() const { return anchor_.last_t; }
  bool started() const { return have_anchor_; }

 private:
  void Accumulate(const Attribution& window);

  PidResolver resolve_;
  Prices prices_;
  Ownership ownership_;
  Recording anchor_;  // the previous pass (process utilization: its latest samples only)
  bool have_anchor_ = false;
  std::map<std::tuple<ContainerRef, std::string, std::string>, PodUsage> pods_;
  std::map<std::string, DeviceUsage> devices_;
  std::vector<AuditFinding> audit_;
  std::map<std::pair<int64_t, std::string>, size_t> audited_;  // (pid, device) -> audit_ index
  std::map<std::pair<ContainerRef, std::string>, UnallocatedUse> unallocated_;
  double seconds_ = 0;
};

// Adds `window` into `into` (counters add, maxima take the larger); both keyed as Attribution
// lists them. Used to sum windows and to merge ledger totals.
void AddUsage(PodUsage& into, const PodUsage& window);
void AddUsage(DeviceUsage& into, const DeviceUsage& window);
void AddUsage(UnallocatedUse& into, const UnallocatedUse& window);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_ACCOUNTANT_H_
