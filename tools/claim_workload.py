#!/usr/bin/env python3
"""Writes a workload of Pods with DRA claims for `gpuplane simulate --mode replay --workload`.

  claim_workload.py JOBS SEED [MEAN_GAP_SECONDS] > FILE

Each job is a ResourceClaimTemplate and a Pod that uses it, with the simulator's arrival and
duration annotations (sim.gpuplane.io/arrival, /duration, seconds). Arrivals are a Poisson
process (mean gap 250 s unless given); durations uniform in 300-20,000 s. 40% of the jobs ask
for a small MIG slice, else a whole GPU (firstAvailable); the rest for 1, 2, 4 or 8 GPUs
with at least 40, 80 or 120 GiB each, on one NVLink domain when more than one. Deterministic
for a seed. Used by the claims replay benchmark in docs/PERFORMANCE.md.
"""
import random
import sys

MIG_OR_WHOLE = """      devices:
        requests:
        - name: gpu
          firstAvailable:
          - name: small
            deviceClassName: mig.nvidia.com
            selectors:
            - cel: {expression: "device.attributes['gpu.nvidia.com'].profile.startsWith('1g.')"}
          - name: whole
            deviceClassName: gpu.nvidia.com"""


def gpus(count, gib):
    spec = f"""      devices:
        requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
            count: {count}
            selectors:
            - cel: {{expression: "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{gib}Gi')) >= 0"}}"""
    if count > 1:
        spec += "\n        constraints:\n        - matchAttribute: gpu.nvidia.com/nvlinkDomain"
    return spec


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    jobs, seed = int(sys.argv[1]), int(sys.argv[2])
    gap = float(sys.argv[3]) if len(sys.argv) == 4 else 250.0
    rng = random.Random(seed)
    t = 0.0
    docs = []
    for i in range(jobs):
        t += rng.expovariate(1 / gap)
        duration = int(rng.uniform(300, 20000))
        if rng.random() < 0.4:
            spec = MIG_OR_WHOLE
        else:
            spec = gpus(rng.choice([1, 1, 2, 4, 8]), rng.choice([40, 80, 120]))
        name = f"job-{i}"
        docs.append(f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}, namespace: sim}}
spec:
  spec:
{spec}
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: sim
  annotations: {{sim.gpuplane.io/arrival: "{t:.0f}", sim.gpuplane.io/duration: "{duration}"}}
spec:
  containers: [{{name: c, image: x}}]
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: {name}""")
    print("\n".join(docs))


if __name__ == "__main__":
    main()
