// A cache of one kind of API object kept current by list + watch, as client-go's informers
// do: a paged list (limit/continue), then a watch from the list's resourceVersion with
// bookmarks; each event updates the cache and calls the handler. When the server says the
// version is gone (410, as a status or an ERROR event: compaction, an API server restart)
// it lists again; when the connection breaks it backs off (0.2 s doubling to 10 s) and
// resumes the watch from the last version it saw (failures() and Trouble() say how often
// and why it is retrying). The Informer owns its cache: objects kept
// as JSON, keyed "namespace/name" (or "name" for cluster-scoped kinds), without
// metadata.managedFields (as kube-scheduler's informers keep them: nothing here reads them, they
// are often most of an object, and an update that leaves them out keeps the server's); Get()
// and List() return copies, Shared() the cached objects themselves (immutable: an event
// replaces an object, never changes it in place).
// Thread-safety: Run() on one thread; Stop(), Synced(), Get(), Has(), List() and the counters from
// any thread. The handler runs on Run()'s thread, outside the cache's lock.
#ifndef GPUPLANE_KUBE_INFORMER_H_
#define GPUPLANE_KUBE_INFORMER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "kube/client.h"

namespace gpuplane::kube {

enum class EventType { kAdded, kModified, kDeleted };

struct InformerOptions {
  std::string path;            // the collection, e.g. "/api/v1/pods" or ".../namespaces/ns/pods"
  std::string label_selector;  // optional
  std::string field_selector;  // optional
  int page_size = 500;
  double watch_seconds = 300;  // the server ends each watch after about this long
  // A kind listed before is taken as gone (Run returns NotFound) only when the server has
  // answered 404 for this long: a restarting API server answers 404 for kinds that CRDs serve
  // until it has loaded them.
  double gone_after_seconds = 5;
};

class Informer {
 public:
  using Handler = std::function<void(EventType, const nlohmann::json& object)>;

  Informer(Client client, InformerOptions options, Handler handler = nullptr);

  // Lists and watches until Stop(). Returns OK after Stop(); an error only for what a retry
  // cannot fix, naming the path and the reason: PermissionDenied (401, 403, 405) or NotFound
  // (404: the server does not serve the kind, e.g. a CRD not installed, or deleted: after
  // `gone_after_seconds` of 404s when it was listed before; the cache is emptied first, the
  // handler seeing each object deleted). Run() may be called again after it returned (it
  // lists again): a kind installed later is seen.
  absl::Status Run();
  void Stop() { stop_ = true; }
  bool Stopping() const { return stop_; }

  bool Synced() const { return synced_; }
  // False from a 404 until a list succeeds again (true before the first list).
  bool Served() const { return served_; }
  std::optional<nlohmann::json> Get(const std::string& key) const;
  bool Has(const std::string& key) const;
  std::vector<nlohmann::json> List() const;
  // The cached objects themselves with their keys (the cache's own: KeyOf need not be
  // computed again), in key order.
  struct Keyed {
    std::string key;
    std::shared_ptr<const nlohmann::json> object;
    int64_t version = -1;  // VersionOf(*object), read once when the object arrived
  };
  std::vector<Keyed> Shared() const;
  std::string ResourceVersion() const;
  int64_t lists() const { return lists_; }  // including the first
  int64_t watches() const { return watches_; }
  // Lists and watches that failed for a reason a retry may fix (the server unreachable, a 5xx,
  // a broken stream); 404s, which say whether the kind is served, are not counted.
  int64_t failures() const { return failures_; }
  // Why the last of those failures happened, naming the request and the reason; empty once a
  // list succeeds or a watch delivers an event or ends as the server ends watches.
  std::string Trouble() const;

  static std::string KeyOf(const nlohmann::json& object);
  // metadata.resourceVersion as etcd writes them (a decimal counter), or -1.
  static int64_t VersionOf(const nlohmann::json& object);

  // One line of a watch stream, as Run() applies them (public for tests and fuzzing): an event
  // updates the cache and calls the handler; a line that is not an event, or whose object is
  // not an API object (a JSON object with metadata.name), is skipped. Returns false for an
  // ERROR event, with its HTTP-like code in `*error_code` (410: the version is gone) or -1
  // when it has none.
  bool ApplyWatchLine(std::string_view line, int* error_code);

 private:
  absl::Status ListAll();            // replaces the cache; handler sees the difference
  absl::StatusOr<bool> WatchOnce();  // false: the version is gone, list again
  void Apply(EventType type, nlohmann::json object);
  std::string Query(bool watch, const std::string& cont) const;
  void Backoff();
  void Clear();  // the kind is not served: no objects
  void NoteTrouble(const absl::Status& s);
  void ClearTrouble();

  Client client_;
  InformerOptions options_;
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> served_{true};
  std::atomic<int64_t> lists_{0}, watches_{0}, failures_{0};
  std::atomic<bool> troubled_{false};  // !trouble_.empty(), read without the lock
  double backoff_ = 0;
  mutable std::mutex mu_;
  struct Cached {
    std::shared_ptr<const nlohmann::json> object;
    int64_t version = -1;
  };
  static Cached Cache(nlohmann::json object);
  std::map<std::string, Cached> objects_;  // guarded by mu_
  std::string rv_;                         // guarded by mu_
  std::string trouble_;                    // guarded by mu_
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_INFORMER_H_
