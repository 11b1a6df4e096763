#!/usr/bin/env bash
# End-to-end checks of the gpuplane binary: exit codes, output shapes, error locations.
# Usage: cli_test.sh PATH/TO/gpuplane   (run from the repository root)
set -uo pipefail
BIN=$1
failures=0
pass=0

expect_exit() {  # expect_exit CODE DESCRIPTION -- COMMAND...
  local want=$1 what=$2
  shift 3
  local out
  out=$("$@" 2>&1)
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, want $want"
    echo "$out" | head -20
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}

expect_output() {  # expect_output PATTERN DESCRIPTION -- COMMAND...
  local pattern=$1 what=$2
  shift 3
  local out
  out=$("$@" 2>&1)
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $what: output does not match /$pattern/"
    echo "$out" | head -20
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}

expect_exit 0 "examples validate" -- "$BIN" validate examples/
expect_output "^27 objects, 0 errors, 0 warnings$" "examples summary" -- "$BIN" validate examples/
expect_exit 1 "malformed input" -- "$BIN" validate testdata/api/malformed/count-negative.yaml
expect_exit 2 "missing path" -- "$BIN" validate does/not/exist.yaml
expect_exit 2 "no arguments" -- "$BIN" validate
expect_exit 2 "bad flag" -- "$BIN" validate --output xml examples/
expect_exit 2 "unknown subcommand" -- "$BIN" frobnicate
expect_output '^\{"objects":\[\{"kind":"DeviceClass","namespace":"","name":"gpu.nvidia.com","file":"examples/cluster/device-classes.yaml","line":2\}' \
  "json objects" -- "$BIN" validate --output json examples/
expect_output '"errors":\[\{"file":"testdata/api/malformed/count-negative.yaml","line":17,"object":"ResourceClaim default/c","field":"spec.devices.requests\[0\].exactly.count","message":"must be greater than zero"\}\],"warnings":\[\]\}$' \
  "json errors" -- "$BIN" validate --output json testdata/api/malformed/count-negative.yaml
expect_output "^testdata/api/malformed/bad-quantity-two-dots.yaml:13: ResourceSlice s: spec.devices\[0\].capacity\[\"memory\"\].value: bad quantity \"1.5.3Gi\"" \
  "text error location" -- "$BIN" validate testdata/api/malformed/bad-quantity-two-dots.yaml
expect_exit 0 "version" -- "$BIN" version
expect_exit 2 "bad mix" -- "$BIN" generate cluster --mix "h900=1"
expect_output "unknown GPU product \"h900\"" "bad mix message" -- "$BIN" generate cluster --mix "h900=1"
expect_exit 2 "scheduler bad half-life" -- "$BIN" scheduler --usage-half-life soon
expect_output '--usage-half-life "soon" is not a duration such as 30m or 1h' \
  "scheduler half-life message" -- "$BIN" scheduler --usage-half-life soon
# an agent that stops at once (an empty recording) while serving stops (it once hung in join())
tmp_agent=$(mktemp -d)
: >"$tmp_agent/empty.jsonl"
for _ in 1 2 3; do
  expect_exit 0 "agent: empty recording with --listen stops" -- timeout -s KILL 10 "$BIN" agent \
    --sampler replay --replay "$tmp_agent/empty.jsonl" --exit-at-end --listen 127.0.0.1:0
done
rm -rf "$tmp_agent"
# floating-point flags refuse NaN and infinity (a NaN --interval once hung the agent)
expect_output '^--interval: "nan" is not a finite number from 0 to 3600' "agent: NaN interval" -- \
  timeout -s KILL 10 "$BIN" agent --sampler synthetic --interval nan --max-passes 1
expect_output '^--high-fraction: "nan" is not a finite number from 0 to 1' "simulate: NaN fraction" -- \
  "$BIN" simulate --workload daynight:1 --high-fraction nan
expect_exit 2 "simulate: infinite restore" -- "$BIN" simulate --workload daynight:1 --restore-seconds inf
expect_exit 2 "scheduler: NaN lease" -- "$BIN" scheduler --kubeconfig x --lease-duration nan
# a server that does not answer: the scheduler keeps retrying, and says so at once
tmp_kc=$(mktemp)
cat >"$tmp_kc" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
expect_output '^gpuplane scheduler: cannot read the cluster: https://127.0.0.1:1/.*; retrying' \
  "scheduler: unreachable server named" -- timeout 3 "$BIN" scheduler --kubeconfig "$tmp_kc" \
  --metrics-addr ""
rm -f "$tmp_kc"
expect_output '--since nan: expected unix seconds or RFC 3339' "report: NaN time" -- \
  "$BIN" report --ledger x --since nan

