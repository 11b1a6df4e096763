// Gangs: all members (or at least the minimum) in one Statement, or nothing.
#include <algorithm>

#include "sched/extended_resources.h"
#include "sched/preferences.h"
#include "sched/session.h"
#include "util/strings.h"

namespace gpuplane::sched {

// The depth-first search of one gang over members and nodes.
struct Session::Group {
  Session& s;
  const Gang& g;
  Statement& stmt;
  const alloc::DeviceFilter* filter;
  const std::vector<model::NodeId>* nodes;  // a domain's nodes, in index order; null: all
  std::vector<size_t> members;              // unbound members, input order
  std::vector<int> twin;                    // an earlier interchangeable member, or -1
  std::vector<model::NodeId> where;
  bool scored = false;  // some member has preferences to score (Session::Scored)
  Status error;

  Group(Session& session, const Gang& gang, Statement& st, const alloc::DeviceFilter* f,
        const std::vector<model::NodeId>* domain)
      : s(session), g(gang), stmt(st), filter(f), nodes(domain) {
    for (size_t m : g.members) {
      if (s.pods_.pods[m].bound_node.empty()) members.push_back(m);
    }
    twin.assign(members.size(), -1);
    for (size_t i = 0; i < members.size(); ++i) {
      for (size_t j = i; j-- > 0;) {
        if (Interchangeable(s.pods_.pods[members[i]], s.pods_.pods[members[j]])) {
          twin[i] = static_cast<int>(j);
          break;
        }
      }
    }
    where.assign(members.size(), model::kNoId);
    for (size_t m : members) scored = scored || s.Scored(m);
  }

  size_t Position(model::NodeId n) const { return s.snap_.index().PositionOf(n); }

  // Nodes to try for member i: those holding earlier members first (packing the gang), then
  // the others that may fit, in index order; none before position `lower`.
  std::vector<model::NodeId> Candidates(size_t i, size_t lower) {
    std::vector<model::NodeId> out;
    for (size_t j = 0; j < i; ++j) {
      model::NodeId n = where[j];
      if (n != model::kNoId && Position(n) >= lower &&
          std::find(out.begin(), out.end(), n) == out.end()) {
        out.push_back(n);
      }
    }
    std::sort(out.begin(), out.end(),
              [&](model::NodeId a, model::NodeId b) { return Position(a) < Position(b); });
    size_t touched = out.size();
    Status problem;
    model::NodeId pinned = model::kNoId;
    std::vector<const alloc::CompiledClaim*> claims = s.FreshClaims(members[i], pinned, problem);
    if (!problem.ok()) return out;
    auto add = [&](model::NodeId n) {
      if (std::find(out.begin(), out.begin() + static_cast<long>(touched), n) ==
          out.begin() + static_cast<long>(touched)) {
        out.push_back(n);
      }
    };
    alloc::NodeIndex& index = s.snap_.index();
    if (pinned != model::kNoId) {
      if (nodes == nullptr || std::find(nodes->begin(), nodes->end(), pinned) != nodes->end()) {
        add(pinned);
      }
    } else if (nodes != nullptr) {
      for (model::NodeId n : *nodes) {
        if (Position(n) >= lower && index.MayFit(claims, n)) add(n);
      }
    } else {
      for (size_t p = index.FirstCandidate(claims, lower); p != alloc::kNoPosition;
           p = index.FirstCandidate(claims, p + 1)) {
        add(index.order()[p]);
      }
    }
    // Nodes whose device plugin serves the member's extended resources, which the claims'
    // candidates above leave out (sched/extended_resources.h).
    const PodInfo& pod = s.pods_.pods[members[i]];
    if (pinned == model::kNoId && !pod.extended_resources.empty()) {
      for (model::NodeId n : index.order()) {
        if (Position(n) < lower || !ByDevicePlugin(pod, s.snap_.node(n)) ||
            (nodes != nullptr && std::find(nodes->begin(), nodes->end(), n) == nodes->end()) ||
            std::find(out.begin(), out.end(), n) != out.end()) {
          continue;
        }
        out.push_back(n);
      }
    }
    return out;
  }

