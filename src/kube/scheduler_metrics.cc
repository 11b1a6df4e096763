#include "kube/scheduler_metrics.h"

#include <algorithm>
#include <utility>

#include "util/clock.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

std::string Escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
  util::Append(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

void SchedulerMetrics::Add(std::map<std::string, int64_t>& m, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  ++m[key];
}

void SchedulerMetrics::Latency(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < kBuckets.size() && seconds > kBuckets[i]) ++i;
  ++latency_[i];
  latency_sum_ += seconds;
}

void SchedulerMetrics::SetPending(const std::map<std::string, Pending>& by_reason,
                                  int64_t gangs_waiting, double oldest_gang_created) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [reason, p] : pending_) p = Pending{};  // reasons seen before stay, at 0
  for (const auto& [reason, p] : by_reason) pending_[reason] = p;
  gangs_waiting_ = gangs_waiting;
  oldest_gang_created_ = oldest_gang_created;
}

void SchedulerMetrics::Standby() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [reason, p] : pending_) p = Pending{};
  gangs_waiting_ = 0;
  oldest_gang_created_ = 0;
  for (auto& [queue, n] : queue_devices_) n = 0;
}

void SchedulerMetrics::SetQueues(const std::map<std::string, double>& devices,
                                 const std::map<std::string, double, std::less<>>& past_use) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_devices_ = devices;
  queue_past_use_.clear();
  for (const auto& [queue, seconds] : past_use) queue_past_use_[queue] = seconds;
}

std::string SchedulerMetrics::Render() const { return Render(util::WallClock().Now()); }

void SchedulerMetrics::RenderPending(std::string& out, double now) const {
  // Seconds since `created`, 0 when unknown (and never below 0 when clocks disagree).
  auto age = [now](double created) { return created > 0 ? std::max(0.0, now - created) : 0.0; };
  Family(out, "gpuplane_scheduler_pending_pods", "gauge",
         "Pods this scheduler could not place in its last pass, by reason.");
  for (const auto& [reason, p] : pending_) {
    util::Append(out, "gpuplane_scheduler_pending_pods{reason=\"", Escaped(reason), "\"} ", p.pods,
                 "\n");
  }
  Family(out, "gpuplane_scheduler_pending_oldest_seconds", "gauge",
         "Time since the creation of the oldest pod of each pending reason (0: none pending).");
  for (const auto& [reason, p] : pending_) {
    util::Append(out, "gpuplane_scheduler_pending_oldest_seconds{reason=\"", Escaped(reason),
                 "\"} ", age(p.oldest_created), "\n");
  }
  Family(out, "gpuplane_scheduler_gangs_waiting", "gauge",
         "Gangs with no member bound that the last pass could not place whole.");
  util::Append(out, "gpuplane_scheduler_gangs_waiting ", gangs_waiting_, "\n");
  Family(out, "gpuplane_scheduler_gang_waiting_oldest_seconds", "gauge",
         "Time since the first member of the longest-waiting gang was created (0: none).");
  util::Append(out, "gpuplane_scheduler_gang_waiting_oldest_seconds ", age(oldest_gang_created_),
               "\n");
}

std::string SchedulerMetrics::Render(double now) const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  Family(out, "gpuplane_scheduler_attempts_total", "counter",
         "Scheduling decisions written, by result.");
  for (const auto& [result, n] : attempts_) {
    util::Append(out, "gpuplane_scheduler_attempts_total{result=\"", Escaped(result), "\"} ", n,
                 "\n");
  }
  Family(out, "gpuplane_scheduler_pod_scheduling_seconds", "histogram",
         "Time from a pod's creation to its binding.");
  int64_t cumulative = 0;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += latency_[i];
    util::Append(out, "gpuplane_scheduler_pod_scheduling_seconds_bucket{le=\"", kBuckets[i], "\"} ",
                 cumulative, "\n");
  }
  cumulative += latency_[kBuckets.size()];
  util::Append(out, "gpuplane_scheduler_pod_scheduling_seconds_bucket{le=\"+Inf\"} ", cumulative,
               "\ngpuplane_scheduler_pod_scheduling_seconds_sum ", latency_sum_,
               "\ngpuplane_scheduler_pod_scheduling_seconds_count ", cumulative, "\n");
  RenderPending(out, now);
  Family(out, "gpuplane_scheduler_gang_intents_total", "counter",
         "Open gang intents a leader found and finished, by direction.");
  util::Append(out, "gpuplane_scheduler_gang_intents_total{direction=\"forward\"} ",
               intents_forward.load(), "\n");
  util::Append(out, "gpuplane_scheduler_gang_intents_total{direction=\"back\"} ",
               intents_back.load(), "\n");
  Family(out, "gpuplane_scheduler_preemptions_total", "counter",
         "Pods that preempted others (nominated to a node while their victims leave).");
  util::Append(out, "gpuplane_scheduler_preemptions_total ", preemptions.load(), "\n");
  Family(out, "gpuplane_scheduler_preemption_victims_total", "counter",
         "Pods preempted (DisruptionTarget condition, then evicted or deleted).");
  util::Append(out, "gpuplane_scheduler_preemption_victims_total ", victims.load(), "\n");
  Family(out, "gpuplane_scheduler_api_errors_total", "counter",
         "API writes that failed, by what was written.");
  for (const auto& [verb, n] : api_errors_) {
    util::Append(out, "gpuplane_scheduler_api_errors_total{write=\"", Escaped(verb), "\"} ", n,
                 "\n");
  }
  Family(out, "gpuplane_scheduler_watch_errors_total", "counter",
         "Lists and watches of the cluster that failed and were retried (server unreachable, "
         "5xx, broken streams).");
  util::Append(out, "gpuplane_scheduler_watch_errors_total ", watch_errors.load(), "\n");
  Family(out, "gpuplane_scheduler_cache_synced", "gauge",
         "1 when every informer has listed its kind.");
  util::Append(out, "gpuplane_scheduler_cache_synced ", synced.load() ? 1 : 0, "\n");
  Family(out, "gpuplane_scheduler_leading", "gauge", "1 while this replica holds the Lease.");
  util::Append(out, "gpuplane_scheduler_leading ", leading.load() ? 1 : 0, "\n");
  Family(out, "gpuplane_queue_devices", "gauge",
         "Devices the work of each leaf queue holds after the last pass.");
  for (const auto& [queue, n] : queue_devices_) {
    util::Append(out, "gpuplane_queue_devices{queue=\"", Escaped(queue), "\"} ", n, "\n");
  }
  Family(out, "gpuplane_queue_past_use_device_seconds", "gauge",
         "Each queue's decayed past use (--usage-half-life), which its fair share leans against.");
  for (const auto& [queue, s] : queue_past_use_) {
    util::Append(out, "gpuplane_queue_past_use_device_seconds{queue=\"", Escaped(queue), "\"} ", s,
                 "\n");
  }
  Family(out, "gpuplane_scheduler_cycles_total", "counter", "Scheduling passes run.");
  util::Append(out, "gpuplane_scheduler_cycles_total ", cycles.load(), "\n");
  Family(out, "gpuplane_scheduler_cycle_seconds_total", "counter",
         "Time spent in scheduling passes and their writes.");
  util::Append(out, "gpuplane_scheduler_cycle_seconds_total ", cycle_seconds.load(), "\n");
  return out;
}

}  // namespace gpuplane::kube
