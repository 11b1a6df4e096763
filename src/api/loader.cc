#include "api/loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "api/internal/queue_checks.h"
#include "util/strings.h"

namespace gpuplane::api {
namespace {

namespace fs = std::filesystem;

bool IsObjectFile(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

Diagnostic At(const SourcedObject& o, std::string field, std::string message, bool error = true) {
  return Diagnostic{error ? Diagnostic::Severity::kError : Diagnostic::Severity::kWarning,
                    o.file,
                    o.line,
                    Label(o.object),
                    std::move(field),
                    std::move(message)};
}

void CheckDuplicateObjects(const ObjectRefs& objects, std::vector<Diagnostic>& out) {
  // Hashed, not ordered: a live scheduler checks every cached object each cycle.
  absl::flat_hash_map<std::tuple<std::string_view, std::string_view, std::string_view>,
                      const SourcedObject*>
      seen;
  seen.reserve(objects.size());
  for (const SourcedObject* p : objects) {
    const SourcedObject& o = *p;
    const ObjectMeta& m = MetaOf(o.object);
    if (m.name.empty()) continue;
    auto [it, inserted] = seen.try_emplace({KindOf(o.object), m.namespace_name, m.name}, &o);
    if (!inserted) {
      out.push_back(At(o, "metadata.name",
                       util::Cat("duplicate object: also defined at ", it->second->file, ":",
                                 it->second->line)));
    }
  }
}

struct PoolKey {
  std::string driver;
  std::string pool;
  bool operator<(const PoolKey& o) const {
    return std::tie(driver, pool) < std::tie(o.driver, o.pool);
  }
};

// Pools: the highest generation counts; device names must be unique within it, and devices'
// counter consumption must name counter sets (and counters) the pool defines once complete.
void CheckPools(const ObjectRefs& objects, std::vector<Diagnostic>& out) {
  std::map<PoolKey, int64_t> generation;
  for (const SourcedObject* o : objects) {
    if (const auto* s = std::get_if<ResourceSlice>(&o->object)) {
      int64_t& g =
          generation.try_emplace({s->spec.driver, s->spec.pool.name}, s->spec.pool.generation)
              .first->second;
      g = std::max(g, s->spec.pool.generation);
    }
  }
  struct PoolState {
    std::map<std::string_view, const SourcedObject*> devices;  // name -> its slice
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> counter_sets;
    int64_t slices = 0;
    int64_t expected = 0;
  };
  std::map<PoolKey, PoolState> pools;
  for (const SourcedObject* ref : objects) {
    const SourcedObject& o = *ref;
    const auto* s = std::get_if<ResourceSlice>(&o.object);
    if (s == nullptr) continue;
    PoolKey key{s->spec.driver, s->spec.pool.name};
    if (s->spec.pool.generation != generation[key]) continue;
    PoolState& p = pools[key];
    ++p.slices;
    p.expected = s->spec.pool.resource_slice_count;
    for (const CounterSet& cs : s->spec.shared_counters) {
      auto& names = p.counter_sets[cs.name];
      for (const auto& [c, unused] : cs.counters) names.insert(c);
    }
    for (size_t i = 0; i < s->spec.devices.size(); ++i) {
      const std::string& name = s->spec.devices[i].name;
      auto [it, inserted] = p.devices.try_emplace(name, &o);
      if (!inserted) {
        out.push_back(At(
            o, util::Cat("spec.devices[", i, "].name"),
            util::Cat("duplicate device name \"", name, "\" in pool \"", key.pool,
                      "\" (also in the slice at ", it->second->file, ":", it->second->line, ")")));
      }
    }
  }
  for (const SourcedObject* ref : objects) {
    const SourcedObject& o = *ref;
    const auto* s = std::get_if<ResourceSlice>(&o.object);
    if (s == nullptr) continue;
    PoolKey key{s->spec.driver, s->spec.pool.name};
    const PoolState& p = pools[key];
    if (s->spec.pool.generation != generation[key] || p.slices < p.expected) continue;
    for (size_t i = 0; i < s->spec.devices.size(); ++i) {
      const auto& consumes = s->spec.devices[i].consumes_counters;
      for (size_t j = 0; j < consumes.size(); ++j) {
        std::string field = util::Cat("spec.devices[", i, "].consumesCounters[", j, "]");
        auto set = p.counter_sets.find(consumes[j].counter_set);
        if (set == p.counter_sets.end()) {
          out.push_back(At(o, field + ".counterSet",
                           "counter set \"" + consumes[j].counter_set +
                               "\" is not defined in pool \"" + key.pool + "\""));
          continue;
        }
        for (const auto& [c, unused] : consumes[j].counters) {
          if (!set->second.contains(c)) {
            out.push_back(At(o, util::Cat(field, ".counters[\"", c, "\"]"),
                             util::Cat("counter set \"", consumes[j].counter_set,
                                       "\" has no counter \"", c, "\"")));
          }
        }
      }
    }
  }
}

void CheckClassReferences(const ObjectRefs& objects, std::vector<Diagnostic>& out) {
  std::set<std::string_view, std::less<>> classes;
  for (const SourcedObject* o : objects) {
    if (const auto* c = std::get_if<DeviceClass>(&o->object)) classes.insert(c->metadata.name);
  }
  bool have_classes = !classes.empty();
  auto check = [&](const SourcedObject& o, const ResourceClaimSpec& spec,
                   const std::string& prefix) {
    const auto& requests = spec.devices.requests;
    for (size_t i = 0; i < requests.size(); ++i) {
      std::string base = util::Cat(prefix, "spec.devices.requests[", i, "]");
      auto one = [&](const ExactDeviceRequest& e, const std::string& field) {
        if (e.device_class_name.empty() || classes.contains(e.device_class_name)) return;
        out.push_back(At(o, field + ".deviceClassName",
                         have_classes
                             ? "DeviceClass \"" + e.device_class_name +
                                   "\" is not defined in the inputs (add it, or fix the name)"
                             : "DeviceClass \"" + e.device_class_name +
                                   "\" cannot be checked: no DeviceClass is among the inputs",
                         have_classes));
      };
      if (requests[i].exactly) one(*requests[i].exactly, base + ".exactly");
      for (size_t j = 0; j < requests[i].first_available.size(); ++j) {
        one(requests[i].first_available[j], util::Cat(base, ".firstAvailable[", j, "]"));
      }
    }
  };
  for (const SourcedObject* o : objects) {
    if (const auto* c = std::get_if<ResourceClaim>(&o->object)) check(*o, c->spec, "");
    if (const auto* t = std::get_if<ResourceClaimTemplate>(&o->object)) {
      check(*o, t->spec.spec, "spec.");
    }
  }
}

}  // namespace

absl::Status Loader::AddPath(const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return absl::NotFoundError(path + ": no such file or directory");
  if (!fs::is_directory(st)) {
    AddFile(path);
    return absl::OkStatus();
  }
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && IsObjectFile(it->path())) files.push_back(it->path().string());
  }
  if (ec) return absl::InvalidArgumentError(path + ": cannot list directory: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) AddFile(f);
  return absl::OkStatus();
}

void Loader::AddFile(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) {
    result_.diagnostics.push_back(Diagnostic{Diagnostic::Severity::kError, path, 0, "", "",
                                             std::string(text.status().message())});
    return;
  }
  AddText(*text, path, DetectFormat(path, *text));
}

