#include "kube/informer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "kube/json_field.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += util::Cat("%", "0123456789ABCDEF"[c >> 4], "0123456789ABCDEF"[c & 15]);
    }
  }
  return out;
}

bool Permanent(long status) {  // NOLINT(google-runtime-int): curl's type
  return status == 401 || status == 403 || status == 404 || status == 405;
}

// A permanent refusal (`what` names the request and the server's message), with what to do.
absl::Status Refused(const std::string& what, long status) {  // NOLINT(google-runtime-int)
  if (status == 401) {
    return absl::PermissionDeniedError(util::Cat(
        what,
        " (the API server did not accept the credentials: check the kubeconfig's user, or "
        "the service account token)"));
  }
  if (status == 403) {
    return absl::PermissionDeniedError(
        util::Cat(what,
                  " (this user may not list and watch the resource: gpuplane needs the ClusterRole "
                  "in deploy/scheduler/rbac.yaml, and a newer gpuplane may read resources an older "
                  "copy of it does not grant)"));
  }
  return absl::PermissionDeniedError(what);
}

// The server keeps an object's managedFields when an update leaves them out, and nothing in
// gpuplane reads them.
void StripManagedFields(nlohmann::json& object) {
  if (!object.is_object()) return;
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) meta->erase("managedFields");
}

// An API object as the cache keeps them: a JSON object with a name (every object the server
// sends has one; anything else would be cached under an empty key).
bool IsObject(const nlohmann::json& object) {
  return object.is_object() && !Str(Field(object, "metadata"), "name").empty();
}

}  // namespace

Informer::Informer(Client client, InformerOptions options, Handler handler)
    : client_(std::move(client)), options_(std::move(options)), handler_(std::move(handler)) {}

std::string Informer::KeyOf(const nlohmann::json& object) {
  const nlohmann::json& meta = Field(object, "metadata");
  std::string_view ns = Str(meta, "namespace"), name = Str(meta, "name");
  return ns.empty() ? std::string(name) : util::Cat(ns, "/", name);
}

int64_t Informer::VersionOf(const nlohmann::json& object) {
  std::string_view rv = Str(Field(object, "metadata"), "resourceVersion");
  int64_t v = -1;
  if (rv.empty() || !absl::SimpleAtoi(absl::string_view(rv.data(), rv.size()), &v)) return -1;
  return v;
}

Informer::Cached Informer::Cache(nlohmann::json object) {
  const int64_t version = VersionOf(object);
  return Cached{std::make_shared<const nlohmann::json>(std::move(object)), version};
}

bool Informer::Has(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return objects_.contains(key);
}

std::optional<nlohmann::json> Informer::Get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  return *it->second.object;
}

std::vector<nlohmann::json> Informer::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<nlohmann::json> out;
  out.reserve(objects_.size());
  for (const auto& [key, c] : objects_) out.push_back(*c.object);
  return out;
}

std::vector<Informer::Keyed> Informer::Shared() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Keyed> out;
  out.reserve(objects_.size());
  for (const auto& [key, c] : objects_) out.push_back(Keyed{key, c.object, c.version});
  return out;
}

std::string Informer::ResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rv_;
}

std::string Informer::Query(bool watch, const std::string& cont) const {
  std::string q = options_.path;
  char sep = '?';
  auto add = [&](const std::string& k, const std::string& v) {
    util::Append(q, sep, k, "=", Escape(v));
    sep = '&';
  };
  if (!options_.label_selector.empty()) add("labelSelector", options_.label_selector);
  if (!options_.field_selector.empty()) add("fieldSelector", options_.field_selector);
  if (watch) {
    add("watch", "1");
    add("allowWatchBookmarks", "true");
    add("resourceVersion", ResourceVersion());
    add("timeoutSeconds", std::to_string(static_cast<int>(options_.watch_seconds)));
  } else {
    add("limit", std::to_string(options_.page_size));
    if (!cont.empty()) add("continue", cont);
  }
  return q;
}