# cel eval
expect_output '^\{"value":\{"int":"42"\}\}$' "cel json value" -- "$BIN" cel eval -o json --expr 'x + 1' --var 'x={"int":"41"}'
expect_output '^\{"error":"division by zero","kind":"runtime"\}$' "cel runtime error" -- "$BIN" cel eval -o json --expr '1 / 0'
expect_exit 1 "cel runtime error exit" -- "$BIN" cel eval --expr '1 / 0'
expect_output '"kind":"compile"' "cel compile error" -- "$BIN" cel eval -o json --expr 'nope + 1'
expect_exit 1 "cel compile error exit" -- "$BIN" cel eval --expr 'nope + 1'
expect_exit 2 "cel bad var" -- "$BIN" cel eval --expr 'x' --var 'x=3'
expect_exit 2 "cel missing device" -- "$BIN" cel eval --expr 'true' --device examples/cluster/node-h100-0.yaml --device-name gpu-9
expect_output '^true$' "cel device selector" -- "$BIN" cel eval --device examples/cluster/node-h100-0.yaml --device-name gpu-3 \
  --expr "device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100') && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
expect_output '^false$' "cel device selector on a T4" -- "$BIN" cel eval --device examples/cluster/node-t4-0.yaml --device-name gpu-0 \
  --expr "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
expect_output '^\[2, 4, 6\]$' "cel text output" -- "$BIN" cel eval --expr '[1, 2, 3].map(x, x * 2)'
cases_out=$("$BIN" cel eval --cases testdata/cel/cases.jsonl --device examples/cluster/node-h100-0.yaml 2>&1)
expect_output '^\{"value":\{"int":"42"\}\} \{"value":\{"string":"NVIDIA H100 80GB HBM3"\}\} \{"error":"division by zero","kind":"runtime"\}.*"kind":"compile"\} \{"value":\{"bool":true\}\}$' \
  "cel cases: one result line per case" -- echo $cases_out
expect_exit 0 "cel cases exit" -- "$BIN" cel eval --cases testdata/cel/cases.jsonl --device examples/cluster/node-h100-0.yaml
expect_output 'cases.jsonl:2: the case names a device: give --device' "cel cases without --device" -- "$BIN" cel eval --cases testdata/cel/cases.jsonl
expect_exit 2 "cel cases without --device exit" -- "$BIN" cel eval --cases testdata/cel/cases.jsonl
expect_exit 2 "cel cases unreadable" -- "$BIN" cel eval --cases does/not/exist.jsonl
expect_exit 2 "cel needs --expr or --cases" -- "$BIN" cel eval
expect_output '"kind":"compile"' "cel --device checks the selector as the allocator does" -- \
  "$BIN" cel eval -o json --expr 'device.driver + 1' --device examples/cluster/node-h100-0.yaml --device-name gpu-0

# allocate
expect_output '^\{"claim":"team-a/h100-or-better-40gi-1","allocated":true,"node":"(h100|h200|b200)-0","results":\[\{"request":"gpu","driver":"gpu.nvidia.com"' \
  "allocate json" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/h100-or-better-40gi.yaml -o json
expect_exit 0 "allocate gang" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/eight-gpus-one-nvlink-domain.yaml examples/workloads/training-gang.yaml -o json
expect_exit 1 "allocate on a node that cannot fit" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/h100-or-better-40gi.yaml --node t4-0 -o json
expect_output '"allocated":false,"reasons":\[.*4 by the request selectors' "allocate reasons" -- \
  "$BIN" allocate --objects examples/cluster --claims examples/workloads/h100-or-better-40gi.yaml --node t4-0 -o json
expect_output '^\{"summary":\{"claims":1,"allocated":1\}\}$' "allocate summary" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/small-mig-else-medium-else-full.yaml -o json
expect_output 'request: gpu/small' "allocate yaml status" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/small-mig-else-medium-else-full.yaml --node a100-80gb-mig-0
expect_exit 2 "allocate unknown node" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/h100-or-better-40gi.yaml --node nope
expect_exit 2 "allocate missing template" -- "$BIN" allocate --objects examples/cluster --claims examples/workloads/training-gang.yaml
# allocate --cases: instances in one process (the differential test's interface)
tmp_cases=$(mktemp -d)
python3 - "$tmp_cases" <<'PY'
import json, sys
d = sys.argv[1]
objects = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  nodeName: node-a
  devices: [{name: g0}, {name: g1}]
"""
claim = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: t}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}]
"""
twice = claim + """status:
  allocation:
    devices:
      results:
      - {request: r, driver: gpu.example.com, pool: p, device: g0}
      - {request: r, driver: gpu.example.com, pool: p, device: g0}
"""
with open(d + "/cases.jsonl", "w") as f:
    f.write(json.dumps({"objects": objects, "claims": claim, "node": "node-a", "check": twice}) + "\n")
with open(d + "/bad.jsonl", "w") as f:
    f.write(json.dumps({"objects": objects, "claims": claim}) + "\n")
