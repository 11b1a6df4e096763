#include "acct/metrics.h"

#include <cstdio>

#include "util/strings.h"

namespace gpuplane::acct {
namespace {

void Header(std::string& out, const char* name, const char* type, const char* help) {
  util::Append(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

void Number(std::string& out, double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out += buf;
}

}  // namespace

std::string EscapeLabel(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// One metric family over rows of T: its name, type, help and value of a row.
template <class T>
struct Metric {
  const char* name;
  const char* type;
  const char* help;
  double (*value)(const T&);
};

constexpr Metric<PodUsage> kPodMetrics[] = {
    {"gpuplane_pod_gpu_sm_seconds_total", "counter",
     "GPU-seconds of SM time attributed to the container",
     [](const PodUsage& p) { return p.sm_seconds; }},
    {"gpuplane_pod_gpu_memory_byte_seconds_total", "counter",
     "Integral of the container's GPU memory use over time",
     [](const PodUsage& p) { return p.memory_byte_seconds; }},
    {"gpuplane_pod_gpu_memory_max_bytes", "gauge", "Largest GPU memory use seen",
     [](const PodUsage& p) { return static_cast<double>(p.max_memory_bytes); }},
    {"gpuplane_pod_gpu_cost_dollars_total", "counter",
     "Cost of the container's share of the GPU, in dollars",
     [](const PodUsage& p) { return static_cast<double>(p.cost_nano) / 1e9; }},
};

constexpr Metric<DeviceUsage> kDeviceMetrics[] = {
    {"gpuplane_gpu_busy_seconds_total", "counter", "Seconds the GPU had a kernel running",
     [](const DeviceUsage& d) { return d.busy_seconds; }},
    {"gpuplane_gpu_unattributed_sm_seconds_total", "counter",
     "Busy GPU time that no process sample explains",
     [](const DeviceUsage& d) { return d.unattributed_sm_seconds; }},
    {"gpuplane_gpu_cost_dollars_total", "counter", "Cost of the GPU, in dollars",
     [](const DeviceUsage& d) { return static_cast<double>(d.cost_nano) / 1e9; }},
    {"gpuplane_gpu_idle_cost_dollars_total", "counter", "Cost of the GPU no container was charged",
     [](const DeviceUsage& d) { return static_cast<double>(d.idle_cost_nano) / 1e9; }},
};

constexpr Metric<UnallocatedUse> kUnallocatedMetrics[] = {
    {"gpuplane_unallocated_use_sm_seconds_total", "counter",
     "GPU-seconds of SM time a container used on a device it was not allocated",
     [](const UnallocatedUse& u) { return u.sm_seconds; }},
    {"gpuplane_unallocated_use_memory_byte_seconds_total", "counter",
     "Integral of a container's GPU memory use on a device it was not allocated",
     [](const UnallocatedUse& u) { return u.memory_byte_seconds; }},
    {"gpuplane_unallocated_use_memory_max_bytes", "gauge",
     "Largest GPU memory use of a container on a device it was not allocated",
     [](const UnallocatedUse& u) { return static_cast<double>(u.max_memory_bytes); }},
};

// Every family of `metrics`, one line per row with that row's label set ("{...} ").
template <class T, size_t N>
void Families(const Metric<T> (&metrics)[N], const std::vector<T>& rows,
              const std::vector<std::string>& labels, std::string& out) {
  for (const Metric<T>& m : metrics) {
    Header(out, m.name, m.type, m.help);
    for (size_t i = 0; i < rows.size(); ++i) {
      util::Append(out, m.name, labels[i]);
      Number(out, m.value(rows[i]));
      out += '\n';
    }
  }
}

void PodMetrics(const Attribution& t, std::string& out) {
  std::map<std::string, std::string> model_of;
  for (const DeviceUsage& d : t.devices) model_of[d.gpu_uuid] = d.model;
  std::vector<std::string> labels;
  labels.reserve(t.pods.size());
  for (const PodUsage& p : t.pods) {
    util::Append(labels.emplace_back(), "{namespace=\"", EscapeLabel(p.who.namespace_name),
                 "\",pod=\"", EscapeLabel(p.who.pod), "\",container=\"",
                 EscapeLabel(p.who.container), "\",gpu_uuid=\"", EscapeLabel(p.gpu_uuid),
                 "\",mig_instance=\"", EscapeLabel(p.mig_instance), "\",model=\"",
                 EscapeLabel(model_of[p.gpu_uuid]), "\"} ");
  }
  Families(kPodMetrics, t.pods, labels, out);
}

void DeviceMetrics(const Attribution& t, std::string& out) {
  std::vector<std::string> labels;
  labels.reserve(t.devices.size());
  for (const DeviceUsage& d : t.devices) {
    util::Append(labels.emplace_back(), "{gpu_uuid=\"", EscapeLabel(d.gpu_uuid), "\",model=\"",
                 EscapeLabel(d.model), "\"} ");
  }
  Families(kDeviceMetrics, t.devices, labels, out);
}

void UnallocatedMetrics(const Attribution& t, std::string& out) {
  std::vector<std::string> labels;
  labels.reserve(t.unallocated.size());
  for (const UnallocatedUse& u : t.unallocated) {
    util::Append(labels.emplace_back(), "{namespace=\"", EscapeLabel(u.who.namespace_name),
                 "\",pod=\"", EscapeLabel(u.who.pod), "\",container=\"",
                 EscapeLabel(u.who.container), "\",device=\"", EscapeLabel(u.device), "\"} ");
  }
  Families(kUnallocatedMetrics, t.unallocated, labels, out);
}

}  // namespace

std::string RenderMetrics(const Attribution& t, const AgentCounters& agent) {
  std::string out;
  out.reserve(256 * (t.pods.size() * 4 + t.devices.size() * 4 + 8));
  PodMetrics(t, out);
  DeviceMetrics(t, out);
  Header(out, "gpuplane_isolation_violation", "gauge",
         "A GPU process outside its container's allocation (1 per finding)");
  for (const AuditFinding& f : t.audit) {
    util::Append(out, "gpuplane_isolation_violation{pid=\"", f.pid, "\",gpu_uuid=\"",
                 EscapeLabel(f.gpu_uuid), "\",pod=\"", EscapeLabel(f.pod), "\",reason=\"",
                 EscapeLabel(f.reason), "\"} 1\n");
  }
  UnallocatedMetrics(t, out);
  Header(out, "gpuplane_agent_errors_total", "counter", "Problems met by the agent, by kind");
  for (const auto& [kind, n] : agent.errors) {
    util::Append(out, "gpuplane_agent_errors_total{kind=\"", EscapeLabel(kind), "\"} ", n, "\n");
  }
  return out;
}

}  // namespace gpuplane::acct
