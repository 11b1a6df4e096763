// The openb pod trace (../shared/data/openb) as a multi-tenant workload for the tenant replay
// (tenant_replay.h): its best-effort (qos BE) GPU pods are the opportunistic, preemptible
// class, everything else (LS, Guaranteed, Burstable) is non-preemptible work of one tenant
// that is guaranteed the whole cluster. Each GPU pod is a job that arrives at its creation
// time and runs until its deletion time (to the trace's last deletion when it has none).
// The tenant replay counts whole GPUs, as Kubernetes' `nvidia.com/gpu` does: a pod asking for
// a share of one GPU takes a whole one (the note says how many). CPU-only pods are left out.
// Pure function; thread-safe.
#ifndef GPUPLANE_SIM_OPENB_TENANTS_H_
#define GPUPLANE_SIM_OPENB_TENANTS_H_

#include "sim/tenant_workload.h"
#include "sim/trace.h"

namespace gpuplane::sim {

// `with_best_effort` false leaves the BE pods out (the baseline the opportunistic figures are
// read against).
TenantWorkload FromOpenb(const PodTrace& pods, int cluster_gpus, bool with_best_effort);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_OPENB_TENANTS_H_
