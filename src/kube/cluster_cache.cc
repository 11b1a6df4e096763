#include "kube/cluster_cache.h"

#include <mutex>
#include <utility>

#include "api/reader.h"
#include "util/strings.h"

namespace gpuplane::kube {

struct ClusterCache::Kind {
  std::string path, api_version, list_kind;
  std::unique_ptr<Informer> informer;
  mutable std::mutex mu;
  absl::Status error;  // guarded by mu
};

namespace {

struct KindSpec {
  const char* path;
  const char* api_version;
  const char* list_kind;
};

constexpr KindSpec kKinds[] = {
    {"/apis/resource.k8s.io/v1/deviceclasses", "resource.k8s.io/v1", "DeviceClassList"},
    {"/apis/resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1", "ResourceSliceList"},
    {"/api/v1/nodes", "v1", "NodeList"},
    {"/api/v1/pods", "v1", "PodList"},
    {"/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1", "ResourceClaimList"},
    {"/apis/resource.k8s.io/v1/resourceclaimtemplates", "resource.k8s.io/v1",
     "ResourceClaimTemplateList"},
};

}  // namespace

ClusterCache::ClusterCache(const Client& client, const std::function<void()>& on_change) {
  for (const KindSpec& k : kKinds) {
    auto kind = std::make_unique<Kind>();
    kind->path = k.path;
    kind->api_version = k.api_version;
    kind->list_kind = k.list_kind;
    Informer::Handler h = nullptr;
    if (on_change) h = [on_change](EventType, const nlohmann::json&) { on_change(); };
    kind->informer = std::make_unique<Informer>(client, InformerOptions{.path = k.path}, h);
    kinds_.push_back(std::move(kind));
  }
}

ClusterCache::~ClusterCache() { Stop(); }

void ClusterCache::Start() {
  for (auto& k : kinds_) {
    Kind* kind = k.get();
    threads_.emplace_back([kind] {
      absl::Status s = kind->informer->Run();
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
    if (!k->informer->Synced()) return false;
  }
  return true;
}

absl::Status ClusterCache::Error() const {
  for (const auto& k : kinds_) {
    std::lock_guard<std::mutex> lock(k->mu);
    if (!k->error.ok()) return k->error;
  }
  return absl::OkStatus();
}

ClusterCache::Loaded ClusterCache::Load(
    const std::function<bool(const nlohmann::json&)>& pod_filter) const {
  api::Loader loader;
  for (const auto& k : kinds_) {
    nlohmann::json items = nlohmann::json::array();
    for (nlohmann::json& obj : k->informer->List()) {
      if (k->list_kind == "PodList" && !pod_filter(obj)) continue;
      items.push_back(std::move(obj));
    }
    // A typed list, as the server lists it (its items without apiVersion and kind).
    nlohmann::json list = {
        {"apiVersion", k->api_version}, {"kind", k->list_kind}, {"items", items}};
    loader.AddText(list.dump(), util::Cat("api:", k->path), api::Format::kJson);
  }
  api::LoadResult all = loader.Finish();
  Loaded out;
  out.diagnostics = std::move(all.diagnostics);
  for (api::SourcedObject& o : all.objects) {
    std::string_view kind = api::KindOf(o.object);
    bool cluster = kind == "DeviceClass" || kind == "ResourceSlice" || kind == "Node";
    (cluster ? out.cluster : out.work).push_back(std::move(o));
  }
  return out;
}

}  // namespace gpuplane::kube
