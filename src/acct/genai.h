// Real per-pod GPU usage profiles for the synthetic sampler: the Alibaba GenAI serving trace
// in ../shared/data/genai (pod_gpu_duty_cycle_anon.tar.gz, pod_gpu_memory_used_bytes_anon.tar.gz:
// gzip'd tar archives of CSV files `value,timestamp_anon,container_ip` and
// `timestamp_anon,value,container_ip`), joined by container_ip into one series per pod.
// Pure functions returning values (archives are read whole, up to a size limit); thread-safe.
// Errors name the file and what is wrong with it.
#ifndef GPUPLANE_ACCT_GENAI_H_
#define GPUPLANE_ACCT_GENAI_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuplane::acct {

struct UsageProfile {
  std::string id;              // container_ip (a hash)
  std::vector<double> duty;    // fraction of time busy, 0-1, one per trace sample
  std::vector<double> memory;  // bytes used, same samples
};

// The regular files of a tar archive (ustar / GNU), by name. Refuses truncated or corrupt
// headers with the archive's name and the offset.
absl::StatusOr<std::map<std::string, std::string>> ParseTar(const std::string& bytes,
                                                            const std::string& name);
// Decompresses a .gz file (at most `limit` bytes out).
absl::StatusOr<std::string> ReadGzip(const std::string& path, size_t limit = size_t{1} << 30);

// Joins the two CSVs; keeps pods with at least `min_samples` samples in both. Malformed rows
// are counted in `bad_rows` and skipped.
std::vector<UsageProfile> JoinGenaiCsv(const std::string& duty_csv, const std::string& memory_csv,
                                       size_t min_samples, size_t* bad_rows);

// Both archives from `dir`; a NotFound error when they are absent.
absl::StatusOr<std::vector<UsageProfile>> LoadGenaiProfiles(const std::string& dir,
                                                            size_t min_samples = 60);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_GENAI_H_
