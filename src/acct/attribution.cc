#include "acct/attribution.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "util/strings.h"

namespace gpuplane::acct {
namespace {

std::string Label(const ContainerRef& c) {
  return util::Cat(c.namespace_name, "/", c.pod, "/", c.container);
}

// Left Riemann integral of a step series: each value holds until the next sample.
template <class T, class Value>
double Integral(const std::vector<const T*>& samples, Value value) {
  double sum = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    sum += value(*samples[i - 1]) * (samples[i]->t - samples[i - 1]->t);
  }
  return sum;
}

// Samples earlier first.
struct ByTime {
  bool operator()(const auto* a, const auto* b) const { return a->t < b->t; }
};

struct Usage {
  double sm = 0, memory = 0;
  int64_t max_memory = 0;
};

}  // namespace

double Prices::For(const std::string& model) const {
  auto it = per_gpu_hour.find(model);
  if (it != per_gpu_hour.end()) return it->second;
  return default_price.value_or(0);
}

std::vector<int64_t> SplitExactly(int64_t total, const std::vector<double>& weights) {
  std::vector<int64_t> out(weights.size(), 0);
  double sum = 0;
  for (double w : weights) sum += std::max(0.0, w);
  if (sum <= 0 || weights.empty()) return out;
  int64_t given = 0;
  std::vector<std::pair<double, size_t>> remainders;
  for (size_t i = 0; i < weights.size(); ++i) {
    double exact = static_cast<double>(total) * std::max(0.0, weights[i]) / sum;
    out[i] = static_cast<int64_t>(std::floor(exact));
    given += out[i];
    remainders.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < total && k < remainders.size(); ++k, ++given) {
    ++out[remainders[k].second];
  }
  return out;
}

namespace {

using Owners = std::vector<ContainerRef>;
using UsageByContainer = std::map<ContainerRef, Usage>;

// One attribution pass: the recording's devices one by one, the pods' usage and cost keyed
// by (container, GPU, MIG instance), the audit findings, and each PID's owner resolved once.
class Attributor {
 public:
  Attributor(const Recording& rec, const PidResolver& resolve, const Ownership& own,
             const Prices& prices)
      : rec_(rec), resolve_(resolve), own_(own), prices_(prices) {
    out_.seconds = std::max(0.0, rec.last_t - rec.first_t);
    for (const auto& [uuid, owners] : own.owners) {
      for (const ContainerRef& c : owners) allocated_[c].push_back(uuid);
    }
  }

  Attribution Run() && {
    std::map<std::string, std::vector<const DeviceSample*>> devices;
    for (const DeviceSample& s : rec_.devices) devices[s.uuid].push_back(&s);
    for (const MigSample& s : rec_.migs) instances_[s.parent_uuid][s.uuid].push_back(&s);
    for (auto& [uuid, samples] : devices) {
      std::stable_sort(samples.begin(), samples.end(), ByTime{});
      DeviceUsage du = Device(uuid, samples);
      if (du.mig) {
        MigDevice(du, samples);
      } else {
        WholeDevice(du, samples);
      }
      out_.devices.push_back(std::move(du));
    }
    for (auto& [key, p] : pods_) out_.pods.push_back(std::move(p));
    UnallocatedUses();
    std::sort(out_.audit.begin(), out_.audit.end(),
              [](const AuditFinding& a, const AuditFinding& b) {
                return std::tie(a.gpu_uuid, a.pid) < std::tie(b.gpu_uuid, b.pid);
              });
    return std::move(out_);
  }

 private:
  const std::optional<ProcessOwner>& OwnerOf(int64_t pid) {
    auto it = who_.find(pid);
    if (it == who_.end()) it = who_.emplace(pid, resolve_(pid)).first;
    return it->second;
  }

  const Owners& OwnersOf(const std::string& uuid) const {
    static const Owners kNone;
    auto it = own_.owners.find(uuid);
    return it == own_.owners.end() ? kNone : it->second;
  }

  PodUsage& Pod(const ContainerRef& c, const std::string& gpu, const std::string& mig) {
    PodUsage& p = pods_[{c, gpu, mig}];
    p.who = c;
    p.gpu_uuid = gpu;
    p.mig_instance = mig;
    return p;
  }

