// A client of the kubelet PodResources API v1 over gRPC on its unix socket
// (default /var/lib/kubelet/pod-resources/kubelet.sock): `List` gives which container was
// allocated which device, classic device plugin and DRA. The response is read with the same
// rules as `--podresources-json` (sources.h), through its proto3 JSON form.
// Each call opens its own gRPC channel and returns values; thread-safe. Errors: Unavailable
// when the socket does not answer, Internal when its response cannot be converted.
#ifndef GPUPLANE_ACCT_AGENT_PODRESOURCES_CLIENT_H_
#define GPUPLANE_ACCT_AGENT_PODRESOURCES_CLIENT_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "acct/attribution.h"

namespace gpuplane::acct {

// Calls List once (deadline `timeout_seconds`). `uuid_by_index` maps DRA device names
// ("gpu-3") to UUIDs. Errors name the socket and say what to check.
absl::StatusOr<Ownership> ListPodResources(const std::string& socket_path,
                                           const std::map<int, std::string>& uuid_by_index,
                                           double timeout_seconds = 2);

// The same List response as proto3 JSON (what `--podresources-json` reads).
absl::StatusOr<std::string> ListPodResourcesJson(const std::string& socket_path,
                                                 double timeout_seconds = 2);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_AGENT_PODRESOURCES_CLIENT_H_
