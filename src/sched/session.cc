#include "sched/session.h"

#include <algorithm>

#include "alloc/verifier.h"
#include "sched/extended_resources.h"
#include "sched/pod_volumes.h"
#include "sched/preferences.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

bool IsCelError(const alloc::Outcome& o) {
  for (const std::string& r : o.reasons) {
    if (r.starts_with("CEL runtime error")) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::Make(Snapshot& snapshot, const PodSet& pods,
                                                       SessionOptions options) {
  absl::StatusOr<std::unique_ptr<NodeOrder>> order = MakeNodeOrder(options.policy, options.load);
  if (!order.ok()) return order.status();
  return std::unique_ptr<Session>(
      new Session(snapshot, pods, std::move(options), std::move(*order)));
}

Session::Session(Snapshot& snapshot, const PodSet& pods, SessionOptions options,
                 std::unique_ptr<NodeOrder> order)
    : snap_(snapshot), pods_(pods), options_(std::move(options)), order_(std::move(order)) {
  snap_.SetOrder(order_->Order(snap_));
  alloc::AllocatorOptions allocator{.explain = false, .memo = &snap_.memo()};
  if (options_.devices == DeviceChoice::kFirstFit) allocator.max_solutions = 1;
  if (options_.placer != nullptr) {
    allocator.scorer = &prefer_;
    allocator.max_solutions = 1;
  }
  allocator_ = std::make_unique<alloc::Allocator>(snap_.inventory(), allocator);
  for (const model::DeviceInfo& d : snap_.inventory().devices()) {
    shareable_ = shareable_ || d.spec->allow_multiple_allocations.value_or(false);
  }
  SetUpQueues();
}

Session::~Session() = default;

std::vector<Decision> Session::Run() {
  std::vector<Decision> out(pods_.pods.size());
  other_demand_ = -1;
  PlaceBound(out);
  if (options_.preemption.enabled) HoldNominated();
  std::vector<std::pair<size_t, int>> items;  // (representative pod, gang or -1)
  for (const PodInfo& p : pods_.pods) {
    if (p.bound_node.empty() && p.gang < 0) items.emplace_back(p.input, -1);
  }
  for (size_t g = 0; g < pods_.gangs.size(); ++g) {
    const std::vector<size_t>& m = pods_.gangs[g].members;
    size_t rep = *std::min_element(m.begin(), m.end(), [&](size_t a, size_t b) {
      return queue_order_.Less(pods_.pods[a], pods_.pods[b]);
    });
    items.emplace_back(rep, static_cast<int>(g));
  }
  std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    return queue_order_.Less(pods_.pods[a.first], pods_.pods[b.first]);
  });
  for (const auto& [pod, gang] : items) {
    if (order_->dynamic()) snap_.SetOrder(order_->Order(snap_));
    if (gang >= 0) {
      PreferYoung(pod, /*reorder=*/true);
      DecideGang(static_cast<size_t>(gang), out);
      RestoreOrder();
      if (options_.preemption.enabled) PreemptGang(static_cast<size_t>(gang), out);
    } else if (pods_.pods[pod].problem) {
      out[pod].status = *pods_.pods[pod].problem;
    } else if (std::optional<Status> q = QueueGate({pod}, false)) {
      out[pod].status = *q;
    } else {
      PreferYoung(pod, /*reorder=*/false);
      out[pod] = DecideSingle(pod);
      RestoreOrder();
      if (options_.preemption.enabled) Preempt(pod, out[pod]);
    }
  }
  return out;
}