PY
expect_output '^\{"check":"claim c takes device g0, which an earlier request of this allocation took","allocated":true,"claims":\[\{"claim":"t/c","results":\[\{"request":"r","driver":"gpu.example.com","pool":"p","device":"g0"\},\{"request":"r","driver":"gpu.example.com","pool":"p","device":"g1"\}\]\}\],"reasons":\[\]\}$' \
  "allocate --cases: allocates, and the verifier rejects a device taken twice" -- "$BIN" allocate --cases "$tmp_cases/cases.jsonl"
expect_output '"error":".*bad.jsonl:1: a case is an object with \\"node\\"' "allocate --cases: a case without a node" -- \
  "$BIN" allocate --cases "$tmp_cases/bad.jsonl"
expect_exit 2 "allocate --cases: exit 2 on a bad case" -- "$BIN" allocate --cases "$tmp_cases/bad.jsonl"
expect_exit 2 "allocate: --cases excludes --objects" -- "$BIN" allocate --cases "$tmp_cases/bad.jsonl" --objects examples/cluster
expect_exit 2 "allocate: neither --objects nor --cases" -- "$BIN" allocate --claims examples/workloads/training-gang.yaml
rm -rf "$tmp_cases"


# schedule and explain
S=testdata/sched
expect_output '^\{"pod":"training/llama-finetune-worker-0","gang":"training/llama-finetune","status":"Scheduled","node":"h100-0","claims":\[\{"name":"training/llama-finetune-worker-0-gpus","results":\[\{"request":"gpus","driver":"gpu.nvidia.com","pool":"h100-0","device":"gpu-0"\}' \
  "schedule json: a gang member" -- "$BIN" schedule --objects examples/cluster --workload examples/workloads -o json
expect_output '^\{"summary":\{"pods":2,"scheduled":2,"gangs":1,"gangs_scheduled":1\}\}$' \
  "schedule json summary" -- "$BIN" schedule --objects examples/cluster --workload examples/workloads -o json
expect_exit 0 "schedule: all scheduled" -- "$BIN" schedule --objects examples/cluster --workload examples/workloads
expect_exit 1 "schedule: some pods pending" -- "$BIN" schedule --objects $S/status-too-few-free-is-unschedulable.yaml \
  --workload $S/status-too-few-free-is-unschedulable.yaml
expect_output '"status":"Unresolvable","node":null,"claims":\[\],"reason":"0/2 nodes are available: 2 have fewer than 9 devices' \
  "schedule json: unresolvable with its reason" -- "$BIN" schedule -o json \
  --objects $S/status-nine-gpus-on-eight-gpu-nodes-is-unresolvable.yaml --workload $S/status-nine-gpus-on-eight-gpu-nodes-is-unresolvable.yaml
P=$S/preempt-node-with-the-least-lost-work.yaml
expect_output '^\{"pod":"t/high",.*"preemption":\{"node":"n0","victims":\["t/a","t/b"\],"lost_gpu_seconds":720' \
  "schedule --preempt json: victims and lost work" -- "$BIN" schedule -o json --objects $P --workload $P \
  --preempt --now 2026-12-01T12:00:00Z
expect_output 'preemption: it preempts t/d to run on node n1 \(30 GPU-seconds of work lost\)' \
  "explain --preempt: the pod's victims" -- "$BIN" explain --objects $P --workload $P --pod t/mid \
  --preempt --now 2026-12-01T12:00:00Z
expect_output '--now "noon" is not an RFC 3339 time' \
  "schedule --preempt: a bad --now is named" -- "$BIN" schedule --objects $P --workload $P --preempt --now noon
expect_exit 2 "schedule: unknown policy" -- "$BIN" schedule --objects examples/cluster --workload examples/workloads --policy nope
expect_exit 2 "schedule: missing path" -- "$BIN" schedule --objects examples/cluster --workload does/not/exist.yaml
expect_exit 2 "schedule: invalid objects" -- "$BIN" schedule --objects examples/cluster --workload testdata/api/malformed/count-negative.yaml
expect_output 'gang-pod-names-missing-podgroup.yaml:[0-9]+: Pod t/orphan: label scheduling.x-k8s.io/pod-group names PodGroup t/nowhere' \
  "schedule: a missing PodGroup is named with file and line" -- "$BIN" schedule \
  --objects $S/gang-pod-names-missing-podgroup.yaml --workload $S/gang-pod-names-missing-podgroup.yaml
expect_output 'what would unblock it: 1 more free device of class gpu on node n0, which has 1 of 2' \
  "explain: what would unblock a pod" -- "$BIN" explain --objects $S/status-too-few-free-is-unschedulable.yaml \
  --workload $S/status-too-few-free-is-unschedulable.yaml --pod t/p
