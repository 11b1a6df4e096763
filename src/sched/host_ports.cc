#include "sched/host_ports.h"

#include "absl/strings/numbers.h"

namespace gpuplane::sched {
namespace {

constexpr char kAnyAddress[] = "0.0.0.0";

int32_t Port(const api::Doc& map, std::string_view key) {
  int32_t v = 0;
  std::string text = map.ScalarText(key);
  return absl::SimpleAtoi(text, &v) && v > 0 && v < 65536 ? v : 0;
}

}  // namespace

std::vector<HostPort> HostPortsOf(const api::PodSpec& spec) {
  std::vector<HostPort> out;
  auto host_network = spec.extra.find("hostNetwork");
  const bool on_host = host_network != spec.extra.end() && host_network->second.is_scalar() &&
                       host_network->second.bool_value();
  for (const api::Container& c : spec.containers) {
    auto ports = c.extra.find("ports");
    if (ports == c.extra.end() || !ports->second.is_seq()) continue;
    for (const api::Doc& p : ports->second.items()) {
      if (!p.is_map()) continue;
      int32_t port = Port(p, "hostPort");
      if (port == 0 && on_host) port = Port(p, "containerPort");
      if (port == 0) continue;
      HostPort h{p.ScalarText("protocol"), p.ScalarText("hostIP"), port};
      if (h.protocol.empty()) h.protocol = "TCP";
      if (h.ip.empty()) h.ip = kAnyAddress;
      out.push_back(std::move(h));
    }
  }
  return out;
}

bool Conflict(const HostPort& a, const HostPort& b) {
  return a.port == b.port && a.protocol == b.protocol &&
         (a.ip == b.ip || a.ip == kAnyAddress || b.ip == kAnyAddress);
}

bool AnyConflict(const std::vector<HostPort>& want, const std::vector<HostPort>& used) {
  for (const HostPort& w : want) {
    for (const HostPort& u : used) {
      if (Conflict(w, u)) return true;
    }
  }
  return false;
}

}  // namespace gpuplane::sched
