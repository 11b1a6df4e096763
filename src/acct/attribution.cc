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

Attribution Attribute(const Recording& rec, const PidResolver& resolve, const Ownership& own,
                      const Prices& prices) {
  Attribution out;
  out.seconds = std::max(0.0, rec.last_t - rec.first_t);
  std::map<int64_t, std::optional<ProcessOwner>> who;  // resolved once per PID
  auto owner_of = [&](int64_t pid) -> const std::optional<ProcessOwner>& {
    auto it = who.find(pid);
    if (it == who.end()) it = who.emplace(pid, resolve(pid)).first;
    return it->second;
  };
  std::map<std::string, std::vector<const DeviceSample*>> devices;
  for (const DeviceSample& s : rec.devices) devices[s.uuid].push_back(&s);
  std::map<std::string, std::map<std::string, std::vector<const MigSample*>>> instances;
  for (const MigSample& s : rec.migs) instances[s.parent_uuid][s.uuid].push_back(&s);
  auto by_time = [](const auto* a, const auto* b) { return a->t < b->t; };
  std::map<ContainerRef, std::vector<std::string>> allocated;  // for audit evidence
  for (const auto& [uuid, owners] : own.owners) {
    for (const ContainerRef& c : owners) allocated[c].push_back(uuid);
  }
  std::map<std::tuple<ContainerRef, std::string, std::string>, PodUsage> pods;
  auto pod = [&](const ContainerRef& c, const std::string& gpu,
                 const std::string& mig) -> PodUsage& {
    PodUsage& p = pods[{c, gpu, mig}];
    p.who = c;
    p.gpu_uuid = gpu;
    p.mig_instance = mig;
    return p;
  };
  auto audit = [&](int64_t pid, const std::string& gpu, const std::optional<ProcessOwner>& o,
                   const char* reason) {
    for (const AuditFinding& f : out.audit) {
      if (f.pid == pid && f.gpu_uuid == gpu) return;
    }
    AuditFinding f{pid, gpu, o ? o->cgroup : "", o ? Label(o->container) : "", {}, reason};
    if (o) {
      auto it = allocated.find(o->container);
      if (it != allocated.end()) f.allocated = it->second;
    }
    out.audit.push_back(std::move(f));
  };
  // Whether a process may be charged on `device`: it runs in a pod, and (when ownership is
  // known) in a container allocated the device.
  auto legitimate = [&](int64_t pid, const std::string& device,
                        const std::vector<ContainerRef>& owners) -> const ContainerRef* {
    const std::optional<ProcessOwner>& o = owner_of(pid);
    if (o && o->unknown) return nullptr;
    if (!o) {
      audit(pid, device, o, "the process belongs to no pod");
      return nullptr;
    }
    if (!own.owners.empty() &&
        std::find(owners.begin(), owners.end(), o->container) == owners.end()) {
      audit(pid, device, o, "the container was not allocated this device");
      return nullptr;
    }
    return &o->container;
  };

  for (auto& [uuid, samples] : devices) {
    std::stable_sort(samples.begin(), samples.end(), by_time);
    DeviceUsage du;
    du.gpu_uuid = uuid;
    du.model = samples.back()->model;
    du.mig = std::any_of(samples.begin(), samples.end(), [](const auto* s) { return s->mig; });
    double prev = rec.first_t;
    for (const DeviceSample* s : samples) {
      du.busy_seconds += s->util_gpu / 100.0 * (s->t - prev);
      prev = s->t;
    }
    // Clamped so that any price and duration stay far inside int64 nano-dollars.
    du.cost_nano =
        std::llround(std::clamp(prices.For(du.model) * out.seconds / 3600 * 1e9, 0.0, 1e15));
    auto owners_it = own.owners.find(uuid);
    const std::vector<ContainerRef> no_owners;
    const std::vector<ContainerRef>& owners =
        owners_it == own.owners.end() ? no_owners : owners_it->second;
    std::set<ContainerRef> distinct(owners.begin(), owners.end());

    if (du.mig) {
      // Cost by instance memory; each instance's usage and cost to its owners.
      const auto& insts = instances[uuid];
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
        std::stable_sort(ms.begin(), ms.end(), by_time);
        auto inst_owners_it = own.owners.find(ids[i]);
        std::vector<ContainerRef> inst_owners = inst_owners_it == own.owners.end()
                                                    ? std::vector<ContainerRef>{}
                                                    : inst_owners_it->second;
        // Memory per process on this instance; the instance's own figure when none reported.
        std::map<ContainerRef, Usage> usage;
        std::map<int64_t, std::vector<const ProcessSample*>> per_pid;
        for (const ProcessSample& p : rec.processes) {
          if (p.uuid == uuid && p.gpu_instance_id == ms.back()->gpu_instance_id) {
            per_pid[p.pid].push_back(&p);
          }
        }
        for (auto& [pid, ps] : per_pid) {
          const ContainerRef* c = legitimate(pid, ids[i], inst_owners);
          if (c == nullptr) continue;
          std::stable_sort(ps.begin(), ps.end(), by_time);
          Usage& u = usage[*c];
          u.memory += Integral(ps, [](const ProcessSample& s) { return double(s.used_memory); });
          for (const ProcessSample* s : ps) u.max_memory = std::max(u.max_memory, s->used_memory);
        }
        std::set<ContainerRef> inst_distinct(inst_owners.begin(), inst_owners.end());
        if (per_pid.empty() && inst_distinct.size() == 1) {
          Usage& u = usage[*inst_distinct.begin()];
          u.memory = Integral(ms, [](const MigSample& s) { return double(s.memory_used); });
          for (const MigSample* s : ms) u.max_memory = std::max(u.max_memory, s->memory_used);
        }
        for (const auto& [c, u] : usage) {
          PodUsage& p = pod(c, uuid, ids[i]);
          p.memory_byte_seconds += u.memory;
          p.max_memory_bytes = std::max(p.max_memory_bytes, u.max_memory);
        }
        if (inst_owners.empty()) {
          du.idle_cost_nano += shares[i];
          continue;
        }
        std::vector<int64_t> parts =
            SplitExactly(shares[i], std::vector<double>(inst_owners.size(), 1));
        for (size_t k = 0; k < inst_owners.size(); ++k)
          pod(inst_owners[k], uuid, ids[i]).cost_nano += parts[k];
      }
      out.devices.push_back(std::move(du));
      continue;
    }

    // Whole GPU: per-process compute from utilization samples, memory from process samples.
    std::vector<const ProcessUtilSample*> utils;
    for (const ProcessUtilSample& u : rec.process_utils) {
      if (u.uuid == uuid) utils.push_back(&u);
    }
    std::stable_sort(utils.begin(), utils.end(),
                     [](const auto* a, const auto* b) { return a->ts_us < b->ts_us; });
    std::map<ContainerRef, Usage> usage;
    std::set<ContainerRef> users;
    int64_t prev_ts = std::llround(rec.first_t * 1e6);
    for (size_t i = 0; i < utils.size();) {
      int64_t ts = utils[i]->ts_us;
      double period = std::max<int64_t>(0, ts - prev_ts) / 1e6;
      for (; i < utils.size() && utils[i]->ts_us == ts; ++i) {
        const ContainerRef* c = legitimate(utils[i]->pid, uuid, owners);
        if (c == nullptr) continue;
        usage[*c].sm += utils[i]->sm / 100.0 * period;
        users.insert(*c);
      }
      prev_ts = ts;
    }
    std::map<int64_t, std::vector<const ProcessSample*>> per_pid;
    for (const ProcessSample& p : rec.processes) {
      if (p.uuid == uuid) per_pid[p.pid].push_back(&p);
    }
    for (auto& [pid, ps] : per_pid) {
      const ContainerRef* c = legitimate(pid, uuid, owners);
      if (c == nullptr) continue;
      std::stable_sort(ps.begin(), ps.end(), by_time);
      Usage& u = usage[*c];
      u.memory += Integral(ps, [](const ProcessSample& s) { return double(s.used_memory); });
      for (const ProcessSample* s : ps) u.max_memory = std::max(u.max_memory, s->used_memory);
      users.insert(*c);
    }
    du.shared = owners.size() > 1 || users.size() > 1;
    if (!du.shared && distinct.size() == 1) {  // exclusive: everything to the owner
      Usage& u = usage[*distinct.begin()];
      u.sm = du.busy_seconds;
      u.memory = Integral(samples, [](const DeviceSample& s) { return double(s.memory_used); });
      for (const DeviceSample* s : samples) u.max_memory = std::max(u.max_memory, s->memory_used);
    }
    double attributed = 0;
    for (const auto& [c, u] : usage) attributed += u.sm;
    du.unattributed_sm_seconds = std::max(0.0, du.busy_seconds - attributed);
    // Cost: compute seconds to their containers, the rest by allocation (or idle).
    std::vector<ContainerRef> payers;
    std::vector<double> weights;
    for (const auto& [c, u] : usage) {
      payers.push_back(c);
      weights.push_back(u.sm);
      PodUsage& p = pod(c, uuid, "");
      p.sm_seconds += u.sm;
      p.memory_byte_seconds += u.memory;
      p.max_memory_bytes = std::max(p.max_memory_bytes, u.max_memory);
    }
    weights.push_back(std::max(0.0, out.seconds - attributed));
    std::vector<int64_t> parts = SplitExactly(du.cost_nano, weights);
    if (attributed + weights.back() <= 0)
      parts.assign(weights.size(), 0), parts.back() = du.cost_nano;
    for (size_t k = 0; k < payers.size(); ++k) pod(payers[k], uuid, "").cost_nano += parts[k];
    int64_t rest = parts.back();
    if (owners.empty()) {
      du.idle_cost_nano += rest;
    } else {
      std::vector<int64_t> by_allocation =
          SplitExactly(rest, std::vector<double>(owners.size(), 1));
      for (size_t k = 0; k < owners.size(); ++k)
        pod(owners[k], uuid, "").cost_nano += by_allocation[k];
    }
    out.devices.push_back(std::move(du));
  }
  for (auto& [key, p] : pods) out.pods.push_back(std::move(p));
  std::sort(out.audit.begin(), out.audit.end(), [](const AuditFinding& a, const AuditFinding& b) {
    return std::tie(a.gpu_uuid, a.pid) < std::tie(b.gpu_uuid, b.pid);
  });
  return out;
}

}  // namespace gpuplane::acct
