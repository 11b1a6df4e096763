// From a process's /proc/<pid>/cgroup to the Kubernetes pod and container it runs in. Handles
// cgroup v1 (a line per hierarchy) and v2 (`0::<path>`), the cgroupfs and systemd cgroup
// drivers (the systemd driver writes pod UIDs with '_' for '-'), containerd, CRI-O and Docker
// scopes, QoS levels (Guaranteed pods have none), relative paths under a private cgroup
// namespace, and nested clusters (kind, Docker-in-Docker). Pure functions; thread-safe.
#ifndef GPUPLANE_ACCT_CGROUP_H_
#define GPUPLANE_ACCT_CGROUP_H_

#include <optional>
#include <string>
#include <string_view>

namespace gpuplane::acct {

struct CgroupIdentity {
  std::string pod_uid;       // with dashes, lower case
  std::string container_id;  // 64 hex digits as the runtime reports it; empty: pod level
  std::string runtime;       // "containerd", "cri-o", "docker", or "" when unknown
  std::string qos;           // "guaranteed", "burstable", "besteffort"
  std::string path;          // the cgroup path it was read from
};

// The pod identity in one cgroup path, or nullopt when the path is not a pod's.
std::optional<CgroupIdentity> ParseCgroupPath(std::string_view path);

// The pod identity in the contents of /proc/<pid>/cgroup: the first line (v2 first, then the
// v1 hierarchies in file order) whose path names a pod.
std::optional<CgroupIdentity> ParseProcCgroup(std::string_view contents);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_CGROUP_H_