expect_output 'what would unblock it: no node will ever fit: request gpu of t/p-gpus needs 9 devices' \
  "explain: unresolvable" -- "$BIN" explain --objects $S/status-nine-gpus-on-eight-gpu-nodes-is-unresolvable.yaml \
  --workload $S/status-nine-gpus-on-eight-gpu-nodes-is-unresolvable.yaml --pod t/p
expect_output '^gang t/train \(PodGroup, 3 of 3 members needed\):' "explain: the gang's members" -- "$BIN" explain \
  --objects $S/gang-podgroup-members-cannot-all-fit.yaml --workload $S/gang-podgroup-members-cannot-all-fit.yaml --pod t/w0
expect_exit 0 "explain: a scheduled pod" -- "$BIN" explain --objects examples/cluster --workload examples/workloads \
  --pod training/llama-finetune-worker-1
expect_exit 2 "explain: unknown pod" -- "$BIN" explain --objects examples/cluster --workload examples/workloads --pod a/b
expect_output "give it as namespace/name: training/llama-finetune-worker-1" "explain: a name without its namespace" -- \
  "$BIN" explain --objects examples/cluster --workload examples/workloads --pod llama-finetune-worker-1
expect_output 'did you mean "training/llama-finetune-worker-1"' "explain: a misspelled pod" -- \
  "$BIN" explain --objects examples/cluster --workload examples/workloads --pod training/llama-finetune-workr-1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BIN" generate cluster --mix "h100=3,a100-80gb+mig=2x4,t4=1x2" --format json >"$tmp/c.json"
expect_output "^[0-9]+ objects, 0 errors, 0 warnings$" "generated JSON validates" -- "$BIN" validate --quiet "$tmp/c.json"
"$BIN" generate cluster --mix "h100=2" --output-dir "$tmp/dir" 2>/dev/null
expect_output "^6 objects, 0 errors, 0 warnings$" "generated dir validates" -- "$BIN" validate --quiet "$tmp/dir"
# Determinism: the same spec gives byte-identical output.
"$BIN" generate cluster --mix "h100=3,a100-80gb+mig=2x4,t4=1x2" --format json >"$tmp/c2.json"
expect_exit 0 "generator is deterministic" -- cmp "$tmp/c.json" "$tmp/c2.json"


# simulate
C=testdata/sim/claims
expect_output "^gpuplane +0 +3 +3 +0 +33s +0s +100s +75.0 +0$" "replay of Pods with claims" -- \
  "$BIN" simulate --mode replay --generate h100=1 --workload $C/workload.yaml
expect_output "bad.yaml:16: pod train/too-big: fits no node" "claims replay: impossible job named" -- \
  "$BIN" simulate --mode replay --generate h100=1 --workload $C/bad.yaml
expect_exit 1 "claims replay: --strict stops on problems" -- \
  "$BIN" simulate --mode replay --generate h100=1 --workload $C/bad.yaml --strict
expect_exit 2 "claims replay needs a DRA cluster" -- \
  "$BIN" simulate --mode replay --nodes testdata/sim/nodes.csv --workload $C/workload.yaml
tmp=$(mktemp -d)
expect_exit 0 "default scenario" -- "$BIN" simulate
expect_output "OOM failures +[1-9][0-9]* +0$" "default scenario: OOM only with integer GPUs" -- "$BIN" simulate
"$BIN" simulate -o json >"$tmp/a.json" 2>/dev/null
"$BIN" simulate -o json >"$tmp/b.json" 2>/dev/null
expect_exit 0 "default scenario is byte-for-byte deterministic" -- cmp "$tmp/a.json" "$tmp/b.json"
expect_output '^\{"scenario":".*","results":\[\{"mode":"k8s"' "default scenario JSON" -- cat "$tmp/a.json"
# The CLI times each run (the engines do not): one timings line on stderr, never in stdout.
expect_output '^\{"timings":\{"seconds":[0-9.e-]+\}\}$' "simulate json: timings on stderr" -- \
  bash -c "'$BIN' simulate -o json 2>&1 >/dev/null | tail -1"
expect_output '^took [0-9.e-]+ s$' "simulate text: time on stderr" -- bash -c "'$BIN' simulate 2>&1 >/dev/null | tail -1"
expect_output '^\{"timings":\{"seconds":[0-9.e-]+,"snapshot_seconds":[0-9.e-]+,"decision_seconds":\{"p50":' \
  "schedule json: timings on stderr" -- bash -c "'$BIN' schedule --objects examples/cluster --workload examples/workloads -o json 2>&1 >/dev/null"
expect_output '^\{"runs":\[\{"policy":"bestfit","seed":1,"trace":"pods.csv","alloc_ratio":\{"0":' \
  "fill JSON shape" -- "$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv \
  --seeds 1-2 --policy bestfit,fgd -o json
