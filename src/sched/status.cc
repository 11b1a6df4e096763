#include "sched/status.h"

#include "util/strings.h"

namespace gpuplane::sched {
namespace {

// "8 free devices of class gpu.nvidia.com matching request gpu of ResourceClaim ns/c".
std::string Devices(const DeviceCause& d, std::string_view adjective) {
  std::string count = d.count == 0 ? "all" : std::to_string(d.count);
  return util::Cat(count, adjective, d.count == 1 ? " device" : " devices", " of class ",
                   d.device_class, " matching request ", d.request, " of ResourceClaim ", d.claim);
}

std::string RuleText(Rule r, const Status& s) {
  const std::optional<DeviceCause>& d = s.device;
  DeviceCause none{"?", "?", "?", 1};
  const DeviceCause& c = d ? *d : none;
  switch (r) {
    case Rule::kNodeUnschedulable:
      return "are cordoned (spec.unschedulable)";
    case Rule::kNodeTaint:
      return util::Cat("have a taint the pod does not tolerate (", s.taint, ")");
    case Rule::kNodeSelector:
      return "do not match the pod's nodeSelector";
    case Rule::kNodeAffinity:
      return "do not match the pod's required node affinity";
    case Rule::kVolumeNode:
      return "cannot reach the pod's volumes (node affinity, class topologies or no free "
             "PersistentVolume)";
    case Rule::kVolumeCapacity:
      return "have no CSIStorageCapacity of the claim's StorageClass with room for its volume";
    case Rule::kVolumeInUse:
      return "are unavailable: a ReadWriteOncePod PersistentVolumeClaim of the pod is in use by "
             "another pod";
    case Rule::kNodeTooSmall:
      return "have less allocatable CPU, memory or other resources than the pod requests";
    case Rule::kNodeResources:
      return "have too little CPU, memory or other requested resources left, or no room for "
             "another pod";
    case Rule::kNodePorts:
      return "have a host port the pod asks for in use";
    case Rule::kDiskConflict:
      return "have a pod using an inline disk of the pod (GCE PD, AWS EBS, iSCSI or RBD) that "
             "the two cannot share";
    case Rule::kVolumeLimits:
      return "have as many volumes of the pod's CSI driver attached as their CSINode allows "
             "(allocatable.count)";
    case Rule::kTopologySpread:
      return "would break the pod's topology spread constraints (DoNotSchedule)";
    case Rule::kPodAffinity:
      return "are not in a topology domain with the pods the pod's required pod affinity names";
    case Rule::kPodAntiAffinity:
      return "are in a topology domain with pods the pod's (or their) required anti-affinity "
             "excludes";
    case Rule::kNoMatchingDevice:
      return util::Cat("have no device of class ", c.device_class, " matching request ", c.request,
                       " of ResourceClaim ", c.claim);
    case Rule::kTooFewMatching:
      return util::Cat("have fewer than ", Devices(c, ""));
    case Rule::kTooFewFree:
      return util::Cat("have fewer than ", Devices(c, " free"));
    case Rule::kAllocation:
      return util::Cat("have enough free devices, but no allocation meets the claims' rules",
                       d && !d->detail.empty() ? " (" + d->detail + ")" : "");
    case Rule::kSharedClaim:
      return "are not the node where a claim the pod shares is allocated";
    case Rule::kOutsideDomain:
      return "are outside the topology domain";
    case Rule::kReserved:
      return "are held for a higher-priority pod that preempted pods there";
    case Rule::kCount:
      break;
  }
  return "";
}

}  // namespace

bool Permanent(Rule r) {
  switch (r) {
    case Rule::kNodeUnschedulable:
    case Rule::kNodeTaint:
    case Rule::kNodeSelector:
    case Rule::kNodeAffinity:
    case Rule::kVolumeNode:
    case Rule::kVolumeCapacity:
    case Rule::kNodeTooSmall:
    case Rule::kNoMatchingDevice:
    case Rule::kTooFewMatching:
      return true;
    default:
      return false;
  }
}

std::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess:
      return "Scheduled";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnresolvable:
      return "Unresolvable";
    case Code::kError:
      return "Error";
  }
  return "Error";
}