Decision Session::Decide(size_t pod) {
  const PodInfo& p = pods_.pods[pod];
  if (p.problem) {
    Decision d;
    d.status = *p.problem;
    return d;
  }
  if (order_->dynamic()) snap_.SetOrder(order_->Order(snap_));
  other_demand_ = -1;  // what is placed changed since the last decision
  if (p.gang < 0) {
    if (std::optional<Status> q = QueueGate({pod}, false)) {
      Decision d;
      d.status = *q;
      return d;
    }
    if (options_.placer != nullptr) return DecidePicked(pod);
    PreferYoung(pod, /*reorder=*/false);
    Decision d = DecideSingle(pod);
    RestoreOrder();
    return d;
  }
  std::vector<Decision> out(pods_.pods.size());
  PreferYoung(pod, /*reorder=*/true);
  DecideGang(static_cast<size_t>(p.gang), out);
  RestoreOrder();
  return out[pod];
}

absl::Status Session::Evict(size_t pod) {
  const PodPlacement* placed = snap_.placement(pods_.pods[pod].key);
  const model::NodeId node = placed != nullptr ? placed->node : model::kNoId;
  std::vector<alloc::Choice> choices;
  if (options_.placer != nullptr) choices = ChoicesOf(pod);
  CountYoung(pod, -1);
  Statement stmt(snap_);
  absl::Status st = stmt.Evict(pods_.pods[pod].key);
  if (!st.ok()) {
    CountYoung(pod, 1);
    return st;
  }
  stmt.Commit();
  RefundQueue(pod);
  if (options_.placer != nullptr) options_.placer->Unreserve(pods_.pods[pod], node, choices);
  return st;
}

Decision Session::DecidePicked(size_t pod) {
  const double start = Now();
  Decision d;
  std::optional<Pick> pick = options_.placer->Choose(snap_, pods_.pods[pod]);
  if (!pick || pick->node >= snap_.inventory().nodes().size()) {
    d.status =
        Status::Of(Code::kUnschedulable, Stage::kNodes, "the placement policy found no node");
    d.seconds = Now() - start;
    return d;
  }
  prefer_.Prefer(std::move(pick->devices));
  Statement stmt(snap_);
  Rule rule = Rule::kCount;
  Status st = PlaceGroup({pod}, pick->node, stmt, nullptr, rule);
  std::optional<Status> over;
  if (st.ok()) over = QueueGate({pod}, true);
  if (over) {
    d.status = *over;  // the statement rolls back
  } else if (st.ok()) {
    stmt.Commit();
    ChargeQueues({pod});
    Fill(pod, pick->node, d);
    options_.placer->Reserve(pods_.pods[pod], pick->node, ChoicesOf(pod));
  } else {
    d.status =
        st.message.empty()
            ? Status::Of(st.code, st.stage, "the node the placement policy chose refused the pod")
            : st;
    if (rule != Rule::kCount) d.status.rule_nodes[static_cast<size_t>(rule)] = 1;
  }
  d.seconds = Now() - start;
  return d;
}

std::vector<alloc::Choice> Session::ChoicesOf(size_t pod) const {
  std::vector<alloc::Choice> out;
  for (const ClaimUse& u : pods_.pods[pod].claims) {
    if (const ClaimAllocation* a = snap_.claim(u.key)) {
      out.insert(out.end(), a->choices.begin(), a->choices.end());
    }
  }
  return out;
}

void Session::PlaceBound(std::vector<Decision>& out) {
  Statement stmt(snap_);
  for (const PodInfo& p : pods_.pods) {
    if (p.bound_node.empty()) continue;
    std::optional<model::NodeId> n = snap_.inventory().FindNode(p.bound_node);
    PodPlacement pl{p.key,       n.value_or(model::kNoId), {},
                    p.cpu_milli, p.memory_bytes,           p.other_milli,
                    p.host_ports};
    pl.labels = p.labels;
    pl.rwop_claims = p.rwop_claims;
    pl.csi_volumes = p.csi_volumes;
    pl.inline_disks = p.inline_disks;
    for (const ClaimUse& u : p.claims) {
      if (!n || UsesClaimOn(p, u, snap_.node(*n))) pl.claims.push_back(u.key);
    }
    if (n && !p.extended_resources.empty()) pl.other_milli = OtherOn(p, snap_.node(*n));
    if (stmt.Place(std::move(pl), {}).ok() && n) {
      Fill(p.input, *n, out[p.input]);
    } else {
      out[p.input].status = Status::Of(
          Code::kError, Stage::kInput,
          util::Cat(p.source->file, ":", p.source->line, ": Pod ", p.key, ": spec.nodeName \"",
                    p.bound_node, "\" is not a node of the cluster"));
    }
  }
  stmt.Commit();
  for (const PodInfo& p : pods_.pods) {
    if (!p.bound_node.empty()) ChargeQueues({p.input});
  }
}

