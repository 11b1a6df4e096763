// The cluster as gpuplane schedules it, kept current from the API server: one informer per
// kind (DeviceClasses, ResourceSlices, Nodes; Pods, ResourceClaims, ResourceClaimTemplates;
// Workloads, PodGroups and gpuplane.io Queues where the server serves them: a kind it answers
// 404 for (a CRD not installed, or deleted while the cache runs: Informer's
// gone_after_seconds) is empty, counts as synced, and is asked for again every
// `absent_recheck_seconds`, so a definition installed later is seen without a restart;
// PodDisruptionBudgets, which Load() leaves out: read them with List).
// Load() turns the caches into the objects a scheduling pass reads (sched/pass.h) through
// api's own reader, so what the server serves is decoded and checked exactly as files are;
// a problem names the object and field ("api:/apis/resource.k8s.io/v1/resourceslices: ...").
// Each object is decoded once per resourceVersion: a Load() reuses what the previous one
// decoded for objects that have not changed (assumed copies are decoded every time).
// Objects this process wrote can be assumed (Assume): the written copy stands in for the cached
// one until the watch delivers a version at least as new, so a scheduling pass never decides
// from a cache that has not seen its own last writes.
// The cache owns its informers and their threads (Stop() or the destructor joins them); Load()
// lends the decoded objects (shared, immutable: they stay valid while the Loaded holds them).
// Thread-safety: Start() and Stop() from one thread; Synced() and Load() from any thread (each
// informer guards its own cache). on_change runs on the informers' threads.
#ifndef GPUPLANE_KUBE_CLUSTER_CACHE_H_
#define GPUPLANE_KUBE_CLUSTER_CACHE_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "api/loader.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace gpuplane::kube {

class ClusterCache {
 public:
  // Called after a cached object changes, from an informer's thread, with the object's kind
  // ("Pod", "ResourceClaim", ...) and the object as the watch event had it.
  using ChangeHandler =
      std::function<void(std::string_view kind, EventType type, const nlohmann::json& object)>;
  ClusterCache(const Client& client, const ChangeHandler& on_change,
               double absent_recheck_seconds = 10);
  ~ClusterCache();
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;

  void Start();
  void Stop();
  bool Synced() const;
  // The first error an informer stopped with (403 on a kind: missing RBAC), or OK.
  absl::Status Error() const;
  // The optional kinds the server does not serve now, as "group/version Kind" (sorted).
  std::vector<std::string> Unserved() const;
  // Why reading the cluster fails now (the server unreachable, 5xx answers, broken watches),
  // from the first kind in trouble, with how many others are: "" when every informer reads.
  // Each informer retries on its own (Informer's backoff).
  std::string Trouble() const;
  // The lists and watches that have failed so far, all kinds together (Informer::failures).
  int64_t Failures() const;

  struct Loaded {
    api::ObjectRefs cluster;                   // DeviceClasses, ResourceSlices, Nodes
    api::ObjectRefs work;                      // the Pods `pod_filter` keeps, claims, templates
    std::vector<api::Diagnostic> diagnostics;  // of all of them, checked together
    // What `cluster` and `work` point into (the cache's decoded objects, never changed): a
    // pass on them is valid while this Loaded lives.
    std::vector<std::shared_ptr<const std::vector<api::SourcedObject>>> held;
  };
  // `pod_filter` picks the pods to schedule (e.g. pending, this scheduler's name).
  Loaded Load(const std::function<bool(const nlohmann::json&)>& pod_filter) const;

  // `kind`: "Pod", "ResourceClaim", "Workload", ... ; `key`: "ns/name" (or "name").
  // The object as cached (or as assumed, while that is newer).
  std::optional<nlohmann::json> Get(std::string_view kind, const std::string& key) const;
  // `object` as this process wrote it; its metadata.resourceVersion decides when the cache
  // has caught up (a bound pod: the cached version plus one).
  void Assume(std::string_view kind, nlohmann::json object);
  // Every cached object of `kind` (assumed copies where newer).
  std::vector<nlohmann::json> List(std::string_view kind) const;
  // Whether the cache holds the object (cheaper than Get: nothing is copied).
  bool Has(std::string_view kind, const std::string& key) const;

 private:
  struct Kind;
  Kind* Find(std::string_view kind) const;
  std::vector<std::unique_ptr<Kind>> kinds_;
  std::vector<std::thread> threads_;
  double absent_recheck_seconds_;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_CLUSTER_CACHE_H_
