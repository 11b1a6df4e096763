// Why a pod fits no node: the first rule that rejects each node, counted; the DRA request that
// decided, with the best node's numbers; Unresolvable only when no node would fit even with
// every device free and every placed pod gone.
#include <map>

#include "sched/extended_resources.h"
#include "sched/session.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

struct RequestStats {
  int nodes = 0;
  DeviceCause cause;
};

// The device rule for `node` from the index's counts (kAllocation when counts suffice).
// Rules that pods placed or leaving change: the node's devices are looked at too.
bool ByPods(Rule r) {
  return r == Rule::kNodeResources || r == Rule::kNodePorts || r == Rule::kDiskConflict ||
         r == Rule::kVolumeLimits || r == Rule::kTopologySpread || r == Rule::kPodAffinity ||
         r == Rule::kPodAntiAffinity || r == Rule::kVolumeInUse;
}

Rule DeviceRule(alloc::NodeIndex& index, const std::vector<const alloc::CompiledClaim*>& claims,
                model::NodeId node, const std::string& node_name,
                std::map<std::pair<size_t, size_t>, RequestStats>& stats) {
  for (size_t ci = 0; ci < claims.size(); ++ci) {
    const alloc::CompiledClaim& c = *claims[ci];
    for (size_t ri = 0; ri < c.requests.size(); ++ri) {
      bool any = false, enough = false, enough_free = false;
      int64_t best_free = 0, best_matching = 0;
      for (const alloc::Alternative& alt : c.requests[ri].alternatives) {
        int sig = index.Intern(alt);
        int64_t m = index.Matching(sig, node), f = index.Free(sig, node);
        any = any || m > 0;
        enough = enough || (alt.all ? m > 0 : m >= alt.count);
        enough_free = enough_free || (alt.all ? m > 0 && f == m : f >= alt.count);
        best_free = std::max(best_free, f);
        best_matching = std::max(best_matching, m);
      }
      if (enough_free) continue;
      RequestStats& st = stats[{ci, ri}];
      if (st.nodes++ == 0) {
        const alloc::Alternative& first = c.requests[ri].alternatives.front();
        st.cause.claim = util::Cat(c.ns, "/", c.name);
        st.cause.request = c.requests[ri].name;
        st.cause.device_class = first.class_name;
        st.cause.count = alloc::NodeIndex::Need(first);
      }
      if (best_free > st.cause.best_free) {
        st.cause.best_free = best_free;
        st.cause.best_node = node_name;
      }
      st.cause.best_matching = std::max(st.cause.best_matching, best_matching);
      return !any ? Rule::kNoMatchingDevice : !enough ? Rule::kTooFewMatching : Rule::kTooFewFree;
    }
  }
  return Rule::kAllocation;
}

// The allocator's own words for the first node where counts sufficed.
std::string AllocationDetail(const alloc::Outcome& why) {
  for (const std::string& r : why.reasons) {
    size_t at = r.find("no choice meets");
    if (at != std::string::npos) return r.substr(at);
  }
  for (const std::string& r : why.reasons) {
    if (r.find("lacked") != std::string::npos || r.find("exhausted") != std::string::npos) {
      return r;
    }
  }
  return why.reasons.empty() ? "" : why.reasons.front();
}

// The hint for a pod that placed pods' volumes keep off nodes: one of those pods, by name.
std::string PodInTheWay(const Snapshot& snap, const PodInfo& p, const Status& s) {
  if (s.rule_nodes[static_cast<size_t>(Rule::kVolumeInUse)] > 0) {
    for (const std::string& c : p.rwop_claims) {
      if (const std::string* user = snap.ReadWriteOncePodUser(c)) {
        return util::Cat("pod ", *user, " ending: it uses PersistentVolumeClaim ", c,
                         ", whose access mode ReadWriteOncePod allows one pod");
      }
    }
  }
  if (s.rule_nodes[static_cast<size_t>(Rule::kDiskConflict)] > 0) {
    for (const auto& [key, placed] : snap.placements()) {  // the first in ns/name order
      if (placed.node == model::kNoId) continue;
      if (const InlineDisk* d = FirstDiskConflict(p.inline_disks, placed.inline_disks)) {
        return util::Cat("pod ", key, " on node ", snap.inventory().nodes()[placed.node].name,
                         " ending (it mounts ", Describe(*d),
                         ", which the pod mounts too), or the other pods that do");
      }
    }
  }
  return "";
}

}  // namespace