Decision Session::DecideSingle(size_t pod) {
  const double start = Now();
  Decision d;
  Statement stmt(snap_);
  Status error;
  model::NodeId node = PlacePod(pod, stmt, nullptr, nullptr, error);
  std::optional<Status> over;
  if (error.ok() && node != model::kNoId) over = QueueGate({pod}, true);
  if (!error.ok()) {
    d.status = error;
  } else if (over) {
    d.status = *over;  // the statement rolls back
  } else if (node != model::kNoId) {
    stmt.Commit();
    ChargeQueues({pod});
    Fill(pod, node, d);
  } else if (options_.explain) {
    d.status = Diagnose(pod, nullptr);
  } else {
    d.status = Status::Of(Code::kUnschedulable, Stage::kDevices, "no node fits now");
  }
  d.seconds = Now() - start;
  return d;
}

void Session::Fill(size_t pod, model::NodeId node, Decision& d) const {
  d.status = Status::Success();
  d.node = node;
  d.claims.clear();
  const NodeFacts& facts = snap_.node(node);
  for (const ClaimUse& u : pods_.pods[pod].claims) {
    if (!UsesClaimOn(pods_.pods[pod], u, facts)) continue;
    const ClaimAllocation* c = snap_.claim(u.key);
    d.claims.emplace_back(u.key, c != nullptr ? c->result : api::AllocationResult{});
  }
  const PodPlacement* placed = snap_.placement(pods_.pods[pod].key);
  d.volumes = placed != nullptr ? placed->volumes : std::vector<VolumeChoice>{};
}

const alloc::CompiledClaim* Session::Compiled(const ClaimUse& use, Status& problem) {
  const std::string& key = use.compile_key.empty() ? use.key : use.compile_key;
  auto it = compiled_.find(key);
  if (it != compiled_.end()) return &it->second;
  auto bad = compile_errors_.find(key);
  if (bad != compile_errors_.end()) {
    problem = bad->second;
    return nullptr;
  }
  const api::ResourceClaim& c = *use.claim;
  absl::StatusOr<alloc::CompiledClaim> cc = alloc::CompileClaim(
      c.metadata.namespace_name, c.metadata.name, c.spec, snap_.inventory(), selectors_);
  if (!cc.ok()) {
    problem = Status::Of(Code::kUnresolvable, Stage::kClaims, std::string(cc.status().message()));
    compile_errors_.emplace(key, problem);
    return nullptr;
  }
  return &compiled_.emplace(key, std::move(*cc)).first->second;
}

std::vector<const alloc::CompiledClaim*> Session::FreshClaims(size_t pod, model::NodeId& pinned,
                                                              Status& problem) {
  std::vector<const alloc::CompiledClaim*> out;
  for (const ClaimUse& u : pods_.pods[pod].claims) {
    if (const ClaimAllocation* a = snap_.claim(u.key)) {
      if (a->node == model::kNoId) continue;
      if (pinned != model::kNoId && pinned != a->node) {
        problem = Status::Of(Code::kUnresolvable, Stage::kClaims,
                             util::Cat("the pod shares claims allocated on two nodes (", u.key,
                                       " is on ", snap_.inventory().nodes()[a->node].name, ")"));
        return {};
      }
      pinned = a->node;
      continue;
    }
    const alloc::CompiledClaim* cc = Compiled(u, problem);
    if (cc == nullptr) return {};
    out.push_back(cc);
  }
  return out;
}

