#!/usr/bin/env bash
# Kubernetes' own code as the oracle for gpuplane (test/k8sref, a Go module pinned by go.sum).
# Builds the harness once (build/k8sref; Go with GOTOOLCHAIN=local, modules from the Go
# module proxy) and runs it against build/gpuplane:
#   scripts/k8sref.sh cel --vectors FILE.jsonl    the CEL conformance vectors' core cases
#   scripts/k8sref.sh cel --random N --seed S     N random selectors over random devices
#   scripts/k8sref.sh diff --instances N --seed S [--save DIR]
#                                                 N random allocation instances, decided by
#                                                 Kubernetes' structured allocator and by
#                                                 `gpuplane allocate --cases`
# cel: every case is evaluated by Kubernetes' DRA CEL environment and by gpuplane; the last
# line is {"cases":N,"agree":N,"differ":N,"known":N,"seconds":S}. Exit 1 when a difference is
# not a known Kubernetes departure (docs/TESTING.md).
#   scripts/k8sref.sh bench [--reps N] [--cases a,b,c,d,e]
#                                                 the same instances timed on both sides
# diff: the last line is {"instances":N,"agree":N,"k8s_incomplete":N,"gpuplane_bug":N,
# "k8s_invalid":N,"seconds":S}. Exit 1 on any gpuplane_bug.
# bench: one line per case on stderr, then {"a":{"unit","gpuplane","kubernetes","ratio"},...};
# needs build/bench/cel_bench for case e.
# Exit 2 when the harness cannot run.
# GPUPLANE_BIN and K8SREF_BIN override the binaries' paths.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUPLANE_BIN=${GPUPLANE_BIN:-build/gpuplane}
K8SREF_BIN=${K8SREF_BIN:-build/k8sref}

if [[ $# -lt 1 || ! $1 =~ ^(cel|diff|bench)$ ]]; then
  echo "usage: scripts/k8sref.sh cel (--vectors FILE.jsonl | --random N --seed S)" >&2
  echo "       scripts/k8sref.sh diff --instances N --seed S [--save DIR]" >&2
  echo "       scripts/k8sref.sh bench [--reps N] [--cases a,b,c,d,e] [--keep DIR]" >&2
  exit 2
fi
if [[ ! -x $GPUPLANE_BIN ]]; then
  echo "k8sref: $GPUPLANE_BIN is missing; build it first (cmake --build build)" >&2
  exit 2
fi
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
  PATH=/usr/local/go/bin:$PATH
fi
if ! command -v go >/dev/null; then
  echo "k8sref: no Go toolchain on PATH (the README's setup installs Go 1.26 at /usr/local/go)" >&2
  exit 2
fi
# Rebuilt when a source is newer than the binary; `go build` itself caches the rest.
if [[ ! -x $K8SREF_BIN ]] || [[ -n $(find test/k8sref -newer "$K8SREF_BIN" -type f) ]]; then
  mkdir -p "$(dirname "$K8SREF_BIN")"
  abs=$(realpath -m "$K8SREF_BIN")
  # -trimpath as scripts/controlplane.sh builds the plane: the Go build cache then serves the
  # plane the standard library packages compiled here (about 35 s of CPU on a cold cache).
  if ! (cd test/k8sref && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$abs" .); then
    echo "k8sref: building test/k8sref failed (it needs the Go module proxy the first time)" >&2
    exit 2
  fi
fi
command=$1
shift
exec "$K8SREF_BIN" "$command" --gpuplane "$GPUPLANE_BIN" "$@"
