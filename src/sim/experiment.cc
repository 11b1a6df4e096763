#include "sim/experiment.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

namespace gpuplane::sim {

MeanSd MeanAndSd(const std::vector<double>& xs) {
  MeanSd m;
  if (xs.empty()) return m;
  for (double x : xs) m.mean += x;
  m.mean /= static_cast<double>(xs.size());
  if (xs.size() > 1) {
    double ss = 0;
    for (double x : xs) ss += (x - m.mean) * (x - m.mean);
    m.sd = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  }
  return m;
}

absl::StatusOr<std::vector<FillRun>> RunFills(std::shared_ptr<const SimCluster> cluster,
                                              const std::vector<sched::PodDemand>& pods,
                                              const sched::Workload& workload,
                                              const std::vector<std::string>& policies,
                                              const std::vector<uint64_t>& seeds, double tune,
                                              int jobs, const Progress& progress) {
  size_t n = policies.size() * seeds.size();
  std::vector<absl::StatusOr<FillRun>> results(n, absl::UnknownError("not run"));
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mu;
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      results[i] = RunFill(cluster, pods, workload, policies[i / seeds.size()],
                           FillOptions{seeds[i % seeds.size()], tune});
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (progress) progress(done, n);
    }
  };
  int threads = std::max(1, std::min<int>(jobs, static_cast<int>(n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  std::vector<FillRun> out;
  for (absl::StatusOr<FillRun>& r : results) {
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return out;
}

std::vector<PolicySummary> Summarize(const std::vector<FillRun>& runs, int64_t total_milli) {
  std::vector<PolicySummary> out;
  for (const FillRun& r : runs) {
    if (out.empty() || out.back().policy != r.policy) out.push_back({r.policy, {}, {}, {}, {}});
  }
  for (PolicySummary& s : out) {
    std::vector<double> alloc, unalloc, failed, bound;
    for (const FillRun& r : runs) {
      if (r.policy != s.policy) continue;
      double a = r.AllocAt(100);
      alloc.push_back(a);
      unalloc.push_back((100 - a) / 100 * static_cast<double>(total_milli) / 1000);
      failed.push_back(static_cast<double>(r.failed_pods));
      bound.push_back(r.packing_bound_at_100);
    }
    s.alloc_ratio_at_100 = MeanAndSd(alloc);
    s.unallocated_gpus_at_100 = MeanAndSd(unalloc);
    s.failed_pods = MeanAndSd(failed);
    s.packing_bound_at_100 = MeanAndSd(bound);
  }
  return out;
}

}  // namespace gpuplane::sim
