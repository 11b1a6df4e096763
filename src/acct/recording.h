// GPU sample recordings: one JSON object per line, as `gpuplane agent --record` writes them
// and the replay sampler reads them (the format is in issue 6 and docs/ACCOUNTING.md):
//   {"t":..,"type":"device","uuid":"GPU-..","index":0,"model":"..","memory_total":N,
//    "memory_used":N,"util_gpu":0-100,"mig":false}
//   {"t":..,"type":"mig","parent_uuid":"GPU-..","uuid":"MIG-..","gpu_instance_id":N,
//    "profile":"1g.10gb","memory_total":N,"memory_used":N}
//   {"t":..,"type":"process","uuid":"GPU-..","pid":N,"used_memory":N,"gpu_instance_id":N|null}
//   {"t":..,"type":"process_util","uuid":"GPU-..","pid":N,"ts_us":N,"sm":0-100,"mem":0-100}
// Bad lines are reported as "file:line: ..." and skipped.
// Recordings are plain values; the parser is a pure function; thread-safe.
#ifndef GPUPLANE_ACCT_RECORDING_H_
#define GPUPLANE_ACCT_RECORDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::acct {

struct DeviceSample {
  double t = 0;
  std::string uuid;
  int index = 0;
  std::string model;
  int64_t memory_total = 0, memory_used = 0;
  int util_gpu = 0;  // percent of the sample period with a kernel running
  bool mig = false;
};

struct MigSample {
  double t = 0;
  std::string parent_uuid, uuid;
  int gpu_instance_id = 0;
  std::string profile;
  int64_t memory_total = 0, memory_used = 0;
};

struct ProcessSample {
  double t = 0;
  std::string uuid;
  int64_t pid = 0;
  int64_t used_memory = 0;
  std::optional<int> gpu_instance_id;
};

struct ProcessUtilSample {
  double t = 0;
  std::string uuid;
  int64_t pid = 0;
  int64_t ts_us = 0;  // end of the driver sample period this covers
  int sm = 0, mem = 0;
};

struct Recording {
  std::vector<DeviceSample> devices;
  std::vector<MigSample> migs;
  std::vector<ProcessSample> processes;
  std::vector<ProcessUtilSample> process_utils;
  double first_t = 0, last_t = 0;  // over every record
  std::vector<std::string> problems;
};

absl::StatusOr<Recording> ReadRecording(const std::string& path);
Recording ParseRecording(const std::string& text, const std::string& name);

// One line of the format, for writers (the agent's --record and the synthetic sampler).
std::string ToJsonLine(const DeviceSample& s);
std::string ToJsonLine(const MigSample& s);
std::string ToJsonLine(const ProcessSample& s);
std::string ToJsonLine(const ProcessUtilSample& s);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_RECORDING_H_