void Informer::Apply(EventType type, nlohmann::json object) {
  StripManagedFields(object);
  std::string key = KeyOf(object);
  Cached c = Cache(std::move(object));
  std::shared_ptr<const nlohmann::json> shared = c.object;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (type == EventType::kDeleted) {
      objects_.erase(key);
    } else {
      objects_[key] = std::move(c);
    }
    std::string_view rv = Str(Field(*shared, "metadata"), "resourceVersion");
    if (!rv.empty()) rv_ = rv;
  }
  if (handler_) handler_(type, *shared);
}

absl::Status Informer::ListAll() {
  std::map<std::string, Cached> fresh;
  std::string cont, rv;
  do {
    absl::StatusOr<Response> r = client_.Get(Query(false, cont));
    if (!r.ok()) return r.status();
    if (!r->ok()) {
      absl::Status s = absl::UnavailableError(
          util::Cat("listing ", options_.path, ": HTTP ", r->status, ": ", StatusMessage(*r)));
      if (r->status == 404) return absl::NotFoundError(s.message());  // a kind not served
      if (Permanent(r->status)) return Refused(std::string(s.message()), r->status);
      return s;  // 410 here is an expired continue token: Run() lists again from the start
    }
    nlohmann::json page = nlohmann::json::parse(r->body, nullptr, false);
    if (!page.is_object() || !page.contains("items") || !page["items"].is_array()) {
      return absl::UnavailableError(util::Cat("listing ", options_.path, ": not a list"));
    }
    for (nlohmann::json& item : page["items"]) {
      if (!IsObject(item)) continue;  // not an API object: nothing to cache
      StripManagedFields(item);
      std::string key = KeyOf(item);
      fresh[std::move(key)] = Cache(std::move(item));
    }
    const nlohmann::json& meta = Field(page, "metadata");
    cont = Str(meta, "continue");
    if (std::string_view v = Str(meta, "resourceVersion"); !v.empty()) rv = v;
  } while (!cont.empty() && !stop_);
  // What changed since the cache was last current, for the handler.
  std::vector<std::pair<EventType, std::shared_ptr<const nlohmann::json>>> changes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, c] : objects_) {
      if (!fresh.contains(key)) changes.emplace_back(EventType::kDeleted, c.object);
    }
    for (const auto& [key, c] : fresh) {
      auto old = objects_.find(key);
      if (old == objects_.end()) {
        changes.emplace_back(EventType::kAdded, c.object);
      } else if (*old->second.object != *c.object) {
        changes.emplace_back(EventType::kModified, c.object);
      }
    }
    objects_ = std::move(fresh);
    rv_ = rv;
  }
  ++lists_;
  synced_ = true;
  served_ = true;
  if (handler_) {
    for (const auto& [type, obj] : changes) handler_(type, *obj);
  }
  return absl::OkStatus();
}

bool Informer::ApplyWatchLine(std::string_view line, int* error_code) {
  nlohmann::json ev = nlohmann::json::parse(line, nullptr, false);
  if (!ev.is_object()) return true;  // not an event: skip it
  const std::string type(Str(ev, "type"));
  nlohmann::json obj = ev.contains("object") ? std::move(ev["object"]) : nlohmann::json::object();
  if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
    if (!IsObject(obj)) return true;  // not an API object: nothing to cache
    Apply(type == "ADDED"      ? EventType::kAdded
          : type == "MODIFIED" ? EventType::kModified
                               : EventType::kDeleted,
          std::move(obj));
  } else if (type == "BOOKMARK") {
    std::string_view rv = Str(Field(obj, "metadata"), "resourceVersion");
    std::lock_guard<std::mutex> lock(mu_);
    if (!rv.empty()) rv_ = rv;
  } else if (type == "ERROR") {
    const nlohmann::json& code = Field(obj, "code");
    // -1: the event says nothing usable; the caller backs off.
    *error_code = code.is_number_integer() && code.get<int64_t>() > 0 && code.get<int64_t>() < 1000
                      ? static_cast<int>(code.get<int64_t>())
                      : -1;
    return false;
  }
  return true;
}