void Loader::AddText(std::string_view text, std::string_view file, Format format) {
  absl::StatusOr<std::vector<Doc>> docs = ReadDocs(text, file, format);
  if (!docs.ok()) {
    // The reader's message already starts with "file:line:col: ".
    result_.diagnostics.push_back(Diagnostic{Diagnostic::Severity::kError, "", 0, "", "",
                                             std::string(docs.status().message())});
    return;
  }
  for (const Doc& doc : *docs) {
    for (SourcedObject& o : DecodeObjects(doc, file, result_.diagnostics)) {
      result_.objects.push_back(std::move(o));
    }
  }
}

void CheckAcross(const ObjectRefs& objects, std::vector<Diagnostic>& out) {
  CheckDuplicateObjects(objects, out);
  CheckPools(objects, out);
  CheckClassReferences(objects, out);
  internal::CheckQueues(objects, out);
}

LoadResult Loader::Finish() {
  CheckAcross(RefsOf(result_.objects), result_.diagnostics);
  return std::move(result_);
}

absl::StatusOr<LoadResult> LoadPaths(const std::vector<std::string>& paths) {
  Loader loader;
  for (const std::string& p : paths) {
    if (absl::Status s = loader.AddPath(p); !s.ok()) return s;
  }
  return loader.Finish();
}

}  // namespace gpuplane::api
