#!/usr/bin/env python3
"""Writes the inputs of the scheduling benchmarks (docs/PERFORMANCE.md, scripts/sched_bench.sh).

  sched_bench_inputs.py claims N FILE          N one-GPU ResourceClaims with a CEL selector
  sched_bench_inputs.py busy NODES FILE        one allocated claim per node (gpu-0 of each
                                               h100-<i>), leaving 7 free GPUs on each
  sched_bench_inputs.py eight FILE             one claim for 8 GPUs with matchAttribute on the
                                               NVLink domain
  sched_bench_inputs.py gangs G M FILE         G PodGroups of M one-GPU pods with the NVLink
                                               domain required
  sched_bench_inputs.py loose-gangs G M FILE   the same without the topology requirement
  sched_bench_inputs.py prefer-gangs G M FILE  the same, each member preferring (pod affinity,
                                               weight 100) the hosts of its gang's pods
  sched_bench_inputs.py pods N FILE            N pending one-GPU pods (a template each uses)
  sched_bench_inputs.py extended N FILE        N pending pods asking one GPU as an extended
                                               resource (deviceclass.resource.kubernetes.io/
                                               gpu.nvidia.com: 1), a claim made for each
  sched_bench_inputs.py volumes NODES N L FILE  CSINodes letting each of NODES h100 nodes attach L
                                               volumes of ebs.csi.aws.com, and N pending one-GPU
                                               pods, each with its own claim bound to a CSI
                                               PersistentVolume of that driver
  sched_bench_inputs.py capacity NODES N FULL FILE  a CSI driver publishing one
                                               CSIStorageCapacity per node (the first FULL of
                                               the NODES h100 nodes too small), and N pending
                                               one-GPU pods each with its own unbound
                                               WaitForFirstConsumer 500Gi claim of its class
  sched_bench_inputs.py spread N APPS FILE     the same in APPS apps, each pod with required
                                               anti-affinity to its app by host and a
                                               DoNotSchedule spread over hosts
  sched_bench_inputs.py prefer N APPS FILE     the same with preferred anti-affinity and a
                                               ScheduleAnyway spread (scored, not filters)
  sched_bench_inputs.py full NODES N FILE      every GPU of NODES h100 nodes held by a running
                                               pod of priority 0 (restore times vary), and N
                                               pending one-GPU pods of priority 10
  sched_bench_inputs.py window NODES N W FILE  queues prod (guaranteed) and night (opportunistic,
                                               guarantee window W, e.g. 1h or 0s), a young night
                                               run on one GPU of every other h100 node, and N
                                               pending one-GPU pods, night and prod in turn
"""
import sys

SELECTOR = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
TEMPLATE = f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: one-gpu, namespace: bench}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors: [{{cel: {{expression: "{SELECTOR}"}}}}]
"""


def claims(n, out):
    for i in range(n):
        out.write(f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c{i}, namespace: bench}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors: [{{cel: {{expression: "{SELECTOR}"}}}}]
""")


def allocated_claim(name, node, device, reserved_for=""):
    """A one-GPU ResourceClaim allocated to `device` of h100 node `node` (reserved for a pod)."""
    reserved = (f"\n  reservedFor: [{{resource: pods, name: {reserved_for}, uid: u-{reserved_for}}}]"
                if reserved_for else "")
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: bench}}
spec:
  devices:
    requests:
    - {{name: gpu, exactly: {{deviceClassName: gpu.nvidia.com}}}}
status:
  allocation:
    devices:
      results: [{{request: gpu, driver: gpu.nvidia.com, pool: h100-{node}, device: {device}}}]
    nodeSelector:
      nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In, values: [h100-{node}]}}]}}]{reserved}
"""


def busy(nodes, out):
    for i in range(nodes):
        out.write(allocated_claim(f"busy-{i}", i, "gpu-0"))


def eight(out):
    out.write("""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: eight, namespace: bench}
spec:
  devices:
    requests:
    - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}
    constraints: [{matchAttribute: gpu.nvidia.com/nvlinkDomain}]
