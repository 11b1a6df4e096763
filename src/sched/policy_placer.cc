#include "sched/policy_placer.h"

#include "util/strings.h"

namespace gpuplane::sched {

PolicyPlacer::PolicyPlacer(std::unique_ptr<Policy> policy, ClusterView view,
                           const std::vector<PodDemand>& demands, Rng& rng)
    : policy_(std::move(policy)), view_(std::move(view)), demands_(demands), rng_(rng) {}

absl::StatusOr<std::unique_ptr<PolicyPlacer>> PolicyPlacer::Make(
    std::unique_ptr<Policy> policy, ClusterView view, const Snapshot& snapshot,
    const std::vector<PodDemand>& demands, Rng& rng) {
  std::unique_ptr<PolicyPlacer> p(
      new PolicyPlacer(std::move(policy), std::move(view), demands, rng));
  const model::Inventory& inv = snapshot.inventory();
  p->view_node_.assign(inv.nodes().size(), UINT32_MAX);
  p->device_gpu_.assign(inv.devices().size(), {UINT32_MAX, -1});
  p->gpu_capacity_.assign(inv.devices().size(), -1);
  const std::optional<model::CapacityId> gpu = inv.FindCapacity("gpu");
  for (uint32_t n = 0; n < p->view_.nodes.size(); ++n) {
    const NodeView& nv = p->view_.nodes[n];
    std::optional<model::NodeId> id = inv.FindNode(nv.name);
    if (!id) return absl::InternalError(util::Cat("node ", nv.name, " is not in the snapshot"));
    p->inventory_node_.push_back(*id);
    p->view_node_[*id] = n;
    for (int g = 0; g < nv.gpus(); ++g) {
      model::DeviceId d = nv.gpu_devices[g];
      if (d >= inv.devices().size() || inv.devices()[d].node != *id) {
        return absl::InternalError(
            util::Cat("GPU ", g, " of node ", nv.name, " is not the snapshot's device"));
      }
      p->device_gpu_[d] = {n, g};
      std::optional<uint32_t> index = gpu ? inv.CapacityIndex(d, *gpu) : std::nullopt;
      if (index && inv.devices()[d].shareable) p->gpu_capacity_[d] = static_cast<int32_t>(*index);
    }
  }
  return p;
}

std::optional<Pick> PolicyPlacer::Choose(const Snapshot& /*s*/, const PodInfo& pod) {
  std::optional<Placement> where = policy_->Place(view_, demands_[pod.input], rng_);
  chose_ = where.has_value();
  if (!where) return std::nullopt;
  Pick pick{inventory_node_[where->node], {}};
  for (int g : where->gpus) pick.devices.push_back(view_.nodes[where->node].gpu_devices[g]);
  picked_ = std::move(where->gpus);
  return pick;
}

void PolicyPlacer::Reserve(const PodInfo& pod, model::NodeId node,
                           const std::vector<alloc::Choice>& choices) {
  bool as_chosen = picked_.empty() || choices.size() == picked_.size();
  for (size_t i = 0; i < choices.size() && as_chosen && !picked_.empty(); ++i) {
    as_chosen = device_gpu_[choices[i].device].second == picked_[i];
  }
  if (!as_chosen) ++disagreements_;
  Apply(demands_[pod.input], view_node_[node], choices, +1);
}

void PolicyPlacer::Unreserve(const PodInfo& pod, model::NodeId node,
                             const std::vector<alloc::Choice>& choices) {
  Apply(demands_[pod.input], view_node_[node], choices, -1);
}

void PolicyPlacer::Apply(const PodDemand& pod, uint32_t node,
                         const std::vector<alloc::Choice>& choices, int sign) {
  NodeView& nv = view_.nodes[node];
  for (const alloc::Choice& ch : choices) {
    const int32_t gpu = gpu_capacity_[ch.device];
    const size_t index = static_cast<size_t>(gpu);
    int64_t milli = gpu < 0 || index >= ch.consumed.size() ? 0 : ch.consumed[index].MilliValue();
    nv.gpu_free[device_gpu_[ch.device].second] -= sign * static_cast<int>(milli);
    allocated_milli_ += sign * milli;
  }
  if (pod.num_gpu > 0) nv.tags[TagOf(pod)] += sign;
  nv.cpu_free -= sign * pod.cpu_milli;
  nv.memory_free -= sign * pod.memory_mib;
  nv.Refresh();
  ++nv.version;
}

}  // namespace gpuplane::sched
