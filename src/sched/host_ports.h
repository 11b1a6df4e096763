// The host ports a pod takes on its node, as kube-scheduler's NodePorts plugin reads them:
// every container port with a hostPort (with hostNetwork, the API server defaults hostPort to
// containerPort, and so does this reader for objects from files), by protocol (TCP when
// unset) and host IP ("0.0.0.0" when unset, which overlaps every address). Two ports conflict
// when protocol and port are equal and their host IPs overlap. Pure functions; thread-safe.
#ifndef GPUPLANE_SCHED_HOST_PORTS_H_
#define GPUPLANE_SCHED_HOST_PORTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/core_types.h"

namespace gpuplane::sched {

struct HostPort {
  std::string protocol;  // TCP, UDP, SCTP
  std::string ip;        // "0.0.0.0": every address
  int32_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// The pod's host ports (its containers'; init containers hold none once they have run).
// Entries that are not well-formed (no number, out of range) are skipped: api's validation
// reports them.
std::vector<HostPort> HostPortsOf(const api::PodSpec& spec);

bool Conflict(const HostPort& a, const HostPort& b);

// Whether any port of `want` conflicts with one of `used`.
bool AnyConflict(const std::vector<HostPort>& want, const std::vector<HostPort>& used);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_HOST_PORTS_H_