  void Audit(int64_t pid, const std::string& gpu, const std::optional<ProcessOwner>& o,
             const char* reason) {
    for (const AuditFinding& f : out_.audit) {
      if (f.pid == pid && f.gpu_uuid == gpu) return;
    }
    AuditFinding f{pid, gpu, o ? o->cgroup : "", o ? Label(o->container) : "", {}, reason};
    if (o) {
      auto it = allocated_.find(o->container);
      if (it != allocated_.end()) f.allocated = it->second;
    }
    out_.audit.push_back(std::move(f));
  }

  // The container a process may be charged to on `device`: it runs in a pod, and (when
  // ownership is known) in a container allocated the device. Null otherwise (audited).
  const ContainerRef* Legitimate(int64_t pid, const std::string& device, const Owners& owners) {
    const std::optional<ProcessOwner>& o = OwnerOf(pid);
    if (o && o->unknown) return nullptr;
    if (!o) {
      Audit(pid, device, o, "the process belongs to no pod");
      return nullptr;
    }
    if (!own_.owners.empty() &&
        std::find(owners.begin(), owners.end(), o->container) == owners.end()) {
      Audit(pid, device, o, "the container was not allocated this device");
      return nullptr;
    }
    return &o->container;
  }

  // Where an audited process's own use on `device` is summed (null: its owner is unknown, so
  // it was not audited).
  Usage* RogueUsage(int64_t pid, const std::string& device) {
    const std::optional<ProcessOwner>& o = OwnerOf(pid);
    if (o && o->unknown) return nullptr;
    return &rogue_[{pid, device}];
  }

  // What audited processes used on `device` together.
  Usage RogueOn(const std::string& device) const {
    Usage sum;
    for (const auto& [key, u] : rogue_) {
      if (key.second != device) continue;
      sum.sm += u.sm;
      sum.memory += u.memory;
    }
    return sum;
  }

  // Each finding's own use, and the use by pods of devices they were not allocated.
  void UnallocatedUses() {
    std::map<std::pair<ContainerRef, std::string>, UnallocatedUse> by_pod;
    for (AuditFinding& f : out_.audit) {
      auto it = rogue_.find({f.pid, f.gpu_uuid});
      if (it == rogue_.end()) continue;
      f.sm_seconds = it->second.sm;
      f.memory_byte_seconds = it->second.memory;
      f.max_memory_bytes = it->second.max_memory;
      const std::optional<ProcessOwner>& o = OwnerOf(f.pid);
      if (!o) continue;  // no pod to report
      UnallocatedUse& u = by_pod[{o->container, f.gpu_uuid}];
      u.who = o->container;
      u.device = f.gpu_uuid;
      u.sm_seconds += f.sm_seconds;
      u.memory_byte_seconds += f.memory_byte_seconds;
      u.max_memory_bytes = std::max(u.max_memory_bytes, f.max_memory_bytes);
    }
    for (auto& [key, u] : by_pod) out_.unallocated.push_back(std::move(u));
  }

  // The device's busy time, model and cost over the whole recording.
  DeviceUsage Device(const std::string& uuid, const std::vector<const DeviceSample*>& samples) {
    DeviceUsage du;
    du.gpu_uuid = uuid;
    du.model = samples.back()->model;
    du.mig = std::any_of(samples.begin(), samples.end(), [](const auto* s) { return s->mig; });
    double prev = rec_.first_t;
    for (const DeviceSample* s : samples) {
      du.busy_seconds += s->util_gpu / 100.0 * (s->t - prev);
      prev = s->t;
    }
    // Clamped so that any price and duration stay far inside int64 nano-dollars.
    du.cost_nano =
        std::llround(std::clamp(prices_.For(du.model) * out_.seconds / 3600 * 1e9, 0.0, 1e15));
    return du;
  }

  // Memory over time per container, from the process samples `match` selects on `device`
  // (processes not allocated it are audited, not counted); adds the containers to `users`.
  // Returns whether any sample matched.
  template <class Match>
  bool ProcessMemory(Match match, const std::string& device, const Owners& owners,
                     UsageByContainer& usage, std::set<ContainerRef>& users) {
    std::map<int64_t, std::vector<const ProcessSample*>> per_pid;
    for (const ProcessSample& p : rec_.processes) {
      if (match(p)) per_pid[p.pid].push_back(&p);
    }
    for (auto& [pid, ps] : per_pid) {
      const ContainerRef* c = Legitimate(pid, device, owners);
      Usage* u = c != nullptr ? &usage[*c] : RogueUsage(pid, device);
      if (u == nullptr) continue;
      std::stable_sort(ps.begin(), ps.end(), ByTime{});
      u->memory += Integral(ps, [](const ProcessSample& s) { return double(s.used_memory); });
      for (const ProcessSample* s : ps) u->max_memory = std::max(u->max_memory, s->used_memory);
      if (c != nullptr) users.insert(*c);
    }
    return !per_pid.empty();
  }