""")


def gangs(g, m, out, topology=True, prefer=False):
    """G PodGroups of M one-GPU pods; `topology`: the NVLink domain required; `prefer`: each
    member softly prefers the hosts of its gang's pods (preferred pod affinity, scored)."""
    out.write(TEMPLATE)
    note = "\n  annotations: {gpuplane.io/topology-required: gpu.nvidia.com/nvlinkDomain}"
    affinity = ""
    for k in range(g):
        if prefer:
            affinity = f"""
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector: {{matchLabels: {{scheduling.x-k8s.io/pod-group: gang-{k}}}}}
          topologyKey: kubernetes.io/hostname"""
        out.write(f"""---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: gang-{k}
  namespace: bench{note if topology else ""}
spec: {{minMember: {m}}}
""")
        for j in range(m):
            out.write(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: gang-{k}-{j}, namespace: bench, labels: {{scheduling.x-k8s.io/pod-group: gang-{k}}}}}
spec:
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  containers: [{{name: c}}]{affinity}
""")


def pods(n, out, priority=None, template=True):
    """N pending one-GPU pods using the template (written first unless `template` is False)."""
    if template:
        out.write(TEMPLATE)
    prio = f"\n  priority: {priority}" if priority is not None else ""
    for i in range(n):
        out.write(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: bench}}
spec:{prio}
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  containers: [{{name: c}}]
""")


def extended(n, out):
    """N pending pods asking one GPU through the class's implicit extended resource name."""
    for i in range(n):
        out.write(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: bench}}
spec:
  containers:
  - name: c
    resources: {{limits: {{deviceclass.resource.kubernetes.io/gpu.nvidia.com: "1"}}}}
""")


def pod_using(claim, i):
    """Pending one-GPU pod p<i> with a volume of PersistentVolumeClaim `claim`."""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: bench}}
spec:
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim}}}}}]
  containers: [{{name: c}}]
"""


def volumes(nodes, n, limit, out):
    """CSI volume limits on every node, and N one-GPU pods with a CSI volume each."""
    for i in range(nodes):
        out.write(f"""---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {{name: h100-{i}}}
spec:
  drivers: [{{name: ebs.csi.aws.com, nodeID: i-{i}, allocatable: {{count: {limit}}}}}]
""")
    out.write(TEMPLATE)
    for i in range(n):
        out.write(f"""---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv{i}}}
spec:
  claimRef: {{namespace: bench, name: data{i}}}
  capacity: {{storage: 100Gi}}
  accessModes: [ReadWriteOnce]
  csi: {{driver: ebs.csi.aws.com, volumeHandle: vol-{i}}}
status: {{phase: Bound}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data{i}, namespace: bench}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv{i}
  resources: {{requests: {{storage: 100Gi}}}}
status: {{phase: Bound}}
""" + pod_using(f"data{i}", i))


def capacity(nodes, n, full, out):
    """A CSI driver publishing its free storage, one CSIStorageCapacity per node (the first FULL
    of the NODES h100 nodes with too little left), and N one-GPU pods each with its own
    unbound WaitForFirstConsumer claim of the driver's class."""
    out.write("""---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: local.csi.example.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-nvme}
provisioner: local.csi.example.com
volumeBindingMode: WaitForFirstConsumer
""")
    for i in range(nodes):
        left = "100Gi" if i < full else "3000Gi"
        out.write(f"""---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {{name: h100-{i}-local-nvme, namespace: kube-system}}
storageClassName: local-nvme
nodeTopology: {{matchLabels: {{kubernetes.io/hostname: h100-{i}}}}}
capacity: {left}
""")
    out.write(TEMPLATE)
    for i in range(n):
        out.write(f"""---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data{i}, namespace: bench}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local-nvme
  resources: {{requests: {{storage: 500Gi}}}}
status: {{phase: Pending}}
""" + pod_using(f"data{i}", i))


