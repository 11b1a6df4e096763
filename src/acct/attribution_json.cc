#include "acct/attribution_json.h"

#include <cmath>

#include "nlohmann/json.hpp"

namespace gpuplane::acct {
namespace {

double Dollars(int64_t nano) { return static_cast<double>(nano) / 1e9; }
double Round(double v, double scale) {
  return static_cast<double>(std::llround(v * scale)) / scale;
}

}  // namespace

std::string AttributionJson(const Attribution& a) {
  nlohmann::ordered_json doc;
  nlohmann::ordered_json jp = nlohmann::ordered_json::array();
  for (const PodUsage& p : a.pods) {
    nlohmann::ordered_json j = {{"namespace", p.who.namespace_name},
                                {"pod", p.who.pod},
                                {"container", p.who.container},
                                {"gpu_uuid", p.gpu_uuid}};
    if (!p.mig_instance.empty()) j["mig_instance"] = p.mig_instance;
    j["sm_seconds"] = Round(p.sm_seconds, 1e6);
    j["memory_byte_seconds"] = Round(p.memory_byte_seconds, 1);
    j["max_memory_bytes"] = p.max_memory_bytes;
    j["cost"] = Dollars(p.cost_nano);
    jp.push_back(j);
  }
  nlohmann::ordered_json jd = nlohmann::ordered_json::array();
  for (const DeviceUsage& d : a.devices) {
    jd.push_back({{"gpu_uuid", d.gpu_uuid},
                  {"model", d.model},
                  {"shared", d.shared},
                  {"busy_seconds", Round(d.busy_seconds, 1e6)},
                  {"unattributed_sm_seconds", Round(d.unattributed_sm_seconds, 1e6)},
                  {"idle_cost", Dollars(d.idle_cost_nano)},
                  {"cost", Dollars(d.cost_nano)}});
  }
  nlohmann::ordered_json ja = nlohmann::ordered_json::array();
  for (const AuditFinding& f : a.audit) {
    ja.push_back({{"pid", f.pid},
                  {"gpu_uuid", f.gpu_uuid},
                  {"cgroup", f.cgroup},
                  {"pod", f.pod},
                  {"allocated", f.allocated},
                  {"reason", f.reason},
                  {"sm_seconds", Round(f.sm_seconds, 1e6)},
                  {"memory_byte_seconds", Round(f.memory_byte_seconds, 1)},
                  {"max_memory_bytes", f.max_memory_bytes}});
  }
  nlohmann::ordered_json ju = nlohmann::ordered_json::array();
  for (const UnallocatedUse& u : a.unallocated) {
    ju.push_back({{"namespace", u.who.namespace_name},
                  {"pod", u.who.pod},
                  {"container", u.who.container},
                  {"device", u.device},
                  {"sm_seconds", Round(u.sm_seconds, 1e6)},
                  {"memory_byte_seconds", Round(u.memory_byte_seconds, 1)},
                  {"max_memory_bytes", u.max_memory_bytes}});
  }
  doc["pods"] = jp;
  doc["devices"] = jd;
  doc["audit"] = ja;
  doc["unallocated"] = ju;
  return doc.dump() + "\n";
}

}  // namespace gpuplane::acct
