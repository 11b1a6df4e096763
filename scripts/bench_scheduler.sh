#!/usr/bin/env bash
# kube-scheduler vs `gpuplane scheduler`, side by side in one run (issue 15): for each, a fresh
# control plane with kwok nodes (scripts/controlplane.sh), then `controlplane bench` with the
# same arguments, then the plane is stopped. Prints each bench's JSON line and, last, one
# object {"pods":{"kube-scheduler":{...},"gpuplane":{...},"ratio_pods_per_s":R,
# "ratio_p99":R},"gangs":{...}} (ratio_p99: kube-scheduler's p99 over gpuplane's).
# A side that does not bind everything within the bench's timeout (or fails) does not stop the
# others: its line says "timed_out":true with what it bound, its case's ratios are null and
# "partial" gives the ratios over the pods each side bound, and the script exits 1 after
# printing everything.
# Usage: scripts/bench_scheduler.sh [--nodes N] [--pods N] [--run-duration D] [--gangs N]
#        [--gang-size N] [--timeout D]  (defaults: the issue's 1000, 10000, 30s, 100, 8; the
#        bench's 10m: how long each side may take to bind everything)
# Needs build/gpuplane; builds the plane and kwok when missing (minutes when cold).
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=1000 pods=10000 run=30s gangs=100 gang_size=8 timeout=10m
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --run-duration) run=$2; shift 2 ;;
    --gangs) gangs=$2; shift 2 ;;
    --gang-size) gang_size=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    *) echo "bench_scheduler: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
GPUPLANE_BIN=${GPUPLANE_BIN:-build/gpuplane}
CONTROLPLANE_BIN=${CONTROLPLANE_BIN:-build/controlplane}
[[ -x $GPUPLANE_BIN ]] || { echo "bench_scheduler: build $GPUPLANE_BIN first" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuplane-bench.XXXXXX")
sched_pid=
stop() {
  [[ -n $sched_pid ]] && kill "$sched_pid" 2>/dev/null && wait "$sched_pid" 2>/dev/null || true
  sched_pid=
  bash scripts/controlplane.sh down "$dir/plane" >/dev/null 2>&1 || true
  rm -rf "$dir/plane"
}
trap 'stop; rm -rf "$dir"' EXIT

# run SCHEDULER OUT BENCH-ARGS...: one bench on a fresh plane.
run() {
  local which=$1 out=$2
  shift 2
  if [[ $which == kube-scheduler ]]; then
    bash scripts/controlplane.sh up "$dir/plane" --with-kube-scheduler --with-kwok >/dev/null
    name=default-scheduler
  else
    bash scripts/controlplane.sh up "$dir/plane" --with-kwok >/dev/null
    name=gpuplane
    "$GPUPLANE_BIN" scheduler --kubeconfig "$dir/plane/kubeconfig" --scheduler-name gpuplane \
      --metrics-addr "" 2>"$dir/gpuplane-scheduler.log" &
    sched_pid=$!
  fi
  if ! "$CONTROLPLANE_BIN" bench --kubeconfig "$dir/plane/kubeconfig" --nodes "$nodes" \
    --timeout "$timeout" --scheduler-name "$name" "$@" | tail -n 1 | tee "$out"; then
    echo "bench_scheduler: $which did not bind every pod (or the bench failed); going on" >&2
    failed=1
  fi
  stop
}
failed=0

run kube-scheduler "$dir/k-pods.json" --pods "$pods" --run-duration "$run"
run gpuplane "$dir/g-pods.json" --pods "$pods" --run-duration "$run"
run kube-scheduler "$dir/k-gangs.json" --gangs "$gangs" --gang-size "$gang_size"
run gpuplane "$dir/g-gangs.json" --gangs "$gangs" --gang-size "$gang_size"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]

def result(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None  # the bench failed before its result line

def ratio(num, den):
    # Each ratio on its own: a side that bound nothing has no p99 but still a pods/s.
    if num is None or not den:
        return None
    return round(num / den, 2)

def ratios(k, g):
    k, g = k or {}, g or {}
    return (ratio(g.get("pods_per_s"), k.get("pods_per_s")),
            ratio(k.get("p99_create_to_bind_s"), g.get("p99_create_to_bind_s")))

out = {}
for case in ("pods", "gangs"):
    k, g = result(f"{d}/k-{case}.json"), result(f"{d}/g-{case}.json")
    pods_r, p99_r = ratios(k, g)
    complete = all(r is not None and not r.get("timed_out") for r in (k, g))
    out[case] = {"kube-scheduler": k, "gpuplane": g,
                 "ratio_pods_per_s": pods_r if complete else None,
                 "ratio_p99": p99_r if complete else None}
    if not complete:
        out[case]["partial"] = {"ratio_pods_per_s": pods_r, "ratio_p99": p99_r}
print(json.dumps(out))
PY
exit "$failed"
