// The gang intent (`gpuplane.io/gang-intent`, an annotation on a PodGroup or Workload): the
// planned placement of every member of a gang, written by the live scheduler before the first
// write of the gang and removed after the last (kube/scheduler.h). Its text is JSON:
// {"members":[{"pod","uid","node","claims":[{"name","allocation":{"devices":{"results":
// [{"request","driver","pool","device"}]}}}],"volumes":[{"claim","uid","volume"}]}]}
// ("volumes", optional: unbound PersistentVolumeClaims and the PersistentVolume reserved for
// each, or no "volume" to provision one for the member's node; "extended", optional:
// {"claim","mappings":[{"containerName","resourceName","requestName"}]}, the claim made for
// the member's extended resources, named in its status before binding). An annotation anyone can
// edit is input: ReadIntent accepts only that shape. Pure functions; thread-safe.
#ifndef GPUPLANE_KUBE_GANG_INTENT_H_
#define GPUPLANE_KUBE_GANG_INTENT_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace gpuplane::kube {

inline constexpr char kGangIntent[] = "gpuplane.io/gang-intent";

// The intent in `text` when it is JSON in the shape above (every member with pod, uid and node
// strings and a claims list; every claim with a name and an allocation whose results name
// their devices); nullopt for anything else (not JSON, edited by hand, another writer).
std::optional<nlohmann::json> ReadIntent(std::string_view text);

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_GANG_INTENT_H_
