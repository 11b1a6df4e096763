// The live scheduler (`gpuplane scheduler`): pods whose spec.schedulerName is ours are
// scheduled from the cluster cache by the same pass `gpuplane schedule` runs (sched/pass.h),
// and each decision becomes API writes (kube/writer.h): every claim the pod uses allocated and
// reserved, each unbound WaitForFirstConsumer PersistentVolumeClaim it uses annotated with the
// node (volume.kubernetes.io/selected-node, for its provisioner), then the Binding; an
// unschedulable pod gets PodScheduled=False with the pass's reason and a FailedScheduling
// Event (written again only when the reason changes).
//
// Cycles: a cycle runs when the cache reports a change (a pod added, a claim created by the
// resourceclaim controller, a node or slice changed), never by polling, or when a pod's
// backoff ends. When the last cycle left nothing to place, only a change to one of its own
// pods that is not placed runs one at once; other changes wait for
// options.idle_pass_seconds, so churn elsewhere in the cluster does not keep it busy. Its
// writes go out in parallel and the cycle ends when they have, with what was written assumed into
// the cache (cluster_cache.h), so the next pass never decides from a cache behind its own writes.
// A pod (or gang) whose writes failed sits out of the passes for a backoff (0.5 s, doubling
// per failure to 30 s, as kube-scheduler backs pods off): the devices it was given go to
// others meanwhile, and a failing write is not sent again on every cluster change.
// Pods whose claims from templates the controller has not created yet wait. A ResourceSlice
// (or device) naming a node the API does not have is not offered (logged once); so is an
// object api's reader refuses, and what its checks across objects find is logged once too.
//
// Gangs (PodGroup, Workload) are crash-safe: before the first write of a gang, the planned
// placement of every member (node, claims, allocations, volume claims to provision) is
// recorded in the annotation `gpuplane.io/gang-intent` of the PodGroup or Workload; it is
// removed when all members are bound. A leader that finds an open intent (after a crash or a
// leader change) rolls it forward when every member and device is still as planned, else
// backward (claims released, bound members deleted so their controller recreates them): a gang
// never stays partly bound.
// Preemption (unless options.preemption is off): the pass's victims (sched/session.h) get the
// DisruptionTarget condition and are evicted (Eviction API where a PodDisruptionBudget covers
// them, which also protects them from being chosen when it allows too few disruptions) or
// deleted with their grace period; the preemptor gets status.nominatedNodeName and a reason
// naming its victims, and waits for them. Every victim is marked before any is evicted, and a
// new leader evicts the whole job of any marked victim still running: a job preempted is
// never left partly running.
// Only the leader writes (the caller's `leading`, from leader.h); the cache runs always.
// With options.usage_half_life, the queues' decayed past use outlives a leader: it is kept
// in a ConfigMap (kube/queue_usage.h) that the next leader reads when it starts leading. With
// an opportunistic queue (gpu weight 0, no guarantee), the other queues' hourly demand is kept
// there too, and each pass gets its daily pattern's rise within the guarantee window as the
// opportunistic headroom's forecast (sched/demand_peaks.h).
//
// Explain() runs one pass as the next cycle would, on a cache synced for the call, and writes
// nothing (`gpuplane explain --kubeconfig`).
//
// Ownership: owns its cache and threads. Thread-safety: Run() on one thread; Stop(),
// metrics(), Ready() and Error() from any thread.
#ifndef GPUPLANE_KUBE_SCHEDULER_H_
#define GPUPLANE_KUBE_SCHEDULER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kube/client.h"
#include "kube/cluster_cache.h"
#include "kube/gang_intent.h"
#include "kube/queue_usage.h"
#include "kube/scheduler_metrics.h"
#include "kube/writer.h"
#include "sched/demand_peaks.h"

namespace gpuplane::sched {
struct PassResult;
struct PodSet;
}  // namespace gpuplane::sched