std::vector<const PodInfo*> Session::Members(const std::vector<size_t>& pods) const {
  std::vector<const PodInfo*> out;
  out.reserve(pods.size());
  for (size_t p : pods) out.push_back(&pods_.pods[p]);
  return out;
}

std::optional<Rule> Session::FilterGroup(const std::vector<size_t>& pods, model::NodeId node) {
  const NodeFacts& facts = snap_.node(node);
  int64_t cpu = 0, mem = 0;
  std::map<std::string, int64_t> other;
  std::vector<HostPort> ports;    // the group's own, which may conflict with each other
  std::vector<InlineDisk> disks;  // the same for inline disks
  std::vector<std::string> rwop;  // the group's ReadWriteOncePod claims
  std::vector<CsiVolume> csi;     // the group's CSI volumes, counted together
  bool binds = false;             // some member has claims to bind (pod_volumes.h)
  std::string taint;
  const int32_t held = Held(node);
  // Members ahead of this one, going to the node too, where pods' labels are read.
  std::vector<const PodInfo*> before;
  const bool beside = pods.size() > 1 && pods_.pods[pods.front()].labels;
  for (size_t p : pods) {
    if (pods_.pods[p].priority < held) return Rule::kReserved;
    if (std::optional<Rule> r = node_filter_.Filter(snap_, pods_.pods[p], node, taint)) return r;
    if (!before.empty()) {
      if (std::optional<Rule> r = node_filter_.FilterBeside(snap_, pods_.pods[p], node, before)) {
        return r;
      }
    }
    if (beside) before.push_back(&pods_.pods[p]);
    if (AnyConflict(pods_.pods[p].host_ports, ports)) return Rule::kNodePorts;
    if (AnyDiskConflict(pods_.pods[p].inline_disks, disks)) return Rule::kDiskConflict;
    for (const std::string& c : pods_.pods[p].rwop_claims) {
      if (std::find(rwop.begin(), rwop.end(), c) != rwop.end()) return Rule::kVolumeInUse;
      rwop.push_back(c);
    }
    ports.insert(ports.end(), pods_.pods[p].host_ports.begin(), pods_.pods[p].host_ports.end());
    disks.insert(disks.end(), pods_.pods[p].inline_disks.begin(), pods_.pods[p].inline_disks.end());
    csi.insert(csi.end(), pods_.pods[p].csi_volumes.begin(), pods_.pods[p].csi_volumes.end());
    binds = binds || !pods_.pods[p].volumes_to_bind.empty();
    cpu += pods_.pods[p].cpu_milli;
    mem += pods_.pods[p].memory_bytes;
    for (const auto& [name, v] : OtherOn(pods_.pods[p], facts)) other[name] += v;
  }
  const auto group = static_cast<int64_t>(pods.size());
  if (group > 1 && !csi.empty() && OverVolumeLimits(csi, facts.csi_volumes, facts.volume_limits)) {
    return Rule::kVolumeLimits;
  }
  if (binds && group > 1) {  // one volume for one claim: the members' claims together
    const model::NodeInfo& info = snap_.inventory().nodes()[node];
    if (std::optional<Rule> r =
            ChooseVolumes(Members(pods), info.name, info.labels, snap_.volumes_taken())) {
      return *r;
    }
  }
  if ((facts.cpu_allocatable >= 0 && cpu > facts.cpu_allocatable - facts.cpu_requested) ||
      (facts.memory_allocatable >= 0 && mem > facts.memory_allocatable - facts.memory_requested) ||
      (facts.pods_allocatable >= 0 && group > facts.pods_allocatable - facts.pods_placed) ||
      (facts.has_node && OtherShort(other, facts.other_allocatable, &facts.other_requested))) {
    return Rule::kNodeResources;
  }
  return std::nullopt;
}

