#include "kube/cluster_cache.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "api/reader.h"
#include "kube/json_field.h"
#include "util/strings.h"

namespace gpuplane::kube {

namespace {

// One cached object as api's reader decoded it: shared with the Loaded results that borrow
// it, so a later Load() may drop it while a pass still reads it.
struct Decoded {
  int64_t version = -1;  // its resourceVersion
  std::shared_ptr<const std::vector<api::SourcedObject>> objects;
  std::vector<api::Diagnostic> diagnostics;
};

}  // namespace

struct ClusterCache::Kind {
  std::string path, api_version, list_kind, kind;
  bool optional = false;
  bool decoded = true;  // read by Load(); else only through Get/List
  std::unique_ptr<Informer> informer;
  mutable std::mutex mu;
  absl::Status error;                             // guarded by mu
  std::map<std::string, nlohmann::json> assumed;  // guarded by mu
  // Each object as Load() last decoded it, by key: an object whose resourceVersion has not
  // changed since is not decoded again (decoding is most of a pass's reading).
  std::mutex memo_mu;
  std::unordered_map<std::string, Decoded> memo;  // guarded by memo_mu
};

namespace {

struct KindSpec {
  const char* path;
  const char* api_version;
  const char* list_kind;
  bool optional = false;  // a server without it is fine (the cache is then empty)
  bool decoded = true;    // Load() decodes it for the pass; else Get/List only
};

constexpr KindSpec kKinds[] = {
    {"/apis/resource.k8s.io/v1/deviceclasses", "resource.k8s.io/v1", "DeviceClassList"},
    {"/apis/resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1", "ResourceSliceList"},
    {"/api/v1/nodes", "v1", "NodeList"},
    {"/api/v1/pods", "v1", "PodList"},
    {"/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1", "ResourceClaimList"},
    {"/apis/resource.k8s.io/v1/resourceclaimtemplates", "resource.k8s.io/v1",
     "ResourceClaimTemplateList"},
    {"/apis/scheduling.k8s.io/v1alpha1/workloads", "scheduling.k8s.io/v1alpha1", "WorkloadList",
     true},
    {"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "scheduling.x-k8s.io/v1alpha1", "PodGroupList",
     true},
    // Where a pod's volumes can be used (sched/pod_volumes.h).
    {"/api/v1/persistentvolumeclaims", "v1", "PersistentVolumeClaimList"},
    {"/api/v1/persistentvolumes", "v1", "PersistentVolumeList"},
    {"/apis/storage.k8s.io/v1/storageclasses", "storage.k8s.io/v1", "StorageClassList"},
    // How many volumes of each CSI driver a node may attach (sched/volume_limits.h).
    {"/apis/storage.k8s.io/v1/csinodes", "storage.k8s.io/v1", "CSINodeList"},
    // And which volumes each node has attached, pods or not (sched/volume_limits.h).
    {"/apis/storage.k8s.io/v1/volumeattachments", "storage.k8s.io/v1", "VolumeAttachmentList"},
    // Which drivers publish their free storage, and how much each node reaches
    // (sched/pod_volumes.h, sched/storage_capacity.h).
    {"/apis/storage.k8s.io/v1/csidrivers", "storage.k8s.io/v1", "CSIDriverList"},
    {"/apis/storage.k8s.io/v1/csistoragecapacities", "storage.k8s.io/v1", "CSIStorageCapacityList"},
    // The labels pod affinity terms' namespaceSelectors read (sched/pod_topology.h).
    {"/api/v1/namespaces", "v1", "NamespaceList"},
    // deploy/scheduler/queue-crd.yaml; absent: no queues.
    {"/apis/gpuplane.io/v1alpha1/queues", "gpuplane.io/v1alpha1", "QueueList", true},
    // Which pods preemption may evict (their disruptionsAllowed), and how.
    {"/apis/policy/v1/poddisruptionbudgets", "policy/v1", "PodDisruptionBudgetList", true, false},
};

}  // namespace

ClusterCache::ClusterCache(const Client& client, const ChangeHandler& on_change,
                           double absent_recheck_seconds)
    : absent_recheck_seconds_(absent_recheck_seconds) {
  for (const KindSpec& k : kKinds) {
    auto kind = std::make_unique<Kind>();
    kind->path = k.path;
    kind->api_version = k.api_version;
    kind->list_kind = k.list_kind;
    kind->kind = kind->list_kind.substr(0, kind->list_kind.size() - 4);
    kind->optional = k.optional;
    kind->decoded = k.decoded;
    Informer::Handler h = nullptr;
    if (on_change) {
      h = [on_change, name = kind->kind](EventType type, const nlohmann::json& object) {
        on_change(name, type, object);
      };
    }
    kind->informer = std::make_unique<Informer>(client, InformerOptions{.path = k.path}, h);
    kinds_.push_back(std::move(kind));
  }
}

ClusterCache::~ClusterCache() { Stop(); }

void ClusterCache::Start() {
  for (auto& k : kinds_) {
    Kind* kind = k.get();
    threads_.emplace_back([kind, recheck = absent_recheck_seconds_] {
      Informer& informer = *kind->informer;
      absl::Status s = informer.Run();
      // A kind the server does not serve (yet, or any more): asked for again until it is.
      while (kind->optional && s.code() == absl::StatusCode::kNotFound) {
        for (double waited = 0; waited < recheck && !informer.Stopping(); waited += 0.05) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        s = informer.Run();
      }
      std::lock_guard<std::mutex> lock(kind->mu);
      kind->error = s;
    });
  }
}

void ClusterCache::Stop() {
  for (auto& k : kinds_) k->informer->Stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

bool ClusterCache::Synced() const {
  for (const auto& k : kinds_) {
    if (!k->informer->Synced() && k->informer->Served()) return false;
  }
  return true;
}

std::vector<std::string> ClusterCache::Unserved() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) {
    if (k->optional && !k->informer->Served()) out.push_back(k->api_version + " " + k->kind);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ClusterCache::Trouble() const {
  std::string first;
  int others = 0;
  for (const auto& k : kinds_) {
    std::string t = k->informer->Trouble();
    if (t.empty()) continue;
    if (first.empty()) {
      first = std::move(t);
    } else {
      ++others;
    }
  }
  if (others > 0)
    util::Append(first, " (and ", others, others == 1 ? " other kind)" : " other kinds)");
  return first;
}

int64_t ClusterCache::Failures() const {
  int64_t n = 0;
  for (const auto& k : kinds_) n += k->informer->failures();
  return n;
}

ClusterCache::Kind* ClusterCache::Find(std::string_view kind) const {
  for (const auto& k : kinds_) {
    if (k->kind == kind) return k.get();
  }
  return nullptr;
}

std::optional<nlohmann::json> ClusterCache::Get(std::string_view kind,
                                                const std::string& key) const {
  Kind* k = Find(kind);
  if (k == nullptr) return std::nullopt;
  std::optional<nlohmann::json> cached = k->informer->Get(key);
  std::lock_guard<std::mutex> lock(k->mu);
  auto it = k->assumed.find(key);
  if (cached && it != k->assumed.end() &&
      Informer::VersionOf(*cached) < Informer::VersionOf(it->second)) {
    return it->second;
  }
  return cached;
}

void ClusterCache::Assume(std::string_view kind, nlohmann::json object) {
  Kind* k = Find(kind);
  if (k == nullptr) return;
  std::string key = Informer::KeyOf(object);
  std::lock_guard<std::mutex> lock(k->mu);
  k->assumed[key] = std::move(object);
}

std::vector<nlohmann::json> ClusterCache::List(std::string_view kind) const {
  Kind* k = Find(kind);
  if (k == nullptr) return {};
  std::vector<nlohmann::json> objects = k->informer->List();
  std::lock_guard<std::mutex> lock(k->mu);
  for (nlohmann::json& obj : objects) {
    auto it = k->assumed.find(Informer::KeyOf(obj));
    if (it != k->assumed.end() && Informer::VersionOf(obj) < Informer::VersionOf(it->second)) {
      obj = it->second;
    }
  }
  return objects;
}

bool ClusterCache::Has(std::string_view kind, const std::string& key) const {
  Kind* k = Find(kind);
  return k != nullptr && k->informer->Has(key);
}

absl::Status ClusterCache::Error() const {
  for (const auto& k : kinds_) {
    std::lock_guard<std::mutex> lock(k->mu);
    if (!k->error.ok()) return k->error;
  }
  return absl::OkStatus();
}

namespace {

// One cached object as api's reader decodes it, as if listed (its apiVersion and kind from
// its list, which the server leaves off list items).
Decoded Decode(const std::string& api_version, const std::string& kind, nlohmann::json obj,
               const std::string& file) {
  obj["apiVersion"] = api_version;
  obj["kind"] = kind;
  Decoded d;
  std::vector<api::SourcedObject> objects;
  absl::StatusOr<std::vector<api::Doc>> docs = api::ReadJson(obj.dump(), file);
  if (!docs.ok()) {
    d.diagnostics.push_back(api::Diagnostic{api::Diagnostic::Severity::kError, "", 0, "", "",
                                            std::string(docs.status().message())});
  } else {
    for (const api::Doc& doc : *docs) {
      for (api::SourcedObject& o : api::DecodeObjects(doc, file, d.diagnostics)) {
        objects.push_back(std::move(o));
      }
    }
  }
  d.objects = std::make_shared<const std::vector<api::SourcedObject>>(std::move(objects));
  return d;
}

}  // namespace

ClusterCache::Loaded ClusterCache::Load(
    const std::function<bool(const nlohmann::json&)>& pod_filter) const {
  Loaded out;
  api::ObjectRefs all;
  for (const auto& k : kinds_) {
    if (!k->decoded) continue;
    // The cached objects themselves (not copies: most are only read for their key and
    // version below).
    std::vector<Informer::Keyed> objects = k->informer->Shared();
    std::set<std::string> assumed;  // keys whose assumed copy stands in: never memoized
    {
      // What this process wrote stands in for the cached copy until the watch delivers it;
      // then (or when the object is gone) the assumed copy is dropped.
      std::lock_guard<std::mutex> lock(k->mu);
      std::map<std::string, nlohmann::json> still;
      for (Informer::Keyed& cached : objects) {
        if (k->assumed.empty()) break;
        auto it = k->assumed.find(cached.key);
        if (it == k->assumed.end()) continue;
        if (cached.version < Informer::VersionOf(it->second)) {
          cached.object = std::make_shared<const nlohmann::json>(it->second);
          assumed.insert(it->first);
          still.insert(std::move(*it));
        }
      }
      k->assumed = std::move(still);
    }
    const std::string file = util::Cat("api:", k->path);
    std::lock_guard<std::mutex> lock(k->memo_mu);
    std::unordered_map<std::string, Decoded> memo;
    memo.reserve(objects.size());
    for (Informer::Keyed& cached : objects) {
      const nlohmann::json& obj = *cached.object;
      if (k->list_kind == "PodList" && !pod_filter(obj)) continue;
      std::string& key = cached.key;
      const int64_t version = assumed.contains(key) ? -1 : cached.version;
      auto last = k->memo.find(key);
      Decoded d;
      if (version >= 0 && last != k->memo.end() && last->second.version == version) {
        d = std::move(last->second);
      } else {
        d = Decode(k->api_version, k->kind, obj, file);
        d.version = version;
      }
      for (const api::SourcedObject& o : *d.objects) all.push_back(&o);
      out.diagnostics.insert(out.diagnostics.end(), d.diagnostics.begin(), d.diagnostics.end());
      out.held.push_back(d.objects);
      memo.insert_or_assign(std::move(key), std::move(d));
    }
    k->memo = std::move(memo);  // objects gone from the cache leave the memo too
  }
  api::CheckAcross(all, out.diagnostics);
  for (const api::SourcedObject* o : all) {
    std::string_view kind = api::KindOf(o->object);
    bool cluster = kind == "DeviceClass" || kind == "ResourceSlice" || kind == "Node" ||
                   kind == "CSINode" || kind == "VolumeAttachment";
    (cluster ? out.cluster : out.work).push_back(o);
  }
  return out;
}

}  // namespace gpuplane::kube
