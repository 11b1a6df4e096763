// Fuzz target for the trace readers (openb nodes and pods, spot nodes, Philly jobs) and the
// tenant scenario reader: any input either parses, with bad rows reported and skipped, or is
// refused with a message; nothing crashes, and every kept row is within the documented ranges.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/philly.h"
#include "sim/tenant_scenario.h"
#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto pods = gpuplane::sim::ParseOpenbPods(text, "fuzz.csv"); pods.ok()) {
    for (const auto& p : pods->pods) {
      if (p.gpu_milli < 0 || p.gpu_milli > 1000 || p.num_gpu < 0 || p.num_gpu > 64)
        __builtin_trap();
    }
  }
  if (auto nodes = gpuplane::sim::ParseOpenbNodes(text, "fuzz.csv"); nodes.ok()) {
    for (const auto& n : nodes->nodes) {
      if (n.gpus < 0 || n.gpus > 64 || (n.gpus > 0 && n.model.empty())) __builtin_trap();
    }
  }
  (void)gpuplane::sim::ParseSpotNodes(text, "fuzz.csv");
  if (auto jobs = gpuplane::sim::ParsePhilly(text, "fuzz.csv"); jobs.ok()) {
    double last = 0;
    for (const auto& j : jobs->jobs) {
      if (j.gpus < 1 || j.gpus > 1024 || j.tenant.empty() || !(j.duration >= 0) ||
          !(j.submit >= last)) {
        __builtin_trap();
      }
      last = j.submit;
    }
    int sum = 0;
    for (const auto& t : gpuplane::sim::TenantGuarantees(*jobs, 64)) sum += t.guarantee_gpus;
    if (!jobs->jobs.empty() && sum != 64 && sum != 0) __builtin_trap();
  }
  if (auto s = gpuplane::sim::ParseTenantScenario(text, "fuzz.txt"); s.ok()) {
    const auto& w = s->workload;
    if (s->expectations.empty() || s->job_names.size() != w.jobs.size() ||
        w.opportunistic.size() != w.tenants.size() || s->options.nodes < 1) {
      __builtin_trap();
    }
    for (const auto& j : w.jobs) {
      if (j.gpus < 1 || j.tenant < 0 || static_cast<size_t>(j.tenant) >= w.tenants.size()) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