Status Session::GroupClaims(const std::vector<size_t>& pods, model::NodeId node, Rule& rule,
                            GroupClaimSet& out) {
  const NodeFacts& facts = snap_.node(node);
  for (size_t p : pods) {
    for (const ClaimUse& u : pods_.pods[p].claims) {
      if (!UsesClaimOn(pods_.pods[p], u, facts)) continue;
      if (const ClaimAllocation* a = snap_.claim(u.key)) {
        if (a->node != model::kNoId && a->node != node) {
          rule = Rule::kSharedClaim;
          return Status::Of(Code::kUnschedulable, Stage::kClaims, "");
        }
        continue;
      }
      if (std::find(out.keys.begin(), out.keys.end(), u.key) != out.keys.end()) continue;
      Status problem;
      const alloc::CompiledClaim* cc = Compiled(u, problem);
      if (cc == nullptr) return problem;
      out.claims.push_back(cc);
      out.keys.push_back(u.key);
      out.owner.push_back(p);
    }
  }
  return Status::Success();
}

Status Session::PlaceGroup(const std::vector<size_t>& pods, model::NodeId node, Statement& stmt,
                           const alloc::DeviceFilter* filter, Rule& rule, size_t alternatives) {
  if (std::optional<Rule> r = FilterGroup(pods, node)) {
    rule = *r;
    return Status::Of(Code::kUnschedulable, Stage::kNodes, "");
  }
  GroupClaimSet set;
  if (Status st = GroupClaims(pods, node, rule, set); !st.ok()) return st;
  alloc::Outcome outcome;
  outcome.allocated = true;
  if (!set.claims.empty()) {
    ++gang_calls_;
    outcome = allocator_->Allocate(set.claims, node, snap_.state(), filter);
  }
  for (const alloc::Choice& ch : outcome.choices) {
    if (ch.alternative >= alternatives) outcome.allocated = false;
  }
  if (!outcome.allocated) {
    rule = Rule::kAllocation;
    if (IsCelError(outcome)) return Status::Of(Code::kError, Stage::kDevices, outcome.reasons[0]);
    return Status::Of(Code::kUnschedulable, Stage::kDevices, "");
  }
  if (options_.verify && !set.claims.empty()) {
    std::string problem =
        alloc::Verify(snap_.inventory(), snap_.state(), set.claims, node, outcome.choices);
    if (!problem.empty()) {
      return Status::Of(Code::kError, Stage::kDevices,
                        "the verifier rejects the allocation: " + problem);
    }
  }
  return Commit(pods, node, set, outcome, stmt);
}

Status Session::Commit(const std::vector<size_t>& pods, model::NodeId node,
                       const GroupClaimSet& set, const alloc::Outcome& outcome, Statement& stmt) {
  std::vector<std::map<std::string, ClaimAllocation>> fresh(pods.size());
  for (size_t i = 0; i < set.claims.size(); ++i) {
    ClaimAllocation a;
    a.result = outcome.results[i];
    a.node = a.result.node_selector ? node : model::kNoId;
    for (const alloc::Choice& ch : outcome.choices) {
      if (ch.claim == i) a.choices.push_back(ch);
    }
    size_t slot = std::find(pods.begin(), pods.end(), set.owner[i]) - pods.begin();
    fresh[slot].emplace(set.keys[i], std::move(a));
  }
  std::vector<std::vector<VolumeChoice>> volumes(pods.size());
  bool binds = false;
  for (size_t p : pods) binds = binds || !pods_.pods[p].volumes_to_bind.empty();
  const model::NodeInfo& info = snap_.inventory().nodes()[node];
  const std::optional<Rule> no_room =
      binds ? ChooseVolumes(Members(pods), info.name, info.labels, snap_.volumes_taken(), &volumes)
            : std::nullopt;
  if (no_room.has_value()) {
    return Status::Of(Code::kError, Stage::kNodes, "the pods' volumes no longer fit the node");
  }
  const NodeFacts& facts = snap_.node(node);
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodInfo& p = pods_.pods[pods[i]];
    PodPlacement pl{p.key,
                    node,
                    {},
                    p.cpu_milli,
                    p.memory_bytes,
                    OtherOn(p, facts),
                    p.host_ports,
                    std::move(volumes[i]),
                    p.labels,
                    p.rwop_claims,
                    p.csi_volumes,
                    p.inline_disks};
    for (const ClaimUse& u : p.claims) {
      if (UsesClaimOn(p, u, facts)) pl.claims.push_back(u.key);
    }
    absl::Status st = stmt.Place(std::move(pl), std::move(fresh[i]));
    if (!st.ok()) return Status::Of(Code::kError, Stage::kDevices, std::string(st.message()));
  }
  return Status::Success();
}

