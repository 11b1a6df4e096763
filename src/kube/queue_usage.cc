#include "kube/queue_usage.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "sched/fair_share.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

constexpr char kKey[] = "usage.json";

std::string Rfc3339(double seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMicros(std::llround(seconds * 1e6)),
                          absl::UTCTimeZone());
}

absl::Status Bad(std::string_view source, std::string_view what) {
  return absl::InvalidArgumentError(
      util::Cat(source, ": ", what,
                "; fix or delete it (the scheduler then starts the queues' past use from zero)"));
}

// A finite, non-negative number at `j[key]`.
std::optional<double> Amount(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::string WriteQueueUsage(const QueueUsage& u) {
  nlohmann::ordered_json queues = nlohmann::ordered_json::object();
  for (const auto& [name, seconds] : u.gpu_seconds) {
    auto d = u.devices.find(name);
    queues[name] = {{"gpuSeconds", seconds}, {"devices", d == u.devices.end() ? 0.0 : d->second}};
  }
  for (const auto& [name, devices] : u.devices) {
    if (!u.gpu_seconds.contains(name)) queues[name] = {{"gpuSeconds", 0.0}, {"devices", devices}};
  }
  nlohmann::ordered_json j = {{"savedAt", Rfc3339(u.saved_at)}, {"queues", queues}};
  if (!u.demand_peaks.empty()) {
    nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
    for (const auto& [hour, peak] : u.demand_peaks) peaks[std::to_string(hour)] = peak;
    j["demandPeaks"] = peaks;
  }
  return j.dump();
}

absl::StatusOr<QueueUsage> ReadQueueUsage(std::string_view text, std::string_view source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Bad(source, "is not a JSON object");
  QueueUsage u;
  auto at = j.find("savedAt");
  absl::Time t;
  std::string err;
  if (at == j.end() || !at->is_string() ||
      !absl::ParseTime(absl::RFC3339_full, at->get<std::string>(), &t, &err)) {
    return Bad(source, "savedAt is not an RFC 3339 time such as 2026-12-01T12:00:00Z");
  }
  u.saved_at = absl::ToDoubleSeconds(t - absl::UnixEpoch());
  // absl also reads "infinite-future"; a saved time is a real one after 1970.
  if (!std::isfinite(u.saved_at) || u.saved_at < 0 || u.saved_at > 1e11) {
    return Bad(source, "savedAt is not an RFC 3339 time such as 2026-12-01T12:00:00Z");
  }
  auto queues = j.find("queues");
  if (queues == j.end() || !queues->is_object()) {
    return Bad(source, "queues is not an object of queue names");
  }
  for (const auto& [name, q] : queues->items()) {
    std::optional<double> seconds = q.is_object() ? Amount(q, "gpuSeconds") : std::nullopt;
    std::optional<double> devices = q.is_object() ? Amount(q, "devices") : std::nullopt;
    if (!seconds || !devices) {
      return Bad(source, util::Cat("queues.", name,
                                   " needs gpuSeconds and devices, numbers at or above 0"));
    }
    u.gpu_seconds[name] = *seconds;
    u.devices[name] = *devices;
  }
  auto peaks = j.find("demandPeaks");
  if (peaks == j.end()) return u;
  if (!peaks->is_object()) return Bad(source, "demandPeaks is not an object of hours");
  for (const auto& [hour, peak] : peaks->items()) {
    int64_t h = 0;
    nlohmann::json value = {{"v", peak}};
    std::optional<double> v = Amount(value, "v");
    if (!absl::SimpleAtoi(hour, &h) || h < 0 || !v) {
      return Bad(source, util::Cat("demandPeaks.", hour,
                                   " needs an hour since 1970 and a number at or above 0"));
    }
    u.demand_peaks[h] = *v;
  }
  return u;
}

QueueUsage DecayedTo(const QueueUsage& u, double now, double half_life_seconds) {
  QueueUsage out = u;
  const double gap = std::max(0.0, now - u.saved_at);
  sched::DecayedUsage::AdvanceByName(out.gpu_seconds, out.devices, gap, half_life_seconds);
  out.saved_at = std::max(now, u.saved_at);
  return out;
}

QueueUsageStore::QueueUsageStore(Client client, std::string ns, std::string name)
    : client_(std::move(client)), ns_(std::move(ns)), name_(std::move(name)) {}

std::string QueueUsageStore::Path(bool collection) const {
  std::string p = util::Cat("/api/v1/namespaces/", ns_, "/configmaps");
  return collection ? p : util::Cat(p, "/", name_);
}

std::string QueueUsageStore::Describe() const { return util::Cat("ConfigMap ", ns_, "/", name_); }

absl::StatusOr<std::optional<QueueUsage>> QueueUsageStore::Load() const {
  absl::StatusOr<Response> r = client_.Get(Path(false));
  if (!r.ok()) return r.status();
  if (r->status == 404) return std::nullopt;
  if (!r->ok()) {
    return absl::UnavailableError(util::Cat("reading ", Describe(), ": HTTP ", r->status));
  }
  nlohmann::json cm = nlohmann::json::parse(r->body, nullptr, false);
  const std::string source = util::Cat(Describe(), " data.", kKey);
  if (!cm.is_object() || !cm.contains("data") || !cm["data"].is_object() ||
      !cm["data"].contains(kKey) || !cm["data"][kKey].is_string()) {
    return Bad(source, "is missing");
  }
  absl::StatusOr<QueueUsage> u = ReadQueueUsage(cm["data"][kKey].get<std::string>(), source);
  if (!u.ok()) return u.status();
  return std::optional<QueueUsage>(std::move(*u));
}

absl::Status QueueUsageStore::Save(const QueueUsage& u) const {
  nlohmann::json cm = {{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata", {{"name", name_}, {"namespace", ns_}}},
                       {"data", {{kKey, WriteQueueUsage(u)}}}};
  // Only the leader writes: a replace without resourceVersion; created when absent.
  absl::StatusOr<Response> r = client_.Do("PUT", Path(false), cm.dump());
  if (r.ok() && r->status == 404) r = client_.Do("POST", Path(true), cm.dump());
  if (!r.ok()) return r.status();
  if (!r->ok()) {
    return absl::UnavailableError(
        util::Cat("writing ", Describe(), ": HTTP ", r->status, ": ", r->body.substr(0, 200)));
  }
  return absl::OkStatus();
}

}  // namespace gpuplane::kube