expect_output '"summary":\[\{"policy":"bestfit","trace":"pods.csv","alloc_ratio_at_100":\{"mean":' \
  "fill JSON summary" -- "$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv \
  --seeds 1-2 --policy bestfit,fgd -o json
"$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv --policy random,gpuplane \
  -o json >"$tmp/f1.json" 2>/dev/null
"$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv --policy random,gpuplane \
  -o json -j 1 >"$tmp/f2.json" 2>/dev/null
expect_exit 0 "fill runs are deterministic, whatever the parallelism" -- cmp "$tmp/f1.json" "$tmp/f2.json"
# The multi-tenant replay of a Philly trace.
P=testdata/sim/philly-malformed.csv
expect_output '"summary":\[\{"policy":"kube","jobs":4,"jct_mean_s":[0-9.e+-]+,"jct_p99_s":[0-9.e+-]+,"queue_delay_p95_s":\{"high":[0-9.e+-]+,"low":[0-9.e+-]+\},"alloc_while_queued":[0-9.e+-]+,"jain_min_hourly":[0-9.e+-]+,"preemptions":[0-9.e+-]+,"lost_gpu_hours":[0-9.e+-]+,"partial_gang_evictions":[0-9.e+-]+,"incomplete_gang_gpu_seconds":[0-9.e+-]+,"fair_share_cycles":[0-9.e+-]+,"opportunistic_evictions_per_window":null,"night_alloc":[0-9.e+-]+,"day_alloc":[0-9.e+-]+\}' \
  "philly JSON summary" -- "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 -o json
expect_output "philly-malformed.csv:4: job skipped: timestamp" "philly: bad rows reported with file and line" -- \
  "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 --policy gpuplane
expect_output "^gpuplane +4 " "philly table: every job finishes" -- \
  "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 --policy gpuplane
expect_output "warning: 1 jobs need more than the cluster's 8 GPUs; they never start" \
  "philly: jobs larger than the cluster are reported, and the replay ends" -- \
  timeout 60 "$BIN" simulate --workload "philly:$P" --cluster-gpus 8
expect_exit 2 "philly: cluster of whole 8-GPU nodes" -- "$BIN" simulate --workload "philly:$P" --cluster-gpus 12
expect_exit 2 "philly: checkpoint interval is a duration" -- "$BIN" simulate --workload "philly:$P" \
  --checkpoint-interval 30min
expect_output '"min_runtime_s":600' "philly: --min-runtime in the JSON" -- \
  "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 --policy kai --min-runtime 10m -o json
expect_output '"usage_half_life_s":86400' "philly: --usage-half-life in the JSON" -- \
  "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 --policy gpuplane --usage-half-life 24h -o json
expect_output '--min-runtime "-5m" is not a duration such as 30m or 1h' "philly: bad min-runtime" -- \
  "$BIN" simulate --workload "philly:$P" --min-runtime=-5m
expect_output '"preemption_grace_s":300' "philly: --preemption-grace in the JSON" -- \
  "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 --policy gpuplane --preemption-grace 5m -o json
expect_output '--preemption-grace "soon" is not a duration such as 30m or 1h' "philly: bad grace" -- \
  "$BIN" simulate --workload "philly:$P" --preemption-grace soon
expect_output '"checkpoint_on_signal_s":60.0,"checkpoint_on_signal_share":0.5' \
  "philly: --checkpoint-on-signal in the JSON" -- "$BIN" simulate --workload "philly:$P" \
  --cluster-gpus 16 --policy gpuplane --preemption-grace 2m --checkpoint-on-signal 1m \
  --checkpoint-on-signal-share 0.5 -o json
expect_output '--checkpoint-on-signal 1m is longer than --preemption-grace 0s: no victim has the time' \
  "philly: saving on the signal needs a grace" -- "$BIN" simulate --workload "philly:$P" \
  --cluster-gpus 16 --policy gpuplane --checkpoint-on-signal 1m
expect_output '--checkpoint-on-signal "yes" is not a duration' "philly: bad signal save" -- \
  "$BIN" simulate --workload "philly:$P" --checkpoint-on-signal yes
expect_output 'unknown multi-tenant policy "slurm"; known: kube, kai' "philly: unknown policy" -- \
  "$BIN" simulate --workload "philly:$P" --policy slurm
# An openb pod list: its best-effort pods as opportunistic work, beside the runs without them.
expect_output "^gpuplane +8 " "openb: every GPU pod finishes" -- \
  "$BIN" simulate --workload openb:testdata/sim/pods.csv --cluster-gpus 16 --policy gpuplane
expect_output "2 best-effort \(BE\) pods as opportunistic work; 4 pods asking for part of a GPU" \
  "openb: the classes and whole-GPU counting are stated" -- \
  "$BIN" simulate --workload openb:testdata/sim/pods.csv --cluster-gpus 16 --policy gpuplane
