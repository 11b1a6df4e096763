// What the live scheduler counts, rendered in Prometheus' text format for /metrics:
// scheduling attempts by result, the pod scheduling latency histogram (creation to binding),
// pending pods by reason and how long the oldest has waited, gangs waiting and the oldest's wait,
// gang intents rolled forward and back, cache sync state, leadership, API errors (failed writes,
// and failed lists and watches), the cycles' count and time, and per queue the devices its work
// holds and its decayed past use (who uses what). Thread-safety: every member may be updated and
// rendered from any thread (atomics, and a mutex for the maps). Plain value owned by the scheduler.
#ifndef GPUPLANE_KUBE_SCHEDULER_METRICS_H_
#define GPUPLANE_KUBE_SCHEDULER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace gpuplane::kube {

class SchedulerMetrics {
 public:
  // Pods the last pass could not place for one reason.
  struct Pending {
    int64_t pods = 0;
    double oldest_created = 0;  // Unix seconds of the oldest one's creation; 0: unknown
  };

  // Upper bounds (seconds) of the latency histogram's buckets.
  static constexpr std::array<double, 12> kBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                                      2.5,  5,    10,  30,   60,  300};

  void Attempt(const std::string& result) { Add(attempts_, result); }
  void ApiError(const std::string& verb) { Add(api_errors_, verb); }
  void Latency(double seconds);
  // Replaces the pending-pods-by-reason gauges with the last pass's; `oldest_gang_created`
  // is the Unix time its oldest waiting gang's first member was created (0: none). Ages are
  // taken when rendered, so they keep growing while no pass runs (nothing changed).
  void SetPending(const std::map<std::string, Pending>& by_reason, int64_t gangs_waiting,
                  double oldest_gang_created);
  // A replica that stops leading runs no passes: its pass gauges (pending pods, gangs
  // waiting, queues' devices) go to 0 so that sums across replicas count the leader's alone.
  void Standby();
  // Replaces the per-queue gauges: devices each queue's work holds after the last pass, and
  // its decayed past use in device-seconds (empty without --usage-half-life).
  void SetQueues(const std::map<std::string, double>& devices,
                 const std::map<std::string, double, std::less<>>& past_use);

  std::atomic<int64_t> cycles{0};
  std::atomic<double> cycle_seconds{0};  // total
  std::atomic<int64_t> intents_forward{0}, intents_back{0};
  std::atomic<int64_t> preemptions{0}, victims{0};  // preempting pods; pods preempted
  std::atomic<bool> synced{false}, leading{false};
  std::atomic<int64_t> watch_errors{0};  // the cache's failed lists and watches, so far

  std::string Render() const;            // ages against the wall clock
  std::string Render(double now) const;  // now: Unix seconds

 private:
  void Add(std::map<std::string, int64_t>& m, const std::string& key);
  // The pass's gauges: pending pods and their ages, gangs waiting. Needs mu_ held.
  void RenderPending(std::string& out, double now) const;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> attempts_, api_errors_;          // guarded by mu_
  std::map<std::string, Pending> pending_;                        // guarded by mu_
  std::array<int64_t, kBuckets.size() + 1> latency_{};            // guarded by mu_
  double latency_sum_ = 0;                                        // guarded by mu_
  int64_t gangs_waiting_ = 0;                                     // guarded by mu_
  double oldest_gang_created_ = 0;                                // guarded by mu_
  std::map<std::string, double> queue_devices_, queue_past_use_;  // guarded by mu_
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_SCHEDULER_METRICS_H_
