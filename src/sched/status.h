// The typed outcome of one scheduling decision. Code says what can help: Unschedulable
// (blocked by what is in use: waiting or preemption may help), Unresolvable (selectors,
// taints, sizes, topology: nothing running elsewhere will help; the input must change),
// Error (the scheduler could not decide: a CEL runtime error, an exhausted search). A status
// carries the stage that decided, per-rule node counts and, for DRA, the claim, request,
// alternative and class that failed; it is rendered to text only at the edges (Render,
// Hint). Plain values; copyable; not synchronized.
#ifndef GPUPLANE_SCHED_STATUS_H_
#define GPUPLANE_SCHED_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplane::sched {

enum class Code : uint8_t { kSuccess, kUnschedulable, kUnresolvable, kError };
enum class Stage : uint8_t {
  kNone,
  kInput,
  kClaims,
  kNodes,
  kDevices,
  kGang,
  kTopology,
  kQueue,  // the work's queue: none, or over its limit (sched/queue_ledger.h)
};

// Why one node was rejected for a pod: the first rule that rejected it.
enum class Rule : uint8_t {
  kNodeUnschedulable,  // spec.unschedulable (cordoned)
  kNodeTaint,          // a NoSchedule/NoExecute taint the pod does not tolerate
  kNodeSelector,       // the pod's nodeSelector
  kNodeAffinity,       // the pod's required node affinity
  kVolumeNode,         // its volumes: node affinity, class topologies, no free volume there
  kVolumeCapacity,     // no CSIStorageCapacity there with room for a volume to provision
  kVolumeInUse,        // a ReadWriteOncePod claim of the pod is used by a placed pod
  kNodeTooSmall,       // CPU, memory or other requests above the node's allocatable
  kNodeResources,      // CPU, memory, other resources or allocatable pods in use by other pods
  kNodePorts,          // a host port the pod asks for is taken there
  kDiskConflict,       // an inline disk of the pod is used by a pod there (disk_conflicts.h)
  kVolumeLimits,       // its CSI volumes would pass the node's CSINode limit for their driver
  kTopologySpread,     // a DoNotSchedule topology spread constraint (sched/pod_topology.h)
  kPodAffinity,        // a required pod affinity term finds no pod in the node's domain
  kPodAntiAffinity,    // an anti-affinity term (the pod's, or a placed pod's) forbids it
  kNoMatchingDevice,   // no device passes the request's class and request selectors
  kTooFewMatching,     // fewer matching devices than the request's count
  kTooFewFree,         // enough matching devices, too few of them free
  kAllocation,         // counts suffice; counters, capacity or constraints do not
  kSharedClaim,        // a claim the pod shares is allocated on another node
  kOutsideDomain,      // outside the gang's topology domain
  kReserved,           // held for a higher-priority pod whose victims are leaving it
  kCount
};

// A rule is permanent when nothing that runs or leaves can change it.
bool Permanent(Rule r);

// The DRA request that decided, with what the best node offered.
struct DeviceCause {
  std::string claim;         // "ns/name"
  std::string request;       // result name: "gpu" or "gpu/small"
  std::string device_class;  // the alternative's DeviceClass
  int64_t count = 0;         // devices it needs (0: All mode)
  int64_t best_free = -1;    // most free matching devices on one node (-1: unknown)
  int64_t best_matching = -1;
  std::string best_node;
  std::string detail;  // the allocator's word where counts sufficed (constraints, counters)
};

struct Status {
  Code code = Code::kSuccess;
  Stage stage = Stage::kNone;
  std::string message;  // the deciding problem, in words, for causes counts cannot say
  int nodes = 0;        // nodes considered
  std::vector<int> rule_nodes = std::vector<int>(static_cast<size_t>(Rule::kCount), 0);
  std::optional<DeviceCause> device;
  std::string taint;    // the first untolerated node taint, "key=value:Effect"
  std::string subject;  // the gang member or claim the status is about, when not the pod
  std::string hint;     // what would unblock it, when the deciding check knows (else Hint's)

  bool ok() const { return code == Code::kSuccess; }
  static Status Success() { return {}; }
  static Status Of(Code code, Stage stage, std::string message) {
    Status s;
    s.code = code;
    s.stage = stage;
    s.message = std::move(message);
    return s;
  }
};

// "Scheduled", "Unschedulable", "Unresolvable", "Error".
std::string_view CodeName(Code c);
std::string_view StageName(Stage s);
// One line: "0/1000 nodes are available: 1000 have fewer than 8 free devices of class
// gpu.nvidia.com for request gpu of ResourceClaim ns/c (at most 7 free on one node)."
// ("1 has ...", "1 is ..." for a single node.)
std::string Render(const Status& s);
// What would unblock it: "1 more free device of class gpu.nvidia.com on node n-3, which has 7
// of 8", "a node without taint gpu=bad:NoSchedule, or a toleration for it", "no node will
// ever fit: ...". Empty for success.
std::string Hint(const Status& s);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_STATUS_H_
