// Extended resources backed by DRA (Kubernetes' DRAExtendedResource, alpha since 1.34): a pod
// asking `nvidia.com/gpu: 1` in its containers' resources is served by a DeviceClass whose
// spec.extendedResourceName is `nvidia.com/gpu` (every class also serves the implicit
// `deviceclass.resource.kubernetes.io/<class name>`; where classes clash, the newest, then the
// lowest name, as kube-scheduler's cache picks). On a node that does not advertise the
// resource in its allocatable, the pod gets one ResourceClaim made for it (kube-scheduler's
// shape: requests `container-<i>-request-<j>`, one per container and resource, init
// containers reusing what later long-lived containers ask, annotated
// resource.kubernetes.io/extended-resource-claim and owned by the pod), allocated like any
// other claim; on a node that advertises the resource (a device plugin), the resource is
// counted against that allocatable instead and no claim is made.
//
// Pure functions over borrowed objects; thread-safe.
#ifndef GPUPLANE_SCHED_EXTENDED_RESOURCES_H_
#define GPUPLANE_SCHED_EXTENDED_RESOURCES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/object.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"

namespace gpuplane::sched {

inline constexpr char kExtendedResourceClaimAnnotation[] =
    "resource.kubernetes.io/extended-resource-claim";
inline constexpr char kDeviceClassResourcePrefix[] = "deviceclass.resource.kubernetes.io/";

// Resource name -> the DeviceClass that serves it (borrowed from `classes`).
using ExtendedClasses = std::map<std::string, const api::DeviceClass*>;
ExtendedClasses ExtendedResourceClasses(const std::vector<const api::DeviceClass*>& classes);

// The requests of the claim made for `pod`'s resources named in `resources` (each served by a
// class of `classes`), and which container's resource each request serves, in kube-scheduler's
// names and order (so the pod's status.extendedResourceClaimStatus reads as kube's would).
struct ExtendedRequests {
  std::vector<api::DeviceRequest> requests;
  std::vector<ExtendedRequestMapping> mappings;
};
ExtendedRequests ExtendedRequestsOf(const api::PodSpec& pod,
                                    const std::vector<std::string>& resources,
                                    const ExtendedClasses& classes);

// Whether `node` serves the pod's DRA-backed extended resources by count (it advertises one of
// them), so that the pod's extended-resource claim is not allocated there.
bool ByDevicePlugin(const PodInfo& pod, const NodeFacts& node);
// The resources the pod counts against the node's allocatable there.
const std::map<std::string, int64_t>& OtherOn(const PodInfo& pod, const NodeFacts& node);
// Whether the claim is allocated for the pod on `node` (false for its extended-resource claim
// on a node that serves those resources by count).
bool UsesClaimOn(const PodInfo& pod, const ClaimUse& use, const NodeFacts& node);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_EXTENDED_RESOURCES_H_