expect_output "pods-malformed.csv:[0-9]+: pod skipped" "openb: bad rows named with file and line" -- \
  "$BIN" simulate --workload openb:testdata/sim/pods-malformed.csv --cluster-gpus 16 --policy kube
# The day/night workload with opportunistic work, beside the same runs without it.
expect_output '"policy":"gpuplane","jobs":[0-9]+,.*"opportunistic_evictions_per_window":[0-9.e+-]+,"night_alloc":[0-9.e+-]+,"day_alloc":[0-9.e+-]+,"opportunistic_jobs_evicted_in_window":[0-9.e+-]+,"without_opportunistic":\{"night_alloc":[0-9.e+-]+,"day_alloc":[0-9.e+-]+,"queue_delay_p95_s":\{"high":[0-9.e+-]+,"low":[0-9.e+-]+\}\}\}' \
  "daynight JSON summary" -- "$BIN" simulate --workload daynight:2 --cluster-gpus 64 -o json --policy gpuplane
expect_output "^gpuplane +[0-9.]+ ± [0-9.]+ +[0-9.]+ ± [0-9.]+ +[+-][0-9.]+ " "daynight: the opportunistic table" -- \
  "$BIN" simulate --workload daynight:2 --cluster-gpus 64 --policy gpuplane
# The multi-tenant HTML report: fairness over time, delay by class, lost work, per-tenant charts.
expect_exit 0 "daynight report" -- "$BIN" simulate --workload daynight:2 --cluster-gpus 64 \
  --policy kube,gpuplane --report "$tmp/tenants.html"
expect_output "Hourly Jain index" "tenant report: fairness chart" -- cat "$tmp/tenants.html"
expect_output "<h3>high</h3><table><tr><th>policy</th>.*<tr><td>gpuplane</td><td>[0-9]+</td>" \
  "tenant report: delay by class, every policy" -- cat "$tmp/tenants.html"
expect_output "Work lost per preemption" "tenant report: lost work" -- cat "$tmp/tenants.html"
expect_output "<h3>gpuplane</h3><div><svg" "tenant report: per-tenant charts" -- \
  cat "$tmp/tenants.html"
expect_exit 1 "tenant report needs no network" -- grep -qE "https?://[^w]|<script" \
  "$tmp/tenants.html"
expect_output "cannot write report $tmp/none/t.html" "tenant report: unwritable path named" -- \
  "$BIN" simulate --workload "philly:$P" --cluster-gpus 16 --policy kube --report "$tmp/none/t.html"
expect_output 'the day/night workload takes a number of days from 1 to 3650, as daynight:7' \
  "daynight: bad days" -- "$BIN" simulate --workload daynight:0
expect_output '--guarantee-window "soon" is not a positive duration' "daynight: bad window" -- \
  "$BIN" simulate --workload daynight:1 --guarantee-window soon
# a trace with nothing to replay is refused, not reported as an empty table
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n' >"$tmp/no-jobs.csv"
expect_output "no-jobs.csv: no jobs to replay \(the file has no rows\)" "philly: no rows" -- \
  "$BIN" simulate --workload "philly:$tmp/no-jobs.csv"
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,4096,66.0,a\n' \
  >"$tmp/all-skipped.csv"
expect_output "all-skipped.csv: no jobs to replay \(1 rows skipped, as warned above\)" \
  "philly: every row skipped" -- "$BIN" simulate --workload "philly:$tmp/all-skipped.csv"
head -1 testdata/sim/pods.csv >"$tmp/cpu-only.csv"
printf 'web-0,2000,4096,0,0,,LS,Running,0,600,0\n' >>"$tmp/cpu-only.csv"
expect_output "cpu-only.csv: no GPU pods to replay \(1 pods, none with num_gpu above 0" \
  "openb: no GPU pods" -- "$BIN" simulate --workload "openb:$tmp/cpu-only.csv"
expect_output "pods-malformed.csv:5: pod nine-gpus dropped: it asks for 9 GPUs, but no node has more than 8" \
  "impossible requests are reported with file and line" -- "$BIN" simulate --nodes testdata/sim/nodes.csv \
  --pods testdata/sim/pods-malformed.csv --seeds 1
expect_output "4 input problems" "input problems are counted" -- "$BIN" simulate \
  --nodes testdata/sim/nodes.csv --pods testdata/sim/pods-malformed.csv --seeds 1
expect_exit 0 "bad rows do not stop the run" -- "$BIN" simulate --nodes testdata/sim/nodes.csv \
  --pods testdata/sim/pods-malformed.csv --seeds 1
expect_exit 1 "--strict stops on bad rows" -- "$BIN" simulate --nodes testdata/sim/nodes.csv \
  --pods testdata/sim/pods-malformed.csv --strict