  // A MIG GPU: cost split by instance memory (what no instance holds is idle); each
  // instance's memory use and cost go to its owners.
  void MigDevice(DeviceUsage& du, const std::vector<const DeviceSample*>& samples) {
    const auto& insts = instances_[du.gpu_uuid];
    std::vector<std::string> ids;
    std::vector<double> weights;
    double used_memory = 0;
    for (const auto& [mig_uuid, ms] : insts) {
      ids.push_back(mig_uuid);
      weights.push_back(static_cast<double>(ms.back()->memory_total));
      used_memory += static_cast<double>(ms.back()->memory_total);
    }
    weights.push_back(std::max(0.0, static_cast<double>(samples.back()->memory_total) -
                                        used_memory));  // no instance there
    std::vector<int64_t> shares = SplitExactly(du.cost_nano, weights);
    // Whatever no instance takes (free memory, or every weight zero) is idle.
    int64_t taken = 0;
    for (size_t i = 0; i < ids.size(); ++i) taken += shares[i];
    du.idle_cost_nano += du.cost_nano - taken;
    for (size_t i = 0; i < ids.size(); ++i) {
      std::vector<const MigSample*> ms = insts.at(ids[i]);
      std::stable_sort(ms.begin(), ms.end(), ByTime{});
      MigInstance(du, ids[i], ms, shares[i]);
    }
  }

  void MigInstance(DeviceUsage& du, const std::string& id, const std::vector<const MigSample*>& ms,
                   int64_t share) {
    const std::string& uuid = du.gpu_uuid;
    const Owners& inst_owners = OwnersOf(id);
    // Memory per process on this instance; the instance's own figure when none reported.
    UsageByContainer usage;
    std::set<ContainerRef> users;
    const int instance = ms.back()->gpu_instance_id;
    const bool any_process = ProcessMemory(
        [&](const ProcessSample& p) { return p.uuid == uuid && p.gpu_instance_id == instance; }, id,
        inst_owners, usage, users);
    std::set<ContainerRef> inst_distinct(inst_owners.begin(), inst_owners.end());
    if (!any_process && inst_distinct.size() == 1) {
      Usage& u = usage[*inst_distinct.begin()];
      u.memory = Integral(ms, [](const MigSample& s) { return double(s.memory_used); });
      for (const MigSample* s : ms) u.max_memory = std::max(u.max_memory, s->memory_used);
    }
    for (const auto& [c, u] : usage) {
      PodUsage& p = Pod(c, uuid, id);
      p.memory_byte_seconds += u.memory;
      p.max_memory_bytes = std::max(p.max_memory_bytes, u.max_memory);
    }
    if (inst_owners.empty()) {
      du.idle_cost_nano += share;
      return;
    }
    std::vector<int64_t> parts = SplitExactly(share, std::vector<double>(inst_owners.size(), 1));
    for (size_t k = 0; k < inst_owners.size(); ++k)
      Pod(inst_owners[k], uuid, id).cost_nano += parts[k];
  }

  // Compute seconds per container from the per-process utilization samples on `uuid`.
  void ProcessCompute(const std::string& uuid, const Owners& owners, UsageByContainer& usage,
                      std::set<ContainerRef>& users) {
    std::vector<const ProcessUtilSample*> utils;
    for (const ProcessUtilSample& u : rec_.process_utils) {
      if (u.uuid == uuid) utils.push_back(&u);
    }
    std::stable_sort(utils.begin(), utils.end(),
                     [](const auto* a, const auto* b) { return a->ts_us < b->ts_us; });
    int64_t prev_ts = std::llround(rec_.first_t * 1e6);
    for (size_t i = 0; i < utils.size();) {
      int64_t ts = utils[i]->ts_us;
      double period = std::max<int64_t>(0, ts - prev_ts) / 1e6;
      for (; i < utils.size() && utils[i]->ts_us == ts; ++i) {
        const ContainerRef* c = Legitimate(utils[i]->pid, uuid, owners);
        Usage* u = c != nullptr ? &usage[*c] : RogueUsage(utils[i]->pid, uuid);
        if (u == nullptr) continue;
        u->sm += utils[i]->sm / 100.0 * period;
        if (c != nullptr) users.insert(*c);
      }
      prev_ts = ts;
    }
  }