absl::StatusOr<bool> Informer::WatchOnce() {
  ++watches_;
  int error_code = 0;  // of an ERROR event: 410 means the version is gone
  auto on_line = [&](std::string_view line) {
    if (!ApplyWatchLine(line, &error_code)) return false;
    backoff_ = 0;  // events flow again
    if (troubled_) ClearTrouble();
    return !stop_.load();
  };
  absl::StatusOr<Response> r =
      client_.Stream(Query(true, ""), on_line, options_.watch_seconds + 30, &stop_);
  if (!r.ok()) return r.status();
  if (r->status == 410) return false;
  if (r->status != 200 && r->status != 0) {
    std::string what =
        util::Cat("watching ", options_.path, ": HTTP ", r->status, ": ", StatusMessage(*r));
    if (r->status == 404) return absl::NotFoundError(what);  // the kind is gone (CRD deleted)
    if (Permanent(r->status)) return Refused(what, r->status);
    return absl::UnavailableError(what);
  }
  if (error_code != 0 && error_code != 410) {  // back off, then resume: never spin on errors
    return absl::UnavailableError(
        util::Cat("watching ", options_.path, ": the server sent an error event ", error_code));
  }
  return error_code != 410;
}

void Informer::Backoff() {
  backoff_ = backoff_ == 0 ? 0.2 : std::min(backoff_ * 2, 10.0);
  for (double waited = 0; waited < backoff_ && !stop_; waited += 0.05) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string Informer::Trouble() const {
  if (!troubled_) return "";
  std::lock_guard<std::mutex> lock(mu_);
  return trouble_;
}

void Informer::NoteTrouble(const absl::Status& s) {
  ++failures_;
  std::lock_guard<std::mutex> lock(mu_);
  trouble_ = std::string(s.message());
  troubled_ = true;
}

void Informer::ClearTrouble() {
  std::lock_guard<std::mutex> lock(mu_);
  trouble_.clear();
  troubled_ = false;
}

void Informer::Clear() {
  std::map<std::string, Cached> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    gone.swap(objects_);
    rv_.clear();
  }
  served_ = false;
  if (handler_) {
    for (const auto& [key, c] : gone) handler_(EventType::kDeleted, *c.object);
  }
}

absl::Status Informer::Run() {
  bool need_list = true;
  // Since when the server has answered 404 for a kind it served before.
  std::optional<std::chrono::steady_clock::time_point> missing_since;
  while (!stop_) {
    if (need_list) {
      absl::Status s = ListAll();
      if (s.code() == absl::StatusCode::kNotFound) {
        const auto now = std::chrono::steady_clock::now();
        if (synced_ && served_ && !missing_since) missing_since = now;
        if (!missing_since ||
            now - *missing_since >= std::chrono::duration<double>(options_.gone_after_seconds)) {
          Clear();
          return s;
        }
      } else {
        missing_since.reset();  // 404s in a row count, not 404s around an outage
      }
      if (s.code() == absl::StatusCode::kPermissionDenied) return s;
      if (!s.ok()) {
        if (s.code() != absl::StatusCode::kNotFound) NoteTrouble(s);
        Backoff();
        continue;
      }
      need_list = false;
      if (troubled_) ClearTrouble();
    }
    absl::StatusOr<bool> w = WatchOnce();
    if (!w.ok()) {
      if (w.status().code() == absl::StatusCode::kPermissionDenied) return w.status();
      // 404: the kind may be gone; listing tells (above). Else the connection broke: resume
      // from the last version seen.
      need_list = w.status().code() == absl::StatusCode::kNotFound;
      if (!need_list) NoteTrouble(w.status());
      Backoff();
      continue;
    }
    if (troubled_) ClearTrouble();
    need_list = !*w;
  }
  return absl::OkStatus();
}

}  // namespace gpuplane::kube