Status Session::Diagnose(size_t pod, const std::vector<model::NodeId>* nodes) {
  const PodInfo& p = pods_.pods[pod];
  Status problem;
  model::NodeId pinned = model::kNoId;
  std::vector<const alloc::CompiledClaim*> claims = FreshClaims(pod, pinned, problem);
  if (!problem.ok()) return problem;
  // On nodes whose device plugin serves the pod's extended resources, its claims but the one
  // made for them (sched/extended_resources.h); that one comes last, so a claim keeps its index
  // (the key of `stats`) in both lists.
  std::vector<const alloc::CompiledClaim*> by_plugin;
  for (const ClaimUse& u : p.claims) {
    if (u.extended || snap_.claim(u.key) != nullptr) continue;
    if (const alloc::CompiledClaim* cc = Compiled(u, problem)) by_plugin.push_back(cc);
  }
  auto claims_on = [&](model::NodeId n) -> const std::vector<const alloc::CompiledClaim*>& {
    return ByDevicePlugin(p, snap_.node(n)) ? by_plugin : claims;
  };
  const model::Inventory& inv = snap_.inventory();
  std::vector<model::NodeId> all;
  if (nodes == nullptr) {
    for (model::NodeId n = 0; n < inv.nodes().size(); ++n) all.push_back(n);
    nodes = &all;
  }
  Status s = Status::Of(Code::kUnschedulable, Stage::kDevices, "");
  s.nodes = static_cast<int>(nodes->size());
  std::map<std::pair<size_t, size_t>, RequestStats> stats;
  bool could_free = false;           // a node where placed pods leaving would help
  std::vector<model::NodeId> retry;  // nodes to try with every device free
  for (model::NodeId n : *nodes) {
    std::optional<Rule> rule = node_filter_.Filter(snap_, p, n, s.taint);
    if (!rule && pinned != model::kNoId && n != pinned) rule = Rule::kSharedClaim;
    if (!rule && p.priority < Held(n)) rule = Rule::kReserved;
    if (!rule || ByPods(*rule)) {
      Rule device = DeviceRule(snap_.index(), claims_on(n), n, inv.nodes()[n].name, stats);
      if (!rule || Permanent(device)) rule = device;
    }
    ++s.rule_nodes[static_cast<size_t>(*rule)];
    if (ByPods(*rule) || *rule == Rule::kSharedClaim || *rule == Rule::kReserved) could_free = true;
    if (*rule == Rule::kTooFewFree || *rule == Rule::kAllocation) retry.push_back(n);
  }
  if (std::string hint = PodInTheWay(snap_, p, s); !hint.empty()) s.hint = std::move(hint);
  const std::pair<const std::pair<size_t, size_t>, RequestStats>* deciding = nullptr;
  for (const auto& entry : stats) {
    if (deciding == nullptr || entry.second.nodes > deciding->second.nodes) deciding = &entry;
  }
  if (deciding != nullptr) s.device = deciding->second.cause;
  int allocation = s.rule_nodes[static_cast<size_t>(Rule::kAllocation)];
  if (allocation > 0) {
    for (model::NodeId n : retry) {
      if (!snap_.index().MayFit(claims_on(n), n)) continue;
      if (!explainer_) {
        explainer_ = std::make_unique<alloc::Allocator>(
            snap_.inventory(), alloc::AllocatorOptions{.memo = &snap_.memo()});
      }
      std::string detail = AllocationDetail(explainer_->Allocate(claims_on(n), n, snap_.state()));
      if (!s.device) s.device = DeviceCause{};
      s.device->detail = detail;
      break;
    }
  }
  if (!could_free) {
    model::AllocationState empty(inv);
    bool fits_when_free = false;
    for (model::NodeId n : retry) {
      if (allocator_->Allocate(claims_on(n), n, empty).allocated) {
        fits_when_free = true;
        break;
      }
    }
    if (!fits_when_free) s.code = Code::kUnresolvable;
  }
  return s;
}

}  // namespace gpuplane::sched