namespace gpuplane::kube {

struct DisruptionBudget;  // disruption_budget.h

struct SchedulerOptions {
  std::string name = "gpuplane";  // the spec.schedulerName served
  std::string policy = "gpuplane";
  int writers = 64;  // concurrent API writes (16: 56 pods/s, 64: 70 pods/s in the bench)
  bool preemption = true;
  // Fair shares lean against each queue's GPU use decayed with this half-life (seconds; 0:
  // they ignore past use), weighted by usage_k (sched::FairShareOptions).
  double usage_half_life = 0;
  double usage_k = 1;
  // Where that past use is kept for the next leader (kube/queue_usage.h): the ConfigMap
  // `<name>-queue-usage` in this namespace (the Lease's).
  std::string state_namespace = "kube-system";
  // How often a kind the API server does not serve (a CRD not installed yet, or deleted) is
  // asked for again (ClusterCache).
  double absent_recheck_seconds = 10;
  // With nothing of its own to place (every pod placed, none waiting for a claim from a
  // template or backing off), changes to other objects run a pass at most this often
  // (seconds): such a pass only brings the queues' held devices, the demand forecast and the
  // gauges up to date. A change to one of its own pods that is not placed runs one at once.
  double idle_pass_seconds = 5;
};

class Scheduler {
 public:
  Scheduler(const Client& client, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Schedules until Stop(); `leading` says whether this replica may write now (checked
  // before every cycle and every gang). Errors: the cache could not watch a kind it needs
  // (RBAC), or the policy is unknown.
  absl::Status Run(const std::function<bool()>& leading);
  void Stop();

  // The cache has synced and its informers run.
  bool Ready() const;
  // Why an informer stopped (missing RBAC), or OK.
  absl::Status Error() const { return cache_->Error(); }
  // Why reading the cluster fails now (ClusterCache::Trouble), or "".
  std::string Trouble() const { return cache_->Trouble(); }
  const SchedulerMetrics& metrics() const { return metrics_; }

  // For `gpuplane explain --kubeconfig`: lists the cluster (the cache synced within
  // `timeout_seconds`, then stopped), reads the queues' past use as a new leader does, and
  // runs one pass as this scheduler's next cycle would, writing nothing. `pod` is
  // "namespace/name". Errors: the cache did not sync in time or could not list a kind (RBAC),
  // the pass failed, or the cluster has no such pod. Instead of Run(), once per Scheduler.
  struct Explained {
    std::shared_ptr<const sched::PassResult> pass;  // also holds the objects it read
    int index = -1;        // the pod in pass->pods.pods, when the pass places it
    std::string outside;   // else why it is not pending in the pass ("bound to node n1", ...)
    bool settled = false;  // bound or finished: it waits for nothing
    // What api's reader refused in the cluster's objects (left out of the pass), what the
    // checks across objects found ("api:/apis/resource.k8s.io/v1/resourceslices:1:
    // ResourceSlice s: spec.devices[0]...: ..."), and the pass's warnings: what a scheduler
    // logs, once each.
    std::vector<std::string> problems;
  };
  absl::StatusOr<Explained> Explain(const std::string& pod, double timeout_seconds);

 private:
  struct Job;
  struct Decided;
  // A watched object changed; `ours`: a pod of this scheduler's that is not placed.
  void Wake(bool ours);
  // Whether a change waits for a pass now (mu_ held): at once after a change to one of its
  // own pods or while it has work, else not before idle_until_.
  bool PassDue(std::chrono::steady_clock::time_point now) const;
  absl::Status Cycle();
  // Loads the cache and runs the pass a cycle runs (also for Explain).
  absl::Status Decide(Decided& decided);
  // The writes a pass's decisions call for: a job per pod or gang object, and reports of
  // unschedulable pods whose reason changed. Sets the pending metrics, with `waiting` pods
  // waiting for claims from templates, the oldest created at `waiting_oldest` (RFC 3339).
  std::vector<Job> Plan(const sched::PassResult& pass, int64_t waiting,
                        std::string_view waiting_oldest);
  // Runs the jobs on `options_.writers` threads; returns when all are done.
  void WriteAll(std::vector<Job>& jobs);
  // Keeps the reasons reported for pods still pending.
  void Remember(const sched::PodSet& pods, const std::vector<Job>& jobs);
  void Recover();
  // Victims this scheduler marked (DisruptionTarget) that still run, after a crash or a leader
  // change: their whole jobs are evicted.
  void FinishPreemptions();
  // The queues' past use: loaded when this replica starts leading (what the last leader
  // saved, decayed to now), saved every kSaveUsageSeconds while it leads and when it stops.
  void LoadUsage();
  void SaveUsage(bool now);
  static constexpr double kSaveUsageSeconds = 30;
  void Execute(Job& job);
  // A pod that is not bound: its report (and nomination), then its victims marked and evicted.
  void Report(Job& job);
  bool WritePod(const Job& job, size_t member, std::vector<std::string>& allocated);
  // Creates the claims made for members' extended resources (sched/extended_resources.h) and
  // puts their names in the job; false when one could not be made.
  bool CreateExtendedClaims(Job& job);
  // The gang intent of `job` (kube/gang_intent.h).
  static nlohmann::json IntentOf(const Job& job);
  void RollBack(const std::string& ns, const nlohmann::json& intent);
  bool RollForward(const std::string& ns, const nlohmann::json& intent);

  Client client_;
  Writer writer_;
  SchedulerOptions options_;
  std::unique_ptr<ClusterCache> cache_;
  SchedulerMetrics metrics_;
  std::function<bool()> leading_;
  bool was_leading_ = false;
  // The kinds the server did not serve when Run last looked, to log each change once.
  std::vector<std::string> unserved_;
  void LogServedKinds();
  // Logs when reading the cluster starts failing (ClusterCache::Trouble), every minute while it
  // fails, and when it reads again; counts the failures in the metrics. Run's thread only.
  std::string trouble_;
  std::chrono::steady_clock::time_point trouble_since_, trouble_logged_;
  void LogTrouble();

  std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = true;          // guarded by mu_
  bool ours_changed_ = false;  // guarded by mu_
  // Whether the last cycle left nothing to place, and until when other changes wait then
  // (options_.idle_pass_seconds). Run's thread only.
  bool idle_ = false;
  std::chrono::steady_clock::time_point idle_until_;
  // Pods whose writes failed, by uid: left out of passes until `until`; a cycle runs when the
  // first backoff ends, also when nothing changes. Run's thread only.
  static constexpr int kFirstRetryMs = 500, kLastRetryMs = 30'000;
  struct Backoff {
    int ms = 0;
    std::chrono::steady_clock::time_point until;
  };
  std::map<std::string, Backoff> backoff_;
  // Updates backoff_ after a cycle that started at `start`.
  void BackOff(const std::vector<Job>& jobs, std::chrono::steady_clock::time_point start);
  std::atomic<bool> stop_{false};
  std::map<std::string, std::string> reported_;  // pod uid -> the reason last written
  std::set<std::string> warned_;                 // input warnings logged once
  std::vector<DisruptionBudget> budgets_;        // of the current cycle
  // Past use by queue name (options_.usage_half_life > 0): decayed device-seconds, and the
  // devices each queue held after the last pass, since `usage_at_`. Run's thread only.
  std::map<std::string, double, std::less<>> usage_;
  std::map<std::string, double> held_;
  std::chrono::steady_clock::time_point usage_at_ = std::chrono::steady_clock::now();
  double usage_wall_ = 0;  // usage_at_ in seconds since 1970
  std::unique_ptr<QueueUsageStore> usage_store_;
  // With an opportunistic queue: the other queues' demand by hour (kept with the past use),
  // whose daily pattern forecasts their rise for the opportunistic headroom.
  sched::DemandPeaks demand_;
  std::optional<std::chrono::steady_clock::time_point> usage_saved_;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_SCHEDULER_H_
