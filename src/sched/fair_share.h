// Fair share of a hierarchy of queues, per resource, recomputed every cycle: guarantees first,
// then the rest by weight, each queue capped by its demand and its limit (exact
// water-filling), top down so a parent's share is split among its children; optionally the
// weights lean against time-decayed past usage (KAI's time-based fair share). Queues are
// compared across resources by dominant share (allocated / fair share, the largest over
// resources). Pure functions and a small value class; thread-compatible.
#ifndef GPUPLANE_SCHED_FAIR_SHARE_H_
#define GPUPLANE_SCHED_FAIR_SHARE_H_

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace gpuplane::sched {

inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();

// One queue for one resource.
struct ShareQueue {
  int parent = -1;  // index of the parent queue (parents come before children); -1 at the top
  double guarantee = 0;
  double limit = kUnlimited;
  double weight = 1;  // over-guarantee weight; 0 takes nothing beyond the guarantee
  double demand = 0;  // leaves: what their work asks for, running and pending; parents: ignored
  double usage = 0;   // time-decayed past usage (DecayedUsage), used when usage_k > 0
};

struct FairShareOptions {
  // How strongly past usage bends the weights: siblings' normalized weights W and normalized
  // usages U give P = max(W + k (W - U), 0) (KAI's formula). 0 ignores usage.
  double usage_k = 0;
};

// Each queue's share of `capacity`. Guarantees beyond demand are not given; when siblings'
// guarantees (capped by demand) exceed what their parent has, they are scaled down in
// proportion. What no queue can use (every one at demand or limit) stays unassigned.
// REQUIRES: parents before children; guarantee, limit, weight, demand, usage >= 0.
std::vector<double> FairShare(const std::vector<ShareQueue>& queues, double capacity,
                              const FairShareOptions& options = {});

// What each queue can use: leaves min(demand, limit); parents min(limit, children's sum).
std::vector<double> CappedDemand(const std::vector<ShareQueue>& queues);

// Splits `amount` among siblings that each first get up to `base[i]` (scaled in proportion
// when the bases exceed `amount`), then the rest by `weight` up to `cap[i]`: the exact
// water-filling level. Exposed for the property test against unit-by-unit filling.
// REQUIRES: 0 <= base[i] <= cap[i]; weights >= 0; all three the same size.
std::vector<double> WaterFill(double amount, const std::vector<double>& base,
                              const std::vector<double>& cap, const std::vector<double>& weight);

// max over resources of allocated / fair; a resource with no fair share and some allocation
// counts as infinitely over; 0 when nothing is allocated. `allocated` and `fair` are indexed
// by resource.
double DominantShare(const std::vector<double>& allocated, const std::vector<double>& fair);

// Usage that decays by half every `half_life_seconds`, integrated exactly for constant
// allocation between updates. Copyable.
class DecayedUsage {
 public:
  // REQUIRES: half_life_seconds > 0.
  DecayedUsage(int queues, double half_life_seconds);
  // `allocated[q]` held for `seconds` (>= 0) since the last call.
  void Advance(double seconds, const std::vector<double>& allocated);
  // One queue's step of Advance: `usage` after `allocated` was held for `seconds`.
  static double Decay(double usage, double allocated, double seconds, double half_life_seconds);
  // Advance by queue name, for a queue tree that may change between steps (the live
  // scheduler's): queues in `held` new to `usage` start from 0; those not in `held` held
  // nothing.
  static void AdvanceByName(std::map<std::string, double, std::less<>>& usage,
                            const std::map<std::string, double>& held, double seconds,
                            double half_life_seconds);
  const std::vector<double>& usage() const { return usage_; }

 private:
  double half_life_;
  std::vector<double> usage_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_FAIR_SHARE_H_