  // A whole GPU: per-process compute from utilization samples, memory from process samples;
  // an exclusive device's whole use goes to its owner.
  void WholeDevice(DeviceUsage& du, const std::vector<const DeviceSample*>& samples) {
    const std::string& uuid = du.gpu_uuid;
    const Owners& owners = OwnersOf(uuid);
    std::set<ContainerRef> distinct(owners.begin(), owners.end());
    UsageByContainer usage;
    std::set<ContainerRef> users;
    ProcessCompute(uuid, owners, usage, users);
    ProcessMemory([&](const ProcessSample& p) { return p.uuid == uuid; }, uuid, owners, usage,
                  users);
    du.shared = owners.size() > 1 || users.size() > 1;
    if (!du.shared && distinct.size() == 1) {
      // Exclusive: the device's use is the owner's, less what audited processes used there
      // (reported as theirs); the owner still pays for the whole device.
      Usage& u = usage[*distinct.begin()];
      const Usage rogue = RogueOn(uuid);
      u.sm = std::max(0.0, du.busy_seconds - rogue.sm);
      u.memory = std::max(0.0, Integral(samples, [](const DeviceSample& s) {
                                 return double(s.memory_used);
                               }) - rogue.memory);
      for (const DeviceSample* s : samples) u.max_memory = std::max(u.max_memory, s->memory_used);
    }
    WholeDeviceCost(du, owners, usage);
  }

  // Cost: compute seconds to their containers, the rest by allocation (or idle).
  void WholeDeviceCost(DeviceUsage& du, const Owners& owners, const UsageByContainer& usage) {
    const std::string& uuid = du.gpu_uuid;
    double attributed = 0;
    for (const auto& [c, u] : usage) attributed += u.sm;
    du.unattributed_sm_seconds = std::max(0.0, du.busy_seconds - attributed);
    std::vector<ContainerRef> payers;
    std::vector<double> weights;
    for (const auto& [c, u] : usage) {
      payers.push_back(c);
      weights.push_back(u.sm);
      PodUsage& p = Pod(c, uuid, "");
      p.sm_seconds += u.sm;
      p.memory_byte_seconds += u.memory;
      p.max_memory_bytes = std::max(p.max_memory_bytes, u.max_memory);
    }
    weights.push_back(std::max(0.0, out_.seconds - attributed));
    std::vector<int64_t> parts = SplitExactly(du.cost_nano, weights);
    if (attributed + weights.back() <= 0) {
      parts.assign(weights.size(), 0);
      parts.back() = du.cost_nano;
    }
    for (size_t k = 0; k < payers.size(); ++k) Pod(payers[k], uuid, "").cost_nano += parts[k];
    const int64_t rest = parts.back();
    if (owners.empty()) {
      du.idle_cost_nano += rest;
      return;
    }
    std::vector<int64_t> by_allocation = SplitExactly(rest, std::vector<double>(owners.size(), 1));
    for (size_t k = 0; k < owners.size(); ++k)
      Pod(owners[k], uuid, "").cost_nano += by_allocation[k];
  }

  const Recording& rec_;
  const PidResolver& resolve_;
  const Ownership& own_;
  const Prices& prices_;
  Attribution out_;
  std::map<int64_t, std::optional<ProcessOwner>> who_;          // resolved once per PID
  std::map<ContainerRef, std::vector<std::string>> allocated_;  // for audit evidence
  std::map<std::string, std::map<std::string, std::vector<const MigSample*>>> instances_;
  std::map<std::tuple<ContainerRef, std::string, std::string>, PodUsage> pods_;
  std::map<std::pair<int64_t, std::string>, Usage> rogue_;  // audited (pid, device) use
};

}  // namespace

Attribution Attribute(const Recording& rec, const PidResolver& resolve, const Ownership& own,
                      const Prices& prices) {
  return Attributor(rec, resolve, own, prices).Run();
}

}  // namespace gpuplane::acct