expect_exit 2 "unknown policy" -- "$BIN" simulate --nodes testdata/sim/nodes.csv \
  --pods testdata/sim/pods.csv --policy nope
expect_output 'unknown policy "nope"; known policies: random, dotprod' "unknown policy message" -- \
  "$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv --policy nope
expect_exit 2 "missing file" -- "$BIN" simulate --nodes testdata/sim/none.csv --pods testdata/sim/pods.csv
expect_exit 2 "two clusters" -- "$BIN" simulate --nodes testdata/sim/nodes.csv --generate h100=1 \
  --pods testdata/sim/pods.csv
expect_exit 2 "bad seeds" -- "$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv \
  --seeds 5-x
expect_exit 0 "replay of a trace" -- "$BIN" simulate --mode replay --nodes testdata/sim/nodes.csv \
  --pods testdata/sim/pods.csv
expect_output '^\{"replay":\[\{"policy":"k8s","seed":42,"workload":"generated 500 jobs' \
  "replay JSON" -- "$BIN" simulate --mode replay --generate h100=4 --workload generate --jobs 500 -o json
expect_exit 0 "fill report" -- "$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv \
  --seeds 1-2 --report "$tmp/fill.html"
expect_output "<svg" "fill report has charts" -- cat "$tmp/fill.html"
expect_exit 1 "the report needs no network" -- grep -qE "https?://[^w]|<script" "$tmp/fill.html"
expect_exit 0 "replay report" -- "$BIN" simulate --mode replay --generate h100=4 --workload generate \
  --jobs 500 --report "$tmp/replay.html"
expect_output "Queueing delay distribution" "replay report charts" -- cat "$tmp/replay.html"
expect_output "fill mode, trace pods.csv, 32 GPUs" "cluster from DRA objects" -- "$BIN" simulate \
  --objects examples/cluster --pods testdata/sim/pods.csv --seeds 1
rm -rf "$tmp"

tmp_acct=$(mktemp)

# attribute
N=testdata/acct/node
expect_exit 0 "attribute" -- "$BIN" attribute --replay $N/recording.jsonl --proc-root $N/proc \
  --pods $N/pods.json --podresources-json $N/podresources.json --prices $N/prices.yaml
expect_output '"namespace":"inference","pod":"chat-a","container":"server","gpu_uuid":"GPU-aaaa","sm_seconds":15.0,' \
  "attribute: compute from process samples" -- "$BIN" attribute --replay $N/recording.jsonl \
  --proc-root $N/proc --pods $N/pods.json --podresources-json $N/podresources.json --prices $N/prices.yaml
expect_output '"unattributed_sm_seconds":3.0,"idle_cost":0.0,"cost":0.03' \
  "attribute: unattributed time reported" -- "$BIN" attribute --replay $N/recording.jsonl \
  --proc-root $N/proc --pods $N/pods.json --podresources-json $N/podresources.json --prices $N/prices.yaml
expect_output '"pid":400,.*"reason":"the container was not allocated this device"' \
  "attribute: isolation audit" -- "$BIN" attribute --replay $N/recording.jsonl \
  --proc-root $N/proc --pods $N/pods.json --podresources-json $N/podresources.json --prices $N/prices.yaml
expect_output '"unallocated":\[\{"namespace":"research","pod":"trainer","container":"main","device":"GPU-aaaa","sm_seconds":1.5,' \
  "attribute: a pod's use of a GPU it was not allocated" -- "$BIN" attribute --replay $N/recording.jsonl \
  --proc-root $N/proc --pods $N/pods.json --podresources-json $N/podresources.json --prices $N/prices.yaml
printf '{"apiVersion":"v1","kind":"List","items":[\n {"metadata":{"name":"x","uid":"u"}}]}\n' >"$tmp_acct"
expect_output 'tmp.*:2: kind is missing.*kubectl get pods -o json' \
  "attribute: a Pod without kind is named by file and line" -- "$BIN" attribute \
  --replay $N/recording.jsonl --pods "$tmp_acct"
printf '{"t":1,"type":"device"}\n' >"$tmp_acct"
expect_exit 1 "attribute: bad recording lines" -- "$BIN" attribute --replay "$tmp_acct"
expect_output ':1: line skipped: "uuid" must be a non-empty string' "attribute: bad line named" -- \
  "$BIN" attribute --replay "$tmp_acct"
expect_exit 2 "attribute: missing recording" -- "$BIN" attribute --replay $N/none.jsonl
expect_exit 2 "attribute: bad prices" -- "$BIN" attribute --replay $N/recording.jsonl \
  --prices $N/pods.json
rm -f "$tmp_acct"

