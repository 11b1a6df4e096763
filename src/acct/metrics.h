// Prometheus text exposition (format 0.0.4) of per-pod and per-device GPU accounting:
// `gpuplane_` prefix, base units (seconds, bytes, dollars), counters end in `_total`, labels
// namespace, pod, container, gpu_uuid, mig_instance, model; label values escaped; each name's
// samples grouped under one HELP and TYPE.
// Pure functions returning text; thread-safe.
#ifndef GPUPLANE_ACCT_METRICS_H_
#define GPUPLANE_ACCT_METRICS_H_

#include <cstdint>
#include <map>
#include <string>

#include "acct/attribution.h"

namespace gpuplane::acct {

struct AgentCounters {
  std::map<std::string, int64_t> errors;  // by kind: nvml_not_supported, replay_line, ...
};

std::string RenderMetrics(const Attribution& totals, const AgentCounters& agent);

// Escapes a label value: backslash, double quote and newline.
std::string EscapeLabel(const std::string& value);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_METRICS_H_
