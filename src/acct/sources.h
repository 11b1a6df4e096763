// Where attribution's inputs come from offline: PID -> container through a /proc tree and the
// node's Pod objects (`kubectl get pods -o json`), device ownership from a kubelet
// PodResources `List` response in proto3 JSON form, and prices from a YAML or JSON map.
// Every problem names the file and what to fix.
// Parsers are pure functions returning values (thread-safe); the resolver from ProcResolver owns
// its copy of the pods and reads /proc under `proc_root` when called (from one thread).
#ifndef GPUPLANE_ACCT_SOURCES_H_
#define GPUPLANE_ACCT_SOURCES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "acct/attribution.h"

namespace gpuplane::acct {

// Pods by UID: namespace, name, and container names by container ID (without the
// "containerd://" scheme). ParsePodsJson reads a Pod, a PodList or a List of Pods (kubectl
// get pods -o json, or the API server's list) through api/'s loader; the error names the file
// and line when no Pod could be read.
struct PodIndex {
  struct Pod {
    std::string namespace_name, name;
    std::map<std::string, std::string> containers;  // container ID -> name
    std::map<std::string, std::string> labels;
  };
  std::map<std::string, Pod> by_uid;
};
absl::StatusOr<PodIndex> ParsePodsJson(const std::string& text, const std::string& name);

// Resolves PIDs with <proc_root>/<pid>/cgroup and the pod index (when a pod is not in the
// index, it is named by UID and the container by ID). An unreadable <pid>/cgroup (the process
// exited) resolves to an owner marked `unknown`.
PidResolver ProcResolver(std::string proc_root, PodIndex pods);

// PodResources List (proto3 JSON, camelCase or snake_case names). Classic device-plugin ids
// are GPU or MIG UUIDs (time-slicing replicas "<uuid>::<n>" count once each); DRA results
// name devices ("gpu-3"), mapped to UUIDs through `uuid_by_index` (from the recording).
absl::StatusOr<Ownership> ParsePodResourcesJson(const std::string& text, const std::string& name,
                                                const std::map<int, std::string>& uuid_by_index);

// `{"NVIDIA H100 80GB HBM3": 2.49, "default": 1.0}` (YAML or JSON): price per GPU-hour.
absl::StatusOr<Prices> ParsePrices(const std::string& text, const std::string& name);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_SOURCES_H_
