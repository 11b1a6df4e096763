#include "sim/fill.h"

#include <cmath>
#include <map>

#include "sched/packing_lp.h"
#include "sched/policy.h"
#include "sched/rng.h"
#include "sim/events.h"

namespace gpuplane::sim {
namespace {

// The most any placement could have allocated, in percent of `total` milli-GPU, once the
// submissions of `order` up to x = 100 have arrived: the packing program over their GPU
// requests (a k-GPU pod as k whole GPUs; CPU, memory, models and node boundaries ignored,
// which only raises it). alloc_ratio[100] averages allocations within that prefix, so it
// cannot exceed this.
double PackingBoundAt100(const std::vector<sched::PodDemand>& order, double total) {
  std::map<int, double> count_by_milli;
  double arrived = 0;
  for (const sched::PodDemand& pod : order) {
    arrived += static_cast<double>(pod.gpu_request());
    if (std::lround(arrived * 100 / total) > 100) break;
    if (pod.num_gpu == 1) count_by_milli[pod.gpu_milli] += 1;
    if (pod.num_gpu > 1) count_by_milli[sched::kMilli] += pod.num_gpu;
  }
  // Sizes grouped 10 milli wide: the bound stays valid and the program small.
  const sched::GroupedItems grouped = sched::GroupBySize(count_by_milli, 10);
  return sched::SolvePackingLp(grouped.items, total / sched::kMilli).bound_milli * 100 / total;
}

// 1-3: the trace shuffled, then inflated (or trimmed) to `target` milli-GPU by resampling it.
std::vector<sched::PodDemand> Submissions(const std::vector<sched::PodDemand>& pods, double target,
                                          sched::Rng& rng) {
  std::vector<sched::PodDemand> order = pods;
  rng.Shuffle(order);
  double requested = 0;
  for (const sched::PodDemand& p : order) requested += static_cast<double>(p.gpu_request());
  bool any_gpu = requested > 0;
  while (any_gpu && requested < target) {
    const sched::PodDemand& p = pods[rng.Below(pods.size())];
    order.push_back(p);
    requested += static_cast<double>(p.gpu_request());
  }
  while (requested > target && !order.empty()) {
    size_t i = rng.Below(order.size());
    requested -= static_cast<double>(order[i].gpu_request());
    order.erase(order.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return order;
}

// The curves at x = 0..kMaxArrived: the mean at each x, carried forward where no pod landed.
void Curves(const std::vector<double>& alloc_sum, const std::vector<double>& frag_ratio_sum,
            const std::vector<int64_t>& count, FillRun& run) {
  double last_alloc = 0, last_frag = 0;
  for (int x = 0; x <= kMaxArrived; ++x) {
    if (count[x] > 0) {
      last_alloc = alloc_sum[x] / static_cast<double>(count[x]);
      last_frag = frag_ratio_sum[x] / static_cast<double>(count[x]);
    }
    run.alloc_ratio.push_back(last_alloc);
    run.frag_ratio.push_back(last_frag);
  }
}

}  // namespace

absl::StatusOr<FillRun> RunFill(std::shared_ptr<const SimCluster> cluster,
                                const std::vector<sched::PodDemand>& pods,
                                const sched::Workload& workload, const std::string& policy_name,
                                const FillOptions& options) {
  absl::StatusOr<std::unique_ptr<sched::Policy>> policy = sched::MakePolicy(policy_name, workload);
  if (!policy.ok()) return policy.status();
  sched::Rng rng(options.seed);
  absl::StatusOr<std::unique_ptr<SimState>> made =
      SimState::Make(std::move(cluster), std::move(*policy), rng);
  if (!made.ok()) return made.status();
  SimState& sim = **made;
  sched::ClusterView& view = sim.view();
  const double total = static_cast<double>(view.total_milli);
  FillRun run;
  run.policy = policy_name;
  run.seed = options.seed;
  if (view.total_milli == 0 || pods.empty()) {
    return absl::InvalidArgumentError("fill mode needs GPU nodes and at least one pod");
  }

  const std::vector<sched::PodDemand> order = Submissions(pods, options.tune * total, rng);
  // 4: node priority for ties.
  std::vector<uint32_t> node_order = view.priority;
  rng.Shuffle(node_order);
  view.SetPriority(std::move(node_order));

  // Fragmentation per node, kept current.
  std::vector<double> frag(view.nodes.size(), 0);
  double frag_sum = 0;
  auto refresh = [&](uint32_t n) {
    const sched::NodeView& node = view.nodes[n];
    double f =
        node.gpus() == 0 ? 0 : workload.NodeFragmentation(node.model, node.cpu_free, node.gpu_free);
    frag_sum += f - frag[n];
    frag[n] = f;
  };
  for (uint32_t n = 0; n < view.nodes.size(); ++n) refresh(n);

  // The event loop with submissions as arrivals (pod k at time k), nothing leaving, and every
  // submission tried at once: a pod that fits nowhere waits forever, that is, fails.
  std::vector<double> alloc_sum(kMaxArrived + 1, 0), frag_ratio_sum(kMaxArrived + 1, 0);
  std::vector<int64_t> count(kMaxArrived + 1, 0);
  double arrived = 0;
  auto submit = [&](size_t k) {
    const sched::PodDemand& pod = order[k];
    arrived += static_cast<double>(pod.gpu_request());
    SimState::Placed placed = sim.Place(k, pod);
    if (placed.outcome == SimState::Outcome::kRefused) ++run.disagreements;
    if (placed.outcome == SimState::Outcome::kPlaced) refresh(placed.node);
    const long x = std::lround(arrived * 100 / total);
    if (x <= kMaxArrived) {
      const double allocated = static_cast<double>(sim.allocated_milli());
      const double idle = total - allocated;
      alloc_sum[x] += allocated * 100 / total;
      frag_ratio_sum[x] += idle > 0 ? frag_sum * 100 / idle : 0;
      ++count[x];
    }
    return placed.outcome == SimState::Outcome::kPlaced;
  };
  JobEnds none;
  FifoQueue failed;
  RunEvents(
      order.size(), [](size_t k) { return static_cast<double>(k); }, none, Arrivals::kTryFirst,
      failed, [](double) {}, submit, [](size_t) { return false; });
  run.submitted = static_cast<int64_t>(order.size());
  run.failed_pods = static_cast<int64_t>(failed.size());
  run.disagreements += sim.disagreements();
  run.packing_bound_at_100 = PackingBoundAt100(order, total);
  Curves(alloc_sum, frag_ratio_sum, count, run);
  return run;
}

}  // namespace gpuplane::sim