  // Places member i on n, re-allocating the gang's members already there jointly when it
  // does not fit beside them.
  bool TryMember(size_t i, model::NodeId n) {
    size_t mark = stmt.Checkpoint();
    Rule rule = Rule::kCount;
    Status st = s.PlaceGroup({members[i]}, n, stmt, filter, rule);
    if (st.ok()) return true;
    if (st.code == Code::kError) error = st;
    std::vector<size_t> on;
    for (size_t j = 0; j < i; ++j) {
      if (where[j] == n) on.push_back(members[j]);
    }
    if (on.empty() || !error.ok() || Permanent(rule)) return false;
    for (size_t m : on) {
      if (!stmt.Evict(s.pods_.pods[m].key).ok()) return false;
    }
    on.push_back(members[i]);
    st = s.PlaceGroup(on, n, stmt, filter, rule);
    if (st.ok()) return true;
    if (st.code == Code::kError) error = st;
    (void)stmt.Rollback(mark);
    return false;
  }

  // Member i's candidates (all positions) that pass its filters, by preference score, highest
  // first; equal scores keep Candidates' order (nodes holding earlier members, then index order).
  std::vector<model::NodeId> Ranked(size_t i) {
    std::vector<model::NodeId> nodes;
    for (model::NodeId n : Candidates(i, 0)) {
      if (!s.FilterGroup({members[i]}, n)) nodes.push_back(n);
    }
    if (!s.Scored(members[i])) return nodes;
    const std::vector<int64_t> score =
        ScoreNodes(s.snap_, s.pods_.pods[members[i]], nodes, &s.prefer_domains_);
    std::vector<size_t> order(nodes.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score[a] > score[b]; });
    std::vector<model::NodeId> out;
    out.reserve(nodes.size());
    for (size_t k : order) out.push_back(nodes[k]);
    return out;
  }

  // Preferences first: each member in turn on the highest-scoring node it fits, earlier
  // members' placements counting in its score (so members asking softly to spread spread). True
  // when every member whose input is not broken is placed and at least min are; otherwise the
  // caller rolls back and runs Search, which finds a placement whenever one exists.
  bool Greedy() {
    int placed = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      if (s.pods_.pods[members[i]].problem) continue;
      for (model::NodeId n : Ranked(i)) {
        if (TryMember(i, n)) {
          where[i] = n;
          break;
        }
        if (Stop()) break;
      }
      if (where[i] == model::kNoId) break;
      ++placed;
    }
    size_t broken = 0;
    for (size_t m : members) broken += s.pods_.pods[m].problem ? 1 : 0;
    if (placed >= g.min && static_cast<size_t>(placed) + broken == members.size()) return true;
    where.assign(members.size(), model::kNoId);
    return false;
  }

  bool Stop() {
    if (s.gang_calls_ > s.options_.gang_budget) s.gang_exhausted_ = true;
    return s.gang_exhausted_ || !error.ok();
  }

  bool Search(size_t i, int placed) {
    int left = static_cast<int>(members.size() - i);
    if (placed + left < g.min) return false;
    if (i == members.size()) return true;
    if (Stop()) return false;
    int t = twin[i];
    // A member whose input is broken (a missing claim or template) is never placed.
    bool placeable = !s.pods_.pods[members[i]].problem;
    if (placeable && (t < 0 || where[t] != model::kNoId)) {
      size_t lower = t >= 0 ? Position(where[t]) : 0;
      for (model::NodeId n : Candidates(i, lower)) {
        size_t mark = stmt.Checkpoint();
        if (TryMember(i, n)) {
          where[i] = n;
          if (Search(i + 1, placed + 1)) return true;
          where[i] = model::kNoId;
        }
        (void)stmt.Rollback(mark);
        if (Stop()) return false;
      }
    }
    return Search(i + 1, placed);  // member i left out (at most members - min of them)
  }
};

bool Session::SearchGang(const Gang& g, Statement& stmt, const alloc::DeviceFilter* filter,
                         const std::vector<model::NodeId>* nodes) {
  Group group(*this, g, stmt, filter, nodes);
  size_t mark = stmt.Checkpoint();
  if (group.scored) {
    if (group.Greedy()) return true;
    (void)stmt.Rollback(mark);
  }
  if (group.Search(0, 0)) return true;
  (void)stmt.Rollback(mark);
  return false;
}

