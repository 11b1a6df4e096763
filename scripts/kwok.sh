#!/usr/bin/env bash
# kwok for the test plane (test/kwok, a Go module of its own: kwok v0.8.0 needs client-go
# 0.36, which must not meet the plane's 0.35 pins): fake nodes and pod lifecycles without
# kubelets, driven by gpuplane's stages (test/kwok/stages.yaml).
#   scripts/kwok.sh build       builds build/kwok when missing or older than test/kwok
#   scripts/kwok.sh start DIR   runs kwok against the plane in DIR (scripts/controlplane.sh),
#                               managing Nodes labelled gpuplane.io/kwok=true; log in
#                               DIR/logs/kwok.log; `scripts/controlplane.sh down DIR` stops it
# Exit 2 when kwok cannot be built or started. KWOK_BIN overrides the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
KWOK_BIN=${KWOK_BIN:-build/kwok}

build() {
  if [[ -x $KWOK_BIN ]] && [[ -z $(find test/kwok -newer "$KWOK_BIN" -type f) ]]; then
    return
  fi
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
    PATH=/usr/local/go/bin:$PATH
  fi
  command -v go >/dev/null || { echo "kwok: no Go toolchain on PATH" >&2; exit 2; }
  mkdir -p "$(dirname "$KWOK_BIN")"
  local abs
  abs=$(realpath -m "$KWOK_BIN")
  echo "kwok: building $KWOK_BIN" >&2
  if ! (cd test/kwok && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$abs" sigs.k8s.io/kwok/cmd/kwok); then
    echo "kwok: building test/kwok failed (it needs the Go module proxy the first time)" >&2
    exit 2
  fi
}

start() {
  local dir=$1
  [[ -f $dir/kubeconfig ]] || { echo "kwok: no plane in $dir (scripts/controlplane.sh up $dir)" >&2; exit 2; }
  build
  setsid "$KWOK_BIN" --kubeconfig "$dir/kubeconfig" --config test/kwok/stages.yaml \
    --manage-all-nodes=false --manage-nodes-with-label-selector=gpuplane.io/kwok=true \
    --server-address= >>"$dir/logs/kwok.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/kwok.pid"
  sleep 1
  kill -0 "$(cat "$dir/pids/kwok.pid")" 2>/dev/null ||
    { echo "kwok: exited at once; see $dir/logs/kwok.log" >&2; tail -n 10 "$dir/logs/kwok.log" >&2; exit 2; }
}

case ${1:-} in
  build) build ;;
  start) [[ $# -eq 2 ]] || { echo "usage: scripts/kwok.sh start DIR" >&2; exit 2; }; start "$2" ;;
  *) echo "usage: scripts/kwok.sh build | start DIR" >&2; exit 2 ;;
esac
