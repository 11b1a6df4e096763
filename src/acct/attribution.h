// Per-container GPU usage and cost from a recording (docs/ACCOUNTING.md):
// - a GPU allocated to exactly one container (no sharing): all of its usage is the owner's;
// - a shared GPU (time-slicing, MPS): compute per container is the integral of its processes'
//   `sm` samples over their sample periods (GPU-seconds of SM time); memory is its processes'
//   used memory; busy time that no process sample explains is `unattributed`, never spread;
// - MIG: each instance's usage goes to the instance's owner; memory per process per instance.
// Cost: each device's cost over the recording (price per GPU-hour x duration) is split so that
// pods + idle = device exactly (integer nano-dollars): each container pays the device's cost
// per second times its compute seconds; the rest (idle and unattributed time) is split among
// the device's owners by their allocation (time-slicing replicas count one each), or stays
// with the device as idle cost when nobody owns it. A MIG GPU's cost is split among its
// instances by memory size first.
// Processes that belong to no pod, or to a container that was not allocated the GPU, are
// audit findings (with their evidence) and are not charged to anyone.
// Attribution is a pure function of a recording, ownership, a PID resolver and prices, all
// borrowed for the call; results are values. Thread-safe for distinct arguments (the resolver
// is called from the calling thread only).
#ifndef GPUPLANE_ACCT_ATTRIBUTION_H_
#define GPUPLANE_ACCT_ATTRIBUTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "acct/recording.h"

namespace gpuplane::acct {

struct ContainerRef {
  std::string namespace_name, pod, container;
  bool operator==(const ContainerRef&) const = default;
  bool operator<(const ContainerRef& o) const {
    return std::tie(namespace_name, pod, container) <
           std::tie(o.namespace_name, o.pod, o.container);
  }
};

// Which containers were allocated which device: GPU UUIDs and MIG UUIDs (time-slicing
// replicas `<uuid>::<n>` are one entry each for the same UUID).
struct Ownership {
  std::map<std::string, std::vector<ContainerRef>> owners;
};

// What a PID runs in: the container, plus the cgroup path as evidence; nullopt for no pod.
// `unknown`: the process could not be looked up (it exited, or /proc is not visible); its
// usage is neither charged nor reported as an isolation finding, and stays unattributed.
struct ProcessOwner {
  ContainerRef container;
  std::string cgroup;
  bool unknown = false;
};
using PidResolver = std::function<std::optional<ProcessOwner>(int64_t pid)>;

struct Prices {
  std::map<std::string, double> per_gpu_hour;  // by model name as NVML reports it
  std::optional<double> default_price;
  double For(const std::string& model) const;
};

struct PodUsage {
  ContainerRef who;
  std::string gpu_uuid;
  std::string mig_instance;  // MIG UUID, or empty
  double sm_seconds = 0;
  double memory_byte_seconds = 0;
  int64_t max_memory_bytes = 0;
  int64_t cost_nano = 0;  // nano-dollars
};

struct DeviceUsage {
  std::string gpu_uuid, model;
  bool shared = false, mig = false;
  double busy_seconds = 0;
  double unattributed_sm_seconds = 0;
  int64_t idle_cost_nano = 0;
  int64_t cost_nano = 0;
};

// A process using a device it may not be charged on (the NVIDIA_VISIBLE_DEVICES escape, or
// no pod at all), with what it used there: the device's owner still pays for the device, but
// the use is reported, not lost.
struct AuditFinding {
  int64_t pid = 0;
  std::string gpu_uuid;                // the GPU, or the MIG instance
  std::string cgroup;                  // empty when the process was not found
  std::string pod;                     // namespace/pod/container, or empty for no pod
  std::vector<std::string> allocated;  // devices the container was allocated
  std::string reason;
  double sm_seconds = 0;  // from per-process utilization samples
  double memory_byte_seconds = 0;
  int64_t max_memory_bytes = 0;
};

// A pod's use of a device it was not allocated (the sum of its processes' findings).
struct UnallocatedUse {
  ContainerRef who;
  std::string device;  // GPU or MIG instance UUID
  double sm_seconds = 0;
  double memory_byte_seconds = 0;
  int64_t max_memory_bytes = 0;
};

struct Attribution {
  std::vector<PodUsage> pods;
  std::vector<DeviceUsage> devices;
  std::vector<AuditFinding> audit;
  std::vector<UnallocatedUse> unallocated;  // by container, then device
  double seconds = 0;                       // recording duration
};

Attribution Attribute(const Recording& recording, const PidResolver& resolve,
                      const Ownership& ownership, const Prices& prices);

// Splits `total` into parts proportional to `weights` (all >= 0) that sum to `total` exactly
// (largest remainder; ties to the earlier part). All weights 0: everything to no one (an
// empty-weight split returns zeros and the caller keeps the total).
std::vector<int64_t> SplitExactly(int64_t total, const std::vector<double>& weights);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_ATTRIBUTION_H_
