// Queues' past use kept in the cluster, so a new leader (or a restarted scheduler) goes on
// from the old one's history instead of from zero: the ConfigMap `<scheduler-name>-queue-usage`
// in the scheduler's state namespace (its Lease's), key `usage.json`:
// {"savedAt":"RFC 3339 time","queues":{"NAME":{"gpuSeconds":X,"devices":Y}},
//  "demandPeaks":{"HOUR":PEAK}} where gpuSeconds is the queue's decayed device-seconds at
// savedAt and devices what it held then (the loader decays the gap with it), and demandPeaks
// the hourly peaks (hours since 1970) of what the queues that are not opportunistic held and
// waited for (sched/demand_peaks.h, the opportunistic headroom's forecast; optional). A
// ConfigMap anyone can edit is input: ReadQueueUsage names what is wrong. Pure functions, and a
// store whose calls each make one or two API requests; thread-compatible (one caller at a time).
#ifndef GPUPLANE_KUBE_QUEUE_USAGE_H_
#define GPUPLANE_KUBE_QUEUE_USAGE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kube/client.h"

namespace gpuplane::kube {

struct QueueUsage {
  double saved_at = 0;  // seconds since 1970
  std::map<std::string, double, std::less<>> gpu_seconds;
  std::map<std::string, double> devices;
  std::map<int64_t, double> demand_peaks;  // hour since 1970 -> peak devices
};

// The JSON text of `u` (the shape above).
std::string WriteQueueUsage(const QueueUsage& u);
// `text` in the shape above; errors name `source` and the field, and say what to do.
absl::StatusOr<QueueUsage> ReadQueueUsage(std::string_view text, std::string_view source);

// What `u` is `now` (seconds since 1970): each queue's use decayed over the time since it was
// saved, with what it held then added (sched::DecayedUsage). A save from the future counts as
// made now.
QueueUsage DecayedTo(const QueueUsage& u, double now, double half_life_seconds);

class QueueUsageStore {
 public:
  QueueUsageStore(Client client, std::string ns, std::string name);
  // The saved use; nullopt when none was saved. Errors: the API failed, or the ConfigMap's
  // content is malformed (named).
  absl::StatusOr<std::optional<QueueUsage>> Load() const;
  // Creates or replaces the ConfigMap.
  absl::Status Save(const QueueUsage& u) const;
  std::string Describe() const;  // "ConfigMap NS/NAME"

 private:
  std::string Path(bool collection) const;
  Client client_;
  std::string ns_, name_;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_QUEUE_USAGE_H_