def spread(n, apps, out, soft=False):
    """N pending one-GPU pods in `apps` apps, each pod spread over hosts (maxSkew 1) and kept
    off hosts holding a pod of its app: required anti-affinity and DoNotSchedule, or with
    `soft` preferred anti-affinity and ScheduleAnyway (scored, not filters)."""
    out.write(TEMPLATE)
    if soft:
        anti = """      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector: {{matchLabels: {{app: {app}}}}}
          topologyKey: kubernetes.io/hostname"""
    else:
        anti = """      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {{matchLabels: {{app: {app}}}}}
        topologyKey: kubernetes.io/hostname"""
    when = "ScheduleAnyway" if soft else "DoNotSchedule"
    for i in range(n):
        app = f"app{i % apps}"
        out.write(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: bench, labels: {{app: {app}}}}}
spec:
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  containers: [{{name: c}}]
  affinity:
    podAntiAffinity:
{anti.format(app=app)}
  topologySpreadConstraints:
  - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: {app}}}}}}}
""")


def full(nodes, n, out):
    out.write(TEMPLATE)
    for i in range(nodes):
        for g in range(8):
            name = f"run-{i}-{g}"
            out.write(allocated_claim(name, i, f"gpu-{g}", name))
            out.write(f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: bench
  uid: u-{name}
  annotations: {{gpuplane.io/restore-seconds: "{(i * 7 + g * 13) % 100}"}}
spec:
  nodeName: h100-{i}
  priority: 0
  resourceClaims: [{{name: gpu, resourceClaimName: {name}}}]
  containers: [{{name: c}}]
status: {{startTime: "2026-12-01T10:00:00Z"}}
""")
    pods(n, out, priority=10, template=False)


def window(nodes, n, window_text, out):
    out.write(TEMPLATE)
    out.write(f"""---
apiVersion: gpuplane.io/v1alpha1
kind: Queue
metadata: {{name: prod}}
spec:
  resources:
    gpu: {{guarantee: "{nodes * 8}"}}
---
apiVersion: gpuplane.io/v1alpha1
kind: Queue
metadata: {{name: night}}
spec:
  guaranteeWindow: {window_text}
  resources:
    gpu: {{weight: "0"}}
""")
    for i in range(0, nodes, 2):
        name = f"young-{i}"
        out.write(allocated_claim(name, i, "gpu-0", name))
        out.write(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: bench, uid: u-{name}, labels: {{gpuplane.io/queue: night}}}}
spec:
  nodeName: h100-{i}
  resourceClaims: [{{name: gpu, resourceClaimName: {name}}}]
  containers: [{{name: c}}]
status: {{startTime: "2026-12-01T11:30:00Z"}}
""")
    for i in range(n):
        queue = "night" if i % 2 == 0 else "prod"
        out.write(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: bench, labels: {{gpuplane.io/queue: {queue}}}}}
spec:
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  containers: [{{name: c}}]
""")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    kind, args, path = argv[1], argv[2:-1], argv[-1]
    with open(path, "w") as out:
        if kind == "claims":
            claims(int(args[0]), out)
        elif kind == "busy":
            busy(int(args[0]), out)
        elif kind == "eight":
            eight(out)
        elif kind == "gangs":
            gangs(int(args[0]), int(args[1]), out)
        elif kind == "loose-gangs":
            gangs(int(args[0]), int(args[1]), out, topology=False)
        elif kind == "prefer-gangs":
            gangs(int(args[0]), int(args[1]), out, topology=False, prefer=True)
        elif kind == "pods":
            pods(int(args[0]), out)
        elif kind == "extended":
            extended(int(args[0]), out)
        elif kind == "volumes":
            volumes(int(args[0]), int(args[1]), int(args[2]), out)
        elif kind == "capacity":
            capacity(int(args[0]), int(args[1]), int(args[2]), out)
        elif kind == "spread":
            spread(int(args[0]), int(args[1]), out)
        elif kind == "prefer":
            spread(int(args[0]), int(args[1]), out, soft=True)
        elif kind == "full":
            full(int(args[0]), int(args[1]), out)
        elif kind == "window":
            window(int(args[0]), int(args[1]), args[2], out)
        else:
            sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