namespace {

// Rules that pods placed (none removed) cannot undo on a node.
bool KeptWhilePodsArrive(Rule r) {
  switch (r) {
    case Rule::kPodAffinity:     // a pod it needs may arrive
    case Rule::kTopologySpread:  // other domains may catch up
    case Rule::kReserved:        // a hold may end
    case Rule::kSharedClaim:
    case Rule::kOutsideDomain:
    case Rule::kCount:  // not known
      return false;
    default:
      return true;
  }
}

}  // namespace

size_t Session::CursorStart(size_t pod) const {
  if (!cursor_ || cursor_->removals != snap_.removals() ||
      cursor_->order != snap_.order_version()) {
    return 0;
  }
  const PodInfo& a = pods_.pods[cursor_->pod];
  const PodInfo& b = pods_.pods[pod];
  const bool twins =
      a.priority == b.priority && a.volumes_to_bind.empty() && b.volumes_to_bind.empty() &&
      a.pod->metadata.namespace_name == b.pod->metadata.namespace_name && Interchangeable(a, b);
  return twins ? cursor_->position : 0;
}

void Session::EndSearch(size_t pod, size_t position, bool kept) {
  if (kept) {
    cursor_ = Cursor{pod, position, snap_.removals(), snap_.order_version()};
  } else {
    cursor_.reset();
  }
}

