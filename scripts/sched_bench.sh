#!/usr/bin/env bash
# The scheduling benchmarks of docs/PERFORMANCE.md, end to end through the CLI (issue 12):
#   (a) allocate 4,000 one-GPU claims with a CEL selector filling 500 nodes x 8 H100
#   (b) the same with 40,000 claims on 5,000 nodes
#   (c) the unsatisfiable 8-GPU matchAttribute claim on 1,000 nodes with 7 free GPUs each
#   (d) schedule 64 gangs of 8 one-GPU pods with the NVLink domain required, 1,000 nodes x 8
#   (e) schedule 10,000 pending one-GPU pods on 5,000 nodes: time of one decision
#   (f) 1,000 pods of priority 10 on 1,000 full nodes x 8 of priority-0 pods: the pass without
#       and with --preempt (every one of them preempts)
#   (g) 10,000 pods, half of an opportunistic queue, on 5,000 nodes x 8 with a young run on
#       every other node, --preempt: with the queue's 1-hour guarantee window (its pods go
#       beside young runs, the headroom rule) and with none
#   (h) 10,000 pods as in (e), in 100 apps, each pod with required anti-affinity to its app's
#       pods by host and a DoNotSchedule spread over hosts (sched/pod_topology.h)
#   (i) the same pods with preferred anti-affinity and a ScheduleAnyway spread instead: every
#       node scored per pod (sched/preferences.h)
# Each case runs RUNS times (default 5); the medians are printed. Inputs are generated under
# WORK (default a temporary directory) by `gpuplane generate cluster` and
# tools/sched_bench_inputs.py. Usage: scripts/sched_bench.sh [build/gpuplane]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/gpuplane}
RUNS=${RUNS:-5}
WORK=${WORK:-$(mktemp -d)}
T=tools/sched_bench_inputs.py
for n in 500 1000 5000; do
  [[ -d $WORK/c$n ]] || "$BIN" generate cluster --mix "h100=$n" --output-dir "$WORK/c$n" >/dev/null 2>&1
done
python3 $T claims 4000 "$WORK/claims4000.yaml"
python3 $T claims 40000 "$WORK/claims40000.yaml"
python3 $T busy 1000 "$WORK/busy1000.yaml"
python3 $T eight "$WORK/eight.yaml"
python3 $T gangs 64 8 "$WORK/gangs.yaml"
python3 $T pods 10000 "$WORK/pods10000.yaml"
python3 $T full 1000 1000 "$WORK/full1000.yaml"
python3 $T spread 10000 100 "$WORK/spread10000.yaml"
python3 $T prefer 10000 100 "$WORK/prefer10000.yaml"
python3 $T window 5000 10000 1h "$WORK/window1h.yaml"
python3 $T window 5000 10000 0s "$WORK/window0s.yaml"

# median FIELD... -- COMMAND: runs COMMAND RUNS times, prints the median of each JSON field, a
# path into the last line of stdout or into the timings line the CLI writes to stderr
# (timings.seconds, timings.decision_seconds.p99).
median() {
  local fields=()
  while [[ $1 != -- ]]; do fields+=("$1"); shift; done
  shift
  for ((i = 0; i < RUNS; i++)); do
    "$@" >"$WORK/out" 2>"$WORK/err" || true
    python3 -c '
import json, sys
row = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
for line in open(sys.argv[2]).read().splitlines():
    if line.startswith("{\"timings\""):
        row.update(json.loads(line))
print(json.dumps(row))' "$WORK/out" "$WORK/err"
  done | python3 -c '
import json, statistics, sys
fields = sys.argv[1:]
rows = [json.loads(l) for l in sys.stdin if l.strip()]
def get(row, path):
    for k in path.split("."):
        row = row[k]
    return row
print(" ".join(f"{f}={statistics.median(get(r, f) for r in rows):.6g}" for f in fields))
' "${fields[@]}"
}

echo "(a) allocate 4,000 claims, 500 nodes:  $(median timings.seconds -- "$BIN" allocate --objects "$WORK/c500" --claims "$WORK/claims4000.yaml" -o json)"
echo "(b) allocate 40,000 claims, 5,000 nodes: $(median timings.seconds -- "$BIN" allocate --objects "$WORK/c5000" --claims "$WORK/claims40000.yaml" -o json)"
echo "(c) unsatisfiable 8-GPU claim, 1,000 nodes (allocate): $(median timings.seconds -- "$BIN" allocate --objects "$WORK/c1000" "$WORK/busy1000.yaml" --claims "$WORK/eight.yaml" -o json)"
cat >"$WORK/eightpod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: eight, namespace: bench}
spec:
  resourceClaims: [{name: gpus, resourceClaimName: eight}]
  containers: [{name: c}]
YAML
cat "$WORK/eight.yaml" >>"$WORK/eightpod.yaml"
echo "(c) unsatisfiable 8-GPU claim, 1,000 nodes (schedule): $(median timings.seconds timings.snapshot_seconds timings.decision_seconds.max -- "$BIN" schedule --objects "$WORK/c1000" "$WORK/busy1000.yaml" --workload "$WORK/eightpod.yaml" -o json)"
echo "(d) 64 gangs x 8 pods, NVLink domain required, 1,000 nodes: $(median timings.seconds timings.snapshot_seconds timings.decision_seconds.p50 timings.decision_seconds.max -- "$BIN" schedule --objects "$WORK/c1000" --workload "$WORK/gangs.yaml" -o json)"
echo "(e) 10,000 pods, 5,000 nodes: $(median timings.seconds timings.snapshot_seconds timings.decision_seconds.p50 timings.decision_seconds.p99 timings.decision_seconds.max -- "$BIN" schedule --objects "$WORK/c5000" --workload "$WORK/pods10000.yaml" -o json)"
P=(--objects "$WORK/c1000" --workload "$WORK/full1000.yaml" -o json)
echo "(f) 1,000 pods on 1,000 full nodes, no preemption: $(median timings.seconds -- "$BIN" schedule "${P[@]}")"
echo "(f) 1,000 pods on 1,000 full nodes, --preempt: $(median timings.seconds summary.preempting -- "$BIN" schedule "${P[@]}" --preempt --now 2026-12-01T12:00:00Z)"
for w in 1h 0s; do
  echo "(g) 10,000 pods, opportunistic window $w, 5,000 nodes, --preempt: $(median timings.seconds -- "$BIN" schedule --objects "$WORK/c5000" --workload "$WORK/window$w.yaml" -o json --preempt --now 2026-12-01T12:00:00Z)"
done
echo "(h) 10,000 pods in 100 apps, anti-affinity and spread by host, 5,000 nodes: $(median timings.seconds timings.snapshot_seconds timings.decision_seconds.p50 timings.decision_seconds.p99 timings.decision_seconds.max summary.scheduled -- "$BIN" schedule --objects "$WORK/c5000" --workload "$WORK/spread10000.yaml" -o json)"
echo "(i) 10,000 pods in 100 apps, preferred anti-affinity and soft spread by host, 5,000 nodes: $(median timings.seconds timings.snapshot_seconds timings.decision_seconds.p50 timings.decision_seconds.p99 timings.decision_seconds.max summary.scheduled -- "$BIN" schedule --objects "$WORK/c5000" --workload "$WORK/prefer10000.yaml" -o json)"
