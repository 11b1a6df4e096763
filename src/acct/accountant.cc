#include "acct/accountant.h"

#include <algorithm>

namespace gpuplane::acct {
namespace {

// The records of `pass` that the next window starts from: everything, except that process
// utilization keeps only each GPU's latest sample time (earlier samples were already counted,
// and only the latest one bounds the next sample's period).
Recording AnchorOf(const Recording& pass) {
  Recording a;
  a.devices = pass.devices;
  a.migs = pass.migs;
  a.processes = pass.processes;
  std::map<std::string, int64_t> latest;
  for (const ProcessUtilSample& u : pass.process_utils) {
    int64_t& l = latest.try_emplace(u.uuid, u.ts_us).first->second;
    l = std::max(l, u.ts_us);
  }
  for (const ProcessUtilSample& u : pass.process_utils) {
    if (u.ts_us == latest[u.uuid]) a.process_utils.push_back(u);
  }
  a.first_t = pass.first_t;
  a.last_t = pass.last_t;
  return a;
}

template <class T>
void Append(std::vector<T>& into, const std::vector<T>& from) {
  into.insert(into.end(), from.begin(), from.end());
}

}  // namespace

void AddUsage(PodUsage& into, const PodUsage& w) {
  into.sm_seconds += w.sm_seconds;
  into.memory_byte_seconds += w.memory_byte_seconds;
  into.max_memory_bytes = std::max(into.max_memory_bytes, w.max_memory_bytes);
  into.cost_nano += w.cost_nano;
}

void AddUsage(UnallocatedUse& into, const UnallocatedUse& w) {
  into.sm_seconds += w.sm_seconds;
  into.memory_byte_seconds += w.memory_byte_seconds;
  into.max_memory_bytes = std::max(into.max_memory_bytes, w.max_memory_bytes);
}

void AddUsage(DeviceUsage& into, const DeviceUsage& w) {
  if (!w.model.empty()) into.model = w.model;
  into.shared = into.shared || w.shared;
  into.mig = into.mig || w.mig;
  into.busy_seconds += w.busy_seconds;
  into.unattributed_sm_seconds += w.unattributed_sm_seconds;
  into.idle_cost_nano += w.idle_cost_nano;
  into.cost_nano += w.cost_nano;
}

std::optional<Attribution> Accountant::Add(const Recording& pass,
                                           std::vector<AuditFinding>* new_findings) {
  if (!have_anchor_ || pass.first_t <= anchor_.last_t) {
    // First pass, or time went backwards (a clock step): start a new window here.
    anchor_ = AnchorOf(pass);
    have_anchor_ = true;
    return std::nullopt;
  }
  Recording window = anchor_;
  Append(window.devices, pass.devices);
  Append(window.migs, pass.migs);
  Append(window.processes, pass.processes);
  Append(window.process_utils, pass.process_utils);
  window.first_t = anchor_.last_t;
  window.last_t = pass.last_t;
  Attribution a = Attribute(window, resolve_, ownership_, prices_);
  for (const AuditFinding& f : a.audit) {
    auto [it, fresh] = audited_.try_emplace({f.pid, f.gpu_uuid}, audit_.size());
    if (!fresh) {  // seen before: its use adds up
      AuditFinding& seen = audit_[it->second];
      seen.sm_seconds += f.sm_seconds;
      seen.memory_byte_seconds += f.memory_byte_seconds;
      seen.max_memory_bytes = std::max(seen.max_memory_bytes, f.max_memory_bytes);
      continue;
    }
    audit_.push_back(f);
    if (new_findings != nullptr) new_findings->push_back(f);
  }
  Accumulate(a);
  anchor_ = AnchorOf(pass);
  return a;
}

void Accountant::Accumulate(const Attribution& w) {
  for (const PodUsage& p : w.pods) {
    PodUsage& into = pods_[{p.who, p.gpu_uuid, p.mig_instance}];
    into.who = p.who;
    into.gpu_uuid = p.gpu_uuid;
    into.mig_instance = p.mig_instance;
    AddUsage(into, p);
  }
  for (const DeviceUsage& d : w.devices) {
    DeviceUsage& into = devices_[d.gpu_uuid];
    into.gpu_uuid = d.gpu_uuid;
    AddUsage(into, d);
  }
  for (const UnallocatedUse& u : w.unallocated) {
    UnallocatedUse& into = unallocated_[{u.who, u.device}];
    into.who = u.who;
    into.device = u.device;
    AddUsage(into, u);
  }
  seconds_ += w.seconds;
}

void Accountant::AddTotals(const Attribution& totals) {
  Attribution copy = totals;
  copy.audit.clear();
  Accumulate(copy);
}

Attribution Accountant::Totals() const {
  Attribution t;
  t.pods.reserve(pods_.size());
  for (const auto& [key, p] : pods_) t.pods.push_back(p);
  t.devices.reserve(devices_.size());
  for (const auto& [uuid, d] : devices_) t.devices.push_back(d);
  t.audit = audit_;
  for (const auto& [key, u] : unallocated_) t.unallocated.push_back(u);
  t.seconds = seconds_;
  return t;
}

}  // namespace gpuplane::acct