# The exit-code rule (README, "Exit status"): per command, each code it can return.
# 0 success, 1 ran and found problems, 2 usage (flags, paths, unusable input), 3 runtime.
tmp_rule=$(mktemp -d)
touch "$tmp_rule/file"
expect_exit 2 "validate: missing path" -- "$BIN" validate testdata/api/none.yaml
expect_exit 0 "generate: to stdout" -- "$BIN" generate cluster --mix h100=1
expect_exit 2 "generate: bad mix" -- "$BIN" generate cluster --mix h100=x
expect_output 'mix entry "a100-80gb=50000": brings the mix to 110000 nodes; at most 100000 in all' \
  "generate: a mix too large is refused, not generated until memory runs out" -- \
  timeout -s KILL 20 "$BIN" generate cluster --mix h100=60000,a100-80gb=50000
expect_exit 3 "generate: output directory cannot be created" -- \
  "$BIN" generate cluster --mix h100=1 --output-dir "$tmp_rule/file/sub"
expect_exit 2 "allocate: missing path" -- "$BIN" allocate --objects examples/cluster \
  --claims examples/none.yaml
expect_exit 2 "schedule: missing path" -- "$BIN" schedule --objects examples/none \
  --workload examples/workloads
expect_exit 2 "explain: missing path" -- "$BIN" explain --objects examples/cluster \
  --workload examples/none --pod a/b
expect_output "give --objects and --workload \(files\), or --kubeconfig" \
  "explain: neither files nor a cluster" -- "$BIN" explain --pod a/b
expect_exit 2 "explain: neither files nor a cluster (exit)" -- "$BIN" explain --pod a/b
expect_output "^gpuplane explain: $tmp_rule/none: cannot read the kubeconfig" \
  "explain: a missing kubeconfig is named" -- "$BIN" explain --kubeconfig "$tmp_rule/none" --pod a/b
expect_output "excludes --kubeconfig" "explain: files and a cluster at once" -- "$BIN" explain \
  --kubeconfig "$tmp_rule/none" --objects examples/cluster --pod a/b
expect_exit 2 "explain: files and a cluster at once (exit)" -- "$BIN" explain \
  --kubeconfig "$tmp_rule/none" --objects examples/cluster --pod a/b
expect_output "^--no-preemption requires --kubeconfig" "explain: a scheduler flag on files" -- \
  "$BIN" explain --objects examples/cluster --workload examples/workloads --no-preemption --pod a/b
expect_exit 2 "simulate: missing claims workload" -- "$BIN" simulate --mode replay \
  --generate h100=1 --workload testdata/sim/claims/none.yaml
expect_exit 2 "simulate: missing cluster objects" -- "$BIN" simulate --mode replay \
  --objects examples/none --workload testdata/sim/claims/workload.yaml
expect_exit 3 "simulate: report cannot be written" -- "$BIN" simulate \
  --report "$tmp_rule/file/report.html"
expect_exit 2 "report: bad --since" -- "$BIN" report --ledger "$tmp_rule/none.db" --since soon
expect_exit 2 "agent: missing recording" -- "$BIN" agent --sampler replay \
  --replay "$tmp_rule/none.jsonl" --listen ""
expect_exit 3 "agent: cannot listen" -- "$BIN" agent --sampler synthetic --max-passes 1 \
  --listen 203.0.113.1:1
expect_exit 2 "unknown subcommand" -- "$BIN" frobnicate
rm -rf "$tmp_rule"

# "Did you mean": a close name is offered where a name is wrong.
tmp_dym=$(mktemp -d)
sed 's/deviceClassName: gpu.nvidia.com/deviceClassName: gpu.nvidia.co/' \
  examples/workloads/h100-or-better-40gi.yaml >"$tmp_dym/typo.yaml"
expect_output 'DeviceClass "gpu.nvidia.co" does not exist; did you mean "gpu.nvidia.com"\?' \
  "allocate: unknown DeviceClass" -- "$BIN" allocate --objects examples/cluster --claims "$tmp_dym/typo.yaml"
expect_output "undeclared reference to 'startWith'; did you mean \"startsWith\"\?" \
  "cel: unknown function" -- "$BIN" cel eval --expr '"abc".startWith("a")'
expect_output 'unknown policy "gpuplan".*; did you mean "gpuplane"\?' "simulate: unknown policy" -- \
  "$BIN" simulate --nodes testdata/sim/nodes.csv --pods testdata/sim/pods.csv --policy gpuplan
expect_output 'unknown policy "spred".*; did you mean "spread"\?' "schedule: unknown policy" -- \
  "$BIN" schedule --objects examples/cluster --workload examples/workloads --policy spred
expect_exit 2 "schedule: unknown policy is a usage error" -- \
  "$BIN" schedule --objects examples/cluster --workload examples/workloads --policy spred
expect_output 'unknown command "schedul"; did you mean "schedule"\?' "unknown command" -- \
  "$BIN" schedul
rm -rf "$tmp_dym"

echo "$pass passed, $failures failed"
[[ $failures -eq 0 ]]