model::NodeId Session::PlacePod(size_t pod, Statement& stmt, const alloc::DeviceFilter* filter,
                                const std::vector<model::NodeId>* nodes, Status& error) {
  model::NodeId pinned = model::kNoId;
  std::vector<const alloc::CompiledClaim*> claims = FreshClaims(pod, pinned, error);
  if (!error.ok()) return model::kNoId;
  size_t tiers = 1;

  for (const alloc::CompiledClaim* c : claims) {
    for (const alloc::CompiledRequest& r : c->requests)
      tiers = std::max(tiers, r.alternatives.size());
  }
  alloc::NodeIndex& index = snap_.index();
  Rule rule = Rule::kCount;  // the last attempt's
  // True when the search should stop: placed, or an error.
  auto attempt = [&](model::NodeId n, size_t tier) {
    rule = Rule::kCount;
    Status st = PlaceGroup({pod}, n, stmt, filter, rule, tier == tiers ? SIZE_MAX : tier);
    if (st.code == Code::kError) error = st;
    return st.ok() || st.code == Code::kError;
  };
  if (pinned != model::kNoId) {
    bool allowed =
        nodes == nullptr || std::find(nodes->begin(), nodes->end(), pinned) != nodes->end();
    return allowed && attempt(pinned, tiers) && error.ok() ? pinned : model::kNoId;
  }
  const bool scored = nodes == nullptr && Scored(pod);
  for (size_t tier = 1; tier <= tiers; ++tier) {
    if (scored) {
      std::vector<ScoredNode> heap = ScoredNodes(pod, claims, tier);
      while (!heap.empty()) {
        const model::NodeId n = NextScored(heap);
        if (attempt(n, tier)) return error.ok() ? n : model::kNoId;
      }
      continue;
    }
    if (nodes != nullptr) {
      for (model::NodeId n : *nodes) {
        if (!index.MayFit(claims, n, tier)) continue;
        if (attempt(n, tier)) return error.ok() ? n : model::kNoId;
      }
      continue;
    }
    // Window work's preferred nodes (window_order.cc), then the rest in index order.
    if (prefer_young_) {
      std::vector<bool> tried(young_.size(), false);
      for (model::NodeId n = BestYoungNode(claims, tier, tried); n != model::kNoId;
           n = BestYoungNode(claims, tier, tried)) {
        if (attempt(n, tier)) return error.ok() ? n : model::kNoId;
        tried[n] = true;
      }
    }
    // One tier, every node in index order: it may start where its twin's search ended.
    const bool plain = options_.twin_cursor && tiers == 1 && filter == nullptr && !prefer_young_;
    bool kept = plain;  // every node passed over rejected it for good
    for (size_t p = index.FirstCandidate(claims, plain ? CursorStart(pod) : 0, tier);
         p != alloc::kNoPosition; p = index.FirstCandidate(claims, p + 1, tier)) {
      const model::NodeId n = index.order()[p];
      if (prefer_young_ && young_[n] > 0) continue;  // tried above
      if (attempt(n, tier)) {
        if (plain && error.ok()) EndSearch(pod, p, kept);
        return error.ok() ? n : model::kNoId;
      }
      kept = kept && KeptWhilePodsArrive(rule);
    }
    if (plain) EndSearch(pod, index.order().size(), kept);
  }
  // Nodes whose device plugin serves the pod's extended resources: the candidates above were
  // those whose devices may fit its extended-resource claim.
  if (!pods_.pods[pod].extended_resources.empty()) {
    for (model::NodeId n : index.order()) {
      if (!ByDevicePlugin(pods_.pods[pod], snap_.node(n))) continue;
      if (nodes != nullptr && std::find(nodes->begin(), nodes->end(), n) == nodes->end()) continue;
      if (attempt(n, tiers)) return error.ok() ? n : model::kNoId;
    }
  }
  return model::kNoId;
}

bool Session::Scored(size_t pod) {
  if (prefer_no_schedule_ < 0) prefer_no_schedule_ = AnyPreferNoSchedule(snap_) ? 1 : 0;
  const PodInfo& p = pods_.pods[pod];
  return prefer_no_schedule_ == 1 || HasPreferences(p.pod->spec) || ScoredByPlacedPods(snap_, p);
}

bool Session::ScoredNode::operator<(const ScoredNode& o) const {
  if (score != o.score) return score < o.score;
  if (young != o.young) return young < o.young;
  return position > o.position;
}

std::vector<Session::ScoredNode> Session::ScoredNodes(
    size_t pod, const std::vector<const alloc::CompiledClaim*>& claims, size_t tier) {
  alloc::NodeIndex& index = snap_.index();
  std::vector<model::NodeId> nodes;
  std::vector<size_t> positions;
  for (size_t p = index.FirstCandidate(claims, 0, tier); p != alloc::kNoPosition;
       p = index.FirstCandidate(claims, p + 1, tier)) {
    const model::NodeId n = index.order()[p];
    if (FilterGroup({pod}, n)) continue;
    nodes.push_back(n);
    positions.push_back(p);
  }
  const std::vector<int64_t> scores = ScoreNodes(snap_, pods_.pods[pod], nodes, &prefer_domains_);
  std::vector<ScoredNode> heap(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    heap[i] = {scores[i], prefer_young_ ? young_[nodes[i]] : 0.0, positions[i], nodes[i]};
  }
  std::make_heap(heap.begin(), heap.end());
  return heap;
}

model::NodeId Session::NextScored(std::vector<ScoredNode>& heap) {
  std::pop_heap(heap.begin(), heap.end());
  const model::NodeId n = heap.back().node;
  heap.pop_back();
  return n;
}

}  // namespace gpuplane::sched
