#include "acct/sources.h"

#include "acct/cgroup.h"
#include "api/loader.h"
#include "nlohmann/json.hpp"
#include "util/strings.h"
#include "yaml-cpp/yaml.h"

namespace gpuplane::acct {
namespace {

using Json = nlohmann::json;

// A field by either of its names (proto3 JSON allows both).
const Json* Field(const Json& j, const char* camel, const char* snake) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(camel);
  if (it == j.end()) it = j.find(snake);
  return it == j.end() ? nullptr : &*it;
}

std::string StringField(const Json& j, const char* camel, const char* snake) {
  const Json* f = Field(j, camel, snake);
  return f != nullptr && f->is_string() ? f->get<std::string>() : "";
}

std::string StripScheme(const std::string& id) {
  size_t at = id.find("://");
  return at == std::string::npos ? id : id.substr(at + 3);
}

}  // namespace

absl::StatusOr<PodIndex> ParsePodsJson(const std::string& text, const std::string& name) {
  api::Loader loader;
  loader.AddText(text, name, api::Format::kJson);
  api::LoadResult loaded = loader.Finish();
  PodIndex index;
  bool any_pod = false;
  for (const api::SourcedObject& o : loaded.objects) {
    const auto* pod = std::get_if<api::Pod>(&o.object);
    if (pod == nullptr) continue;
    any_pod = true;
    if (pod->metadata.uid.empty()) continue;
    PodIndex::Pod& p = index.by_uid[pod->metadata.uid];
    p.namespace_name = pod->metadata.namespace_name;
    p.name = pod->metadata.name;
    p.labels = pod->metadata.labels;
    for (const auto* list :
         {&pod->status.container_statuses, &pod->status.init_container_statuses}) {
      for (const api::ContainerStatus& c : *list) {
        std::string id = StripScheme(c.container_id);
        if (!id.empty()) p.containers[id] = c.name;
      }
    }
  }
  if (!any_pod && loaded.errors() > 0) {
    for (const api::Diagnostic& d : loaded.diagnostics) {
      if (!d.is_error()) continue;
      return absl::InvalidArgumentError(
          util::Cat(d.ToString(), " (expected the output of kubectl get pods -o json)"));
    }
  }
  return index;
}

PidResolver ProcResolver(std::string proc_root, PodIndex pods) {
  return [root = std::move(proc_root),
          pods = std::move(pods)](int64_t pid) -> std::optional<ProcessOwner> {
    absl::StatusOr<std::string> text = util::ReadFile(util::Cat(root, "/", pid, "/cgroup"));
    if (!text.ok()) {  // exited, or not visible
      ProcessOwner unknown;
      unknown.unknown = true;
      return unknown;
    }
    std::optional<CgroupIdentity> id = ParseProcCgroup(*text);
    if (!id) return std::nullopt;
    ProcessOwner o;
    o.cgroup = id->path;
    auto it = pods.by_uid.find(id->pod_uid);
    if (it == pods.by_uid.end()) {
      o.container = ContainerRef{"", id->pod_uid, id->container_id};
      return o;
    }
    auto c = it->second.containers.find(id->container_id);
    o.container = ContainerRef{it->second.namespace_name, it->second.name,
                               c == it->second.containers.end() ? id->container_id : c->second};
    return o;
  };
}

absl::StatusOr<Ownership> ParsePodResourcesJson(const std::string& text, const std::string& name,
                                                const std::map<int, std::string>& uuid_by_index) {
  Json doc = Json::parse(text, nullptr, false);
  const Json* pods = doc.is_discarded() ? nullptr : Field(doc, "podResources", "pod_resources");
  if (pods == nullptr || !pods->is_array()) {
    return absl::InvalidArgumentError(util::Cat(
        name, ": expected a PodResources List response in JSON: {\"podResources\": [...]}"));
  }
  Ownership own;
  for (const Json& p : *pods) {
    std::string ns = StringField(p, "namespace", "namespace");
    std::string pod = StringField(p, "name", "name");
    const Json* containers = Field(p, "containers", "containers");
    if (containers == nullptr || !containers->is_array()) continue;
    for (const Json& c : *containers) {
      ContainerRef who{ns, pod, StringField(c, "name", "name")};
      if (const Json* devices = Field(c, "devices", "devices"); devices && devices->is_array()) {
        for (const Json& d : *devices) {
          const Json* ids = Field(d, "deviceIds", "device_ids");
          if (ids == nullptr || !ids->is_array()) continue;
          for (const Json& id : *ids) {
            if (!id.is_string()) continue;
            std::string uuid = id.get<std::string>();
            uuid = uuid.substr(0, uuid.find("::"));  // time-slicing replica suffix
            own.owners[uuid].push_back(who);
          }
        }
      }
      const Json* dynamic = Field(c, "dynamicResources", "dynamic_resources");
      if (dynamic == nullptr || !dynamic->is_array()) continue;
      for (const Json& dr : *dynamic) {
        const Json* results = Field(dr, "claimResources", "claim_resources");
        if (results == nullptr || !results->is_array()) continue;
        for (const Json& r : *results) {
          std::string device = StringField(r, "deviceName", "device_name");
          if (device.rfind("gpu-", 0) != 0 || device.find("-mig-") != std::string::npos) continue;
          try {
            size_t used = 0;
            int index = std::stoi(device.substr(4), &used);
            auto it = uuid_by_index.find(index);
            if (used + 4 == device.size() && it != uuid_by_index.end()) {
              own.owners[it->second].push_back(who);
            }
          } catch (const std::exception&) {
          }
        }
      }
    }
  }
  return own;
}

absl::StatusOr<Prices> ParsePrices(const std::string& text, const std::string& name) {
  Prices prices;
  if (text.size() > (1 << 20)) {
    return absl::InvalidArgumentError(util::Cat(name, ": a price list over 1 MiB is not one"));
  }
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(util::Cat(
          name, ": expected a map of GPU model (as NVML names it) to price per GPU-hour"));
    }
    for (const auto& kv : root) {
      std::string model = kv.first.as<std::string>();
      double price = 0;
      if (!YAML::convert<double>::decode(kv.second, price) || !(price >= 0)) {
        return absl::InvalidArgumentError(util::Cat(name, ":", kv.second.Mark().line + 1,
                                                    ": price of \"", model,
                                                    "\" must be a non-negative number"));
      }
      if (model == "default") {
        prices.default_price = price;
      } else {
        prices.per_gpu_hour[model] = price;
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(util::Cat(name, ":", e.mark.line + 1, ": ", e.msg));
  }
  return prices;
}

}  // namespace gpuplane::acct