const absl::StatusOr<Topology>& Session::TopologyOf(const std::string& level) {
  auto it = topologies_.find(level);
  if (it == topologies_.end()) {
    it = topologies_.emplace(level, Topology::Resolve(snap_.inventory(), level)).first;
  }
  return it->second;
}

int64_t Session::DevicesNeeded(const Gang& g) {
  if (shareable_) return 0;
  std::vector<int64_t> needs;
  for (size_t m : g.members) {
    if (!pods_.pods[m].bound_node.empty()) continue;
    Status problem;
    model::NodeId pinned = model::kNoId;
    int64_t need = 0;
    for (const alloc::CompiledClaim* c : FreshClaims(m, pinned, problem)) {
      for (const alloc::CompiledRequest& r : c->requests) {
        int64_t fewest = INT64_MAX;
        for (const alloc::Alternative& a : r.alternatives) {
          fewest = std::min(fewest, a.admin_access || a.all ? 0 : a.count);
        }
        need += fewest;
      }
    }
    needs.push_back(need);
  }
  std::sort(needs.begin(), needs.end());
  int64_t total = 0;
  for (size_t i = 0; i < needs.size() && static_cast<int>(i) < g.min; ++i) total += needs[i];
  return total;
}

bool Session::TryInDomains(const Gang& g, const Topology& topology, Statement& stmt, Status& why) {
  std::vector<Domain> domains = topology.Domains(snap_.state());
  int64_t need = DevicesNeeded(g);
  int tried = 0, small = 0;
  for (const Domain& d : domains) {
    if (d.free == 0 || d.free < need) {
      small += d.devices < need ? 1 : 0;
      continue;
    }
    std::vector<model::NodeId> nodes = topology.nodes(d.id);
    std::sort(nodes.begin(), nodes.end(), [&](model::NodeId a, model::NodeId b) {
      return snap_.index().PositionOf(a) < snap_.index().PositionOf(b);
    });
    DomainFilter filter(topology, d);
    ++tried;
    if (SearchGang(g, stmt, topology.node_label() ? nullptr : &filter, &nodes)) return true;
    if (gang_exhausted_) break;
  }
  bool never = small == static_cast<int>(domains.size());
  why = Status::Of(
      never ? Code::kUnresolvable : Code::kUnschedulable, Stage::kTopology,
      util::Cat("no ", topology.name(), " domain has room for all of gang ", g.key,
                ", which needs at least ", need, " devices at once (", domains.size(), " domains, ",
                small, " smaller than that, ", tried, " with enough free devices tried)"));
  return false;
}

void Session::DecideGang(size_t gang, std::vector<Decision>& out) {
  const double start = Now();
  const Gang& g = pods_.gangs[gang];
  auto all = [&](const Status& st) {
    for (size_t m : g.members) {
      if (pods_.pods[m].bound_node.empty()) out[m].status = st;
    }
  };
  if (g.problem) return all(*g.problem);
  std::vector<size_t> waiting;  // members not bound; the first min - bound at least
  for (size_t m : g.members) {
    if (pods_.pods[m].bound_node.empty()) waiting.push_back(m);
  }
  const size_t least = static_cast<size_t>(
      std::max<int64_t>(0, g.min - static_cast<int64_t>(g.members.size() - waiting.size())));
  if (std::optional<Status> q =
          QueueGate({waiting.begin(),
                     waiting.begin() + static_cast<ptrdiff_t>(std::min(least, waiting.size()))},
                    false)) {
    return all(*q);
  }
  gang_calls_ = 0;
  gang_exhausted_ = false;
  Statement stmt(snap_);
  Status why;
  bool placed = PlaceGangIn(g, stmt, why);
  std::vector<size_t> now_placed;
  for (size_t m : waiting) {
    if (placed && snap_.placement(pods_.pods[m].key) != nullptr) now_placed.push_back(m);
  }
  std::optional<Status> over;
  if (placed) over = QueueGate(now_placed, true);
  if (over) {
    (void)stmt.Rollback(0);
    all(*over);
  } else if (placed) {
    stmt.Commit();
    ChargeQueues(now_placed);
    for (size_t m : g.members) {
      const PodPlacement* p = snap_.placement(pods_.pods[m].key);
      if (!pods_.pods[m].bound_node.empty()) continue;
      if (p != nullptr) {
        Fill(m, p->node, out[m]);
      } else if (pods_.pods[m].problem) {
        out[m].status = *pods_.pods[m].problem;
      } else {
        out[m].status = Status::Of(Code::kUnschedulable, Stage::kGang,
                                   util::Cat("gang ", g.key, " runs with its minimum of ", g.min,
                                             " members; this one did not fit beside them"));
      }
    }
  } else {
    (void)stmt.Rollback(0);
    Status failure = GangFailure(g);
    if (failure.code != Code::kUnresolvable && why.stage == Stage::kTopology) failure = why;
    if (why.code == Code::kUnresolvable) failure = why;
    all(failure);
  }
  const double seconds = Now() - start;
  for (size_t m : g.members) out[m].seconds = seconds;
}

