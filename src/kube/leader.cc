#include "kube/leader.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kube/json_field.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

using Clock = std::chrono::steady_clock;

// RFC 3339 with microseconds in UTC, the MicroTime format of Lease times.
std::string MicroTimeNow() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone());
}

}  // namespace

LeaderElector::LeaderElector(Client client, LeaderOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

std::string LeaderElector::LeasePath(bool collection) const {
  std::string p =
      util::Cat("/apis/coordination.k8s.io/v1/namespaces/", options_.lease_namespace, "/leases");
  return collection ? p : util::Cat(p, "/", options_.lease_name);
}

void LeaderElector::SetLeading(bool leading) {
  if (leading_.exchange(leading) == leading) return;
  if (leading) {
    ++acquisitions_;
    if (options_.on_started_leading) options_.on_started_leading();
  } else if (options_.on_stopped_leading) {
    options_.on_stopped_leading();
  }
}

LeaderElector::Outcome LeaderElector::TryAcquireOrRenew() {
  const int duration = static_cast<int>(std::ceil(options_.lease_seconds));
  std::string now = MicroTimeNow();
  absl::StatusOr<Response> got = client_.Get(LeasePath(false));
  if (!got.ok() || (got->status != 200 && got->status != 404)) return Outcome::kFailed;
  if (got->status == 404) {
    nlohmann::json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
        {"spec",
         {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", duration},
          {"acquireTime", now},
          {"renewTime", now},
          {"leaseTransitions", 0}}}};
    absl::StatusOr<Response> r = client_.Do("POST", LeasePath(true), lease.dump());
    if (r.ok() && r->status == 201) return Outcome::kHeld;
    return r.ok() && r->status == 409 ? Outcome::kNotOurs : Outcome::kFailed;
  }
  nlohmann::json lease = nlohmann::json::parse(got->body, nullptr, false);
  if (!lease.is_object()) return Outcome::kFailed;
  // Read without trusting types (json_field.h): a member of another type reads as missing.
  nlohmann::json& spec = lease["spec"];
  if (!spec.is_object()) spec = nlohmann::json::object();
  auto integer = [&](const char* key, int64_t missing) {
    return spec.contains(key) && spec[key].is_number_integer() ? spec[key].get<int64_t>() : missing;
  };
  std::string holder(Str(spec, "holderIdentity"));
  std::string record = util::Cat(holder, "|", Str(spec, "renewTime"));
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = Clock::now();
  }
  const int64_t held_for = integer("leaseDurationSeconds", duration);
  bool expired = Clock::now() > observed_at_ + std::chrono::seconds(held_for);
  bool ours = holder == options_.identity;
  if (!ours && !holder.empty() && !expired) return Outcome::kNotOurs;
  if (!ours) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = integer("leaseTransitions", 0) + 1;
  }
  spec["holderIdentity"] = options_.identity;
  spec["leaseDurationSeconds"] = duration;
  spec["renewTime"] = now;
  // The PUT carries metadata.resourceVersion: a concurrent writer makes it fail with 409.
  absl::StatusOr<Response> r = client_.Do("PUT", LeasePath(false), lease.dump());
  if (r.ok() && r->status == 200) {
    nlohmann::json put = nlohmann::json::parse(r->body, nullptr, false);
    if (put.is_object()) {
      observed_record_ = util::Cat(options_.identity, "|", now);
      observed_at_ = Clock::now();
    }
    return Outcome::kHeld;
  }
  return r.ok() && r->status == 409 ? Outcome::kNotOurs : Outcome::kFailed;
}

void LeaderElector::Release() {
  absl::StatusOr<Response> got = client_.Get(LeasePath(false));
  if (!got.ok() || got->status != 200) return;
  nlohmann::json lease = nlohmann::json::parse(got->body, nullptr, false);
  if (Str(Field(lease, "spec"), "holderIdentity") != options_.identity) return;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = MicroTimeNow();
  (void)client_.Do("PUT", LeasePath(false), lease.dump());
}

void LeaderElector::Run() {
  auto retry = std::chrono::duration<double>(options_.retry_seconds);
  auto deadline = std::chrono::duration<double>(options_.renew_deadline);
  while (!stop_) {
    Outcome o = TryAcquireOrRenew();
    if (o == Outcome::kHeld) {
      last_renewed_ = Clock::now();
      SetLeading(true);
    } else if (o == Outcome::kNotOurs || Clock::now() - last_renewed_ > deadline) {
      SetLeading(false);  // someone else holds it, or renewals have failed too long
    }
    auto next = Clock::now() + std::chrono::duration_cast<Clock::duration>(retry);
    while (!stop_ && Clock::now() < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  bool was_leading = leading_;
  SetLeading(false);
  if (was_leading && release_) Release();
}

}  // namespace gpuplane::kube
