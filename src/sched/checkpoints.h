// What evicting a running job throws away: the work since its last checkpoint, plus the
// time to restore, on every GPU it holds (../shared/reference/preemption-and-checkpoints.md:
// L = g x [(t_preempt - t_last_ckpt) + restore]). A job says how it checkpoints in pod
// annotations: `gpuplane.io/checkpoint-interval` (a duration, "30m"),
// `gpuplane.io/last-checkpoint` (RFC 3339 time), `gpuplane.io/restore-seconds` (a number),
// `gpuplane.io/checkpoint-on-signal` (a duration: the job saves its state when it gets the
// termination signal and needs this long to; a victim whose grace period covers it loses only
// the restore, as with just-in-time checkpointing); and how long after it starts it is not a
// victim at all: `gpuplane.io/min-runtime` (a duration).
// Pure functions; thread-safe.
#ifndef GPUPLANE_SCHED_CHECKPOINTS_H_
#define GPUPLANE_SCHED_CHECKPOINTS_H_

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/meta.h"

namespace gpuplane::sched {

inline constexpr std::string_view kCheckpointIntervalAnnotation = "gpuplane.io/checkpoint-interval";
inline constexpr std::string_view kLastCheckpointAnnotation = "gpuplane.io/last-checkpoint";
inline constexpr std::string_view kRestoreSecondsAnnotation = "gpuplane.io/restore-seconds";
inline constexpr std::string_view kMinRuntimeAnnotation = "gpuplane.io/min-runtime";
inline constexpr std::string_view kCheckpointOnSignalAnnotation =
    "gpuplane.io/checkpoint-on-signal";

struct Checkpointing {
  double interval_seconds = 0;  // 0: the job does not say (nothing is assumed saved)
  double last_checkpoint = -1;  // seconds since 1970; -1: not known
  double restore_seconds = 0;
  double min_runtime_seconds = 0;   // 0: none
  double signal_save_seconds = -1;  // >= 0: it saves on the termination signal, taking this long
};

// An RFC 3339 time as seconds since 1970; nullopt when `text` is not one.
std::optional<double> UnixSeconds(std::string_view text);

// From the annotations; absent ones keep the defaults. Errors name the object, the annotation
// and its value, and say what form it takes.
absl::StatusOr<Checkpointing> CheckpointingOf(const api::ObjectMeta& meta);

// The last checkpoint at or before `now` of a job that started at `start`: the recorded one
// when known and not before the start, else the last whole interval since the start, else
// the start (nothing saved).
double LastCheckpoint(double now, double start, const Checkpointing& c);

// GPU-seconds lost by evicting a job of `gpus` GPUs at `now`:
// gpus x ((now - LastCheckpoint) + restore).
double LostGpuSeconds(int gpus, double now, double start, const Checkpointing& c);

// Whether a job given `grace` seconds between its termination signal and its kill saves its
// state in them.
bool SavesOnSignal(const Checkpointing& c, double grace);

// GPU-seconds lost by evicting a job of `gpus` GPUs that has `grace` seconds between its
// termination signal and its kill: gpus x restore when it saves on the signal within them,
// else LostGpuSeconds at `now` (the caller's choice of instant: the live scheduler's decision,
// the replay's end of the grace).
double LostGpuSecondsSignalled(int gpus, double now, double start, const Checkpointing& c,
                               double grace);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_CHECKPOINTS_H_
