#include "sched/checkpoints.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "absl/time/time.h"
#include "util/duration.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

absl::Status Bad(const api::ObjectMeta& meta, std::string_view annotation, const std::string& value,
                 std::string_view form) {
  return absl::InvalidArgumentError(
      util::Cat(meta.namespace_name.empty() ? "" : meta.namespace_name + "/", meta.name,
                ": annotation ", annotation, ": \"", value, "\" is not ", form));
}

}  // namespace

std::optional<double> UnixSeconds(std::string_view text) {
  absl::Time t;
  std::string err;
  if (text.empty() || !absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return std::nullopt;
  }
  return absl::ToDoubleSeconds(t - absl::UnixEpoch());
}

absl::StatusOr<Checkpointing> CheckpointingOf(const api::ObjectMeta& meta) {
  Checkpointing c;
  auto find = [&](std::string_view key) -> const std::string* {
    auto it = meta.annotations.find(std::string(key));
    return it == meta.annotations.end() ? nullptr : &it->second;
  };
  if (const std::string* v = find(kCheckpointIntervalAnnotation)) {
    std::optional<double> s = util::PositiveDurationSeconds(*v, false);
    if (!s) {
      return Bad(meta, kCheckpointIntervalAnnotation, *v,
                 "a positive duration such as 30m or 1h30m");
    }
    c.interval_seconds = *s;
  }
  if (const std::string* v = find(kLastCheckpointAnnotation)) {
    std::optional<double> t = UnixSeconds(*v);
    if (!t) {
      return Bad(meta, kLastCheckpointAnnotation, *v,
                 "an RFC 3339 time such as 2026-12-01T10:00:00Z");
    }
    c.last_checkpoint = *t;
  }
  if (const std::string* v = find(kMinRuntimeAnnotation)) {
    std::optional<double> s = util::PositiveDurationSeconds(*v, true);
    if (!s) return Bad(meta, kMinRuntimeAnnotation, *v, "a duration such as 30m or 2h");
    c.min_runtime_seconds = *s;
  }
  if (const std::string* v = find(kCheckpointOnSignalAnnotation)) {
    std::optional<double> s = util::PositiveDurationSeconds(*v, true);
    if (!s) {
      return Bad(meta, kCheckpointOnSignalAnnotation, *v,
                 "a duration such as 30s or 2m (how long the job needs to save on the "
                 "termination signal)");
    }
    c.signal_save_seconds = *s;
  }
  if (const std::string* v = find(kRestoreSecondsAnnotation)) {
    double s = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), s);
    if (ec != std::errc() || ptr != v->data() + v->size() || v->empty() || !std::isfinite(s) ||
        s < 0) {
      return Bad(meta, kRestoreSecondsAnnotation, *v, "a non-negative number of seconds");
    }
    c.restore_seconds = s;
  }
  return c;
}

double LastCheckpoint(double now, double start, const Checkpointing& c) {
  if (c.last_checkpoint >= start && c.last_checkpoint <= now) return c.last_checkpoint;
  if (c.interval_seconds > 0 && now > start) {
    return start + std::floor((now - start) / c.interval_seconds) * c.interval_seconds;
  }
  return std::min(start, now);
}

double LostGpuSeconds(int gpus, double now, double start, const Checkpointing& c) {
  return gpus * ((now - LastCheckpoint(now, start, c)) + c.restore_seconds);
}

bool SavesOnSignal(const Checkpointing& c, double grace) {
  return c.signal_save_seconds >= 0 && c.signal_save_seconds <= grace;
}

double LostGpuSecondsSignalled(int gpus, double now, double start, const Checkpointing& c,
                               double grace) {
  if (SavesOnSignal(c, grace)) return gpus * c.restore_seconds;
  return LostGpuSeconds(gpus, now, start, c);
}

}  // namespace gpuplane::sched
