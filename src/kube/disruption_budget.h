// PodDisruptionBudgets as the live scheduler's preemption reads them (policy/v1, from the
// cluster cache's JSON): the pods a budget selects in its namespace, and how many of them may
// be disrupted now. A victim a budget covers is evicted through the Eviction API (which
// refuses when the budget allows no disruption) instead of deleted.
//
// Plain values and pure functions; thread-safe.
#ifndef GPUPLANE_KUBE_DISRUPTION_BUDGET_H_
#define GPUPLANE_KUBE_DISRUPTION_BUDGET_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace gpuplane::sched {
struct PodInfo;
}  // namespace gpuplane::sched

namespace gpuplane::kube {

struct DisruptionBudget {
  std::string ns;
  nlohmann::json selector;  // null: selects nothing
  int64_t allowed = 0;      // status.disruptionsAllowed; 0 until its controller says
};

// The budgets among PodDisruptionBudget objects as the API serves them. A field of the wrong
// type reads as absent (the API server has validated them).
std::vector<DisruptionBudget> Budgets(const std::vector<nlohmann::json>& pdbs);

// A label selector (matchLabels, matchExpressions with In, NotIn, Exists, DoesNotExist)
// against a pod's labels. Not an object, or an unknown operator: selects nothing.
bool Selects(const nlohmann::json& selector, const std::map<std::string, std::string>& labels);

// Whether `b` covers a pod of namespace `ns` with these labels.
bool Covers(const DisruptionBudget& b, const std::string& ns,
            const std::map<std::string, std::string>& labels);
bool Covers(const DisruptionBudget& b, const sched::PodInfo& p);

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_DISRUPTION_BUDGET_H_