std::string_view StageName(Stage s) {
  static constexpr std::string_view kNames[] = {"",        "input", "claims",   "nodes",
                                                "devices", "gang",  "topology", "queue"};
  return kNames[static_cast<int>(s)];
}

std::string Render(const Status& s) {
  if (s.ok()) return "";
  std::string out = s.subject.empty() ? "" : s.subject + ": ";
  bool counted = false;
  for (int n : s.rule_nodes) counted = counted || n > 0;
  if (counted) {
    util::Append(out, "0/", s.nodes, " nodes are available:");
    const char* sep = " ";
    for (size_t r = 0; r < s.rule_nodes.size(); ++r) {
      if (s.rule_nodes[r] == 0) continue;
      std::string text = RuleText(static_cast<Rule>(r), s);
      if (s.rule_nodes[r] == 1) {  // "1 has ...", "1 is ...", "1 does not ..."
        if (text.starts_with("have ")) text.replace(0, 4, "has");
        if (text.starts_with("are ")) text.replace(0, 3, "is");
        if (text.starts_with("do not ")) text.replace(0, 2, "does");
      }
      util::Append(out, sep, s.rule_nodes[r], " ", text);
      sep = "; ";
    }
    out += ".";
  }
  if (!s.message.empty()) util::Append(out, counted ? " " : "", s.message);
  return out;
}

std::string Hint(const Status& s) {
  if (s.ok()) return "";
  if (!s.hint.empty()) return s.hint;
  const std::optional<DeviceCause>& d = s.device;
  if (s.stage == Stage::kQueue) {
    return s.code == Code::kUnresolvable
               ? "a queue for the work: the Queue, label or namespace named above"
               : "work of that queue (or of its parents) ending, or a higher limit in the "
                 "Queue's spec.resources";
  }
  if (s.code == Code::kUnresolvable) {
    if (d && d->best_matching >= 0 && d->count > d->best_matching) {
      return util::Cat("no node will ever fit: request ", d->request, " of ", d->claim, " needs ",
                       d->count, " devices of class ", d->device_class, "; nodes have at most ",
                       d->best_matching);
    }
    if (s.rule_nodes[static_cast<size_t>(Rule::kNodeTaint)] > 0) {
      return util::Cat("a node without taint ", s.taint, ", or a toleration for it");
    }
    if (s.rule_nodes[static_cast<size_t>(Rule::kVolumeCapacity)] > 0) {
      return "free storage of the claim's StorageClass on a node: its CSI driver publishes "
             "it in CSIStorageCapacity objects as storage is freed or added; or a smaller "
             "storage request";
    }
    return "no node will ever fit as the cluster is: change the pod, its claims or the cluster";
  }
  if (s.code == Code::kError) return "fix the input named above";
  // An object the pod needs is missing or not ready yet: the message names it.
  if (s.stage == Stage::kInput) return "the object named above, once it exists and is ready";
  if (d && d->best_free >= 0 && d->count > d->best_free && !d->best_node.empty()) {
    int64_t more = d->count - d->best_free;
    return util::Cat(more, " more free ", more == 1 ? "device" : "devices", " of class ",
                     d->device_class, " on node ", d->best_node, ", which has ", d->best_free,
                     " of ", d->count);
  }
  if (s.rule_nodes[static_cast<size_t>(Rule::kNodeResources)] > 0) {
    return "CPU or memory freed on a node that has the devices";
  }
  if (s.rule_nodes[static_cast<size_t>(Rule::kDiskConflict)] > 0) {
    return "the pods using the pod's inline disks ending (or every pod mounting the disk "
           "read-only, where the disk allows it)";
  }
  if (s.rule_nodes[static_cast<size_t>(Rule::kPodAntiAffinity)] > 0) {
    return "the pods the anti-affinity excludes leaving a topology domain that has room";
  }
  if (s.rule_nodes[static_cast<size_t>(Rule::kPodAffinity)] > 0) {
    return "a pod its required pod affinity names running in a topology domain that has room";
  }
  if (s.rule_nodes[static_cast<size_t>(Rule::kTopologySpread)] > 0) {
    return "room in the topology domains with the fewest matching pods, or matching pods "
           "leaving the others";
  }
  if (s.stage == Stage::kGang) return "room for every member of the gang at once";
  return "devices freed by work that ends, or preemption";
}

}  // namespace gpuplane::sched