std::optional<Status> Session::TooLarge(const Gang& g, const std::vector<size_t>& members) {
  if (static_cast<int>(members.size()) != g.min) return std::nullopt;
  // Devices the gang needs per single-alternative request kind, against every matching
  // device of the cluster (an upper bound on what it could ever get).
  std::map<int, std::pair<int64_t, const alloc::Alternative*>> need;
  alloc::NodeIndex& index = snap_.index();
  for (size_t m : members) {
    for (const ClaimUse& u : pods_.pods[m].claims) {
      // An extended-resource claim may be served by a device plugin's count instead.
      if (u.extended || snap_.claim(u.key) != nullptr) continue;
      Status problem;
      const alloc::CompiledClaim* cc = Compiled(u, problem);
      if (cc == nullptr) continue;
      for (const alloc::CompiledRequest& r : cc->requests) {
        if (r.alternatives.size() != 1 || r.alternatives[0].all || r.alternatives[0].admin_access) {
          continue;
        }
        auto& [count, alt] = need[index.Intern(r.alternatives[0])];
        count += r.alternatives[0].count;
        alt = &r.alternatives[0];
      }
    }
  }
  for (const auto& [sig, want] : need) {
    int64_t total = 0;
    for (model::NodeId n = 0; n < snap_.inventory().nodes().size(); ++n) {
      total += index.Matching(sig, n);
    }
    if (want.first > total) {
      return Status::Of(
          Code::kUnresolvable, Stage::kGang,
          util::Cat("gang ", g.key, " needs ", want.first, " devices of class ",
                    want.second->class_name, " at once; the cluster has ", total, " that match"));
    }
  }
  return std::nullopt;
}

Status Session::GangFailure(const Gang& g) {
  if (gang_exhausted_) {
    return Status::Of(Code::kError, Stage::kGang,
                      util::Cat("gang ", g.key, ": the search gave up after ", gang_calls_,
                                " allocation attempts"));
  }
  std::vector<size_t> members;
  for (size_t m : g.members) {
    if (pods_.pods[m].bound_node.empty()) members.push_back(m);
  }
  int alone = 0, unresolvable = 0;
  std::optional<Status> first;
  for (size_t m : members) {
    Status st;
    if (pods_.pods[m].problem) {
      st = *pods_.pods[m].problem;
    } else {
      Statement probe(snap_);
      Status error;
      if (PlacePod(m, probe, nullptr, nullptr, error) != model::kNoId) {
        ++alone;
        continue;
      }
      st = error.ok() ? Diagnose(m, nullptr) : error;
    }
    if (st.code == Code::kUnresolvable) ++unresolvable;
    if (!first) {
      first = st;
      first->subject = util::Cat("gang ", g.key, " member ", pods_.pods[m].key);
    }
  }
  int n = static_cast<int>(members.size());
  if (alone < g.min && first) {
    if (first->code == Code::kUnresolvable && n - unresolvable >= g.min) {
      first->code = Code::kUnschedulable;
    }
    return *first;
  }
  if (std::optional<Status> big = TooLarge(g, members)) return *big;
  return Status::Of(
      Code::kUnschedulable, Stage::kGang,
      util::Cat("gang ", g.key, ": ", alone, " of its ", n,
                " members fit one at a time, but not the ", g.min, " it needs together"));
}

}  // namespace gpuplane::sched
