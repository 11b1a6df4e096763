#!/usr/bin/env bash
# A real Kubernetes control plane for tests and for trying gpuplane locally, built from
# Kubernetes' Go modules (test/controlplane, pinned by go.sum; docs/CONTROLPLANE.md).
#   scripts/controlplane.sh up DIR [--with-kube-scheduler] [--with-kwok]
#       builds what is missing, starts etcd, kube-apiserver and kube-controller-manager
#       (resourceclaim and garbage-collector controllers) in the background, plus
#       kube-scheduler and kwok when asked; waits until /readyz answers; writes
#       DIR/kubeconfig (admin bearer token, TLS with the plane's own CA) and prints
#       KUBECONFIG=DIR/kubeconfig. Logs are in DIR/logs.
#   scripts/controlplane.sh down DIR
#       stops everything `up DIR` started.
#   scripts/controlplane.sh restart-apiserver DIR
#       restarts kube-apiserver on the same port and waits until it is ready again.
#   scripts/controlplane.sh build
#       only builds build/controlplane.
# Exit 2 when the plane cannot be built or started.
# CONTROLPLANE_BIN overrides the binary's path; UP_TIMEOUT (seconds, default 300) bounds `up`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CONTROLPLANE_BIN=${CONTROLPLANE_BIN:-build/controlplane}
UP_TIMEOUT=${UP_TIMEOUT:-300}
VERSION=v1.35.4 # k8s.io/kubernetes in test/controlplane/go.mod

usage() {
  echo "usage: scripts/controlplane.sh up DIR [--with-kube-scheduler] [--with-kwok]" >&2
  echo "       scripts/controlplane.sh down DIR" >&2
  echo "       scripts/controlplane.sh restart-apiserver DIR" >&2
  echo "       scripts/controlplane.sh build" >&2
  exit 2
}

find_go() {
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
    PATH=/usr/local/go/bin:$PATH
  fi
  if ! command -v go >/dev/null; then
    echo "controlplane: no Go toolchain on PATH (the README's setup installs Go 1.26 at /usr/local/go)" >&2
    exit 2
  fi
}

# Rebuilt when a source is newer than the binary; `go build` itself caches the rest.
build_plane() {
  if [[ -x $CONTROLPLANE_BIN ]] && [[ -z $(find test/controlplane -newer "$CONTROLPLANE_BIN" -type f) ]]; then
    return
  fi
  find_go
  mkdir -p "$(dirname "$CONTROLPLANE_BIN")"
  local abs ld start
  abs=$(realpath -m "$CONTROLPLANE_BIN")
  # -s -w: no symbol table or DWARF (panics still name functions and lines); links in half the time.
  # -trimpath, as scripts/k8sref.sh builds too, so that the two share compiled packages.
  ld="-s -w -X k8s.io/component-base/version.gitVersion=$VERSION -X k8s.io/component-base/version.gitMajor=1"
  ld+=" -X k8s.io/component-base/version.gitMinor=35 -X k8s.io/client-go/pkg/version.gitVersion=$VERSION"
  start=$(date +%s)
  echo "controlplane: building $CONTROLPLANE_BIN (cold: about 4 minutes on 2 cores and the Go module proxy)" >&2
  if ! (cd test/controlplane && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ld" -o "$abs" .); then
    echo "controlplane: building test/controlplane failed" >&2
    exit 2
  fi
  echo "controlplane: built in $(($(date +%s) - start)) s" >&2
}

# The supervisor's pid if it is running for DIR.
running_pid() {
  local pidfile=$1/supervisor.pid pid
  [[ -f $pidfile ]] || return 1
  pid=$(cat "$pidfile")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

up() {
  local dir=$1
  shift
  local sched=() kwok=0
  for a in "$@"; do
    case $a in
      --with-kube-scheduler) sched=(--with-kube-scheduler) ;;
      --with-kwok) kwok=1 ;;
      *) echo "controlplane: unknown flag $a for up" >&2; usage ;;
    esac
  done
  build_plane
  if ((kwok)); then
    bash scripts/kwok.sh build
  fi
  mkdir -p "$dir"
  dir=$(realpath "$dir")
  if pid=$(running_pid "$dir"); then
    echo "controlplane: a plane is already running in $dir (pid $pid); run: scripts/controlplane.sh down $dir" >&2
    exit 2
  fi
  rm -f "$dir/ready"
  mkdir -p "$dir/logs"
  setsid "$ROOT/$CONTROLPLANE_BIN" up --dir "$dir" "${sched[@]}" >>"$dir/logs/up.log" 2>&1 </dev/null &
  echo $! >"$dir/supervisor.pid"
  local deadline=$((SECONDS + UP_TIMEOUT))
  while [[ ! -f $dir/ready ]]; do
    if ! kill -0 "$(cat "$dir/supervisor.pid")" 2>/dev/null; then
      echo "controlplane: the plane in $dir did not start:" >&2
      tail -n 20 "$dir/logs/up.log" "$dir/logs/supervisor.log" >&2 || true
      exit 2
    fi
    if ((SECONDS > deadline)); then
      echo "controlplane: not ready after ${UP_TIMEOUT} s; logs in $dir/logs; stopping it" >&2
      down "$dir"
      exit 2
    fi
    sleep 0.2
  done
  if ((kwok)); then
    bash scripts/kwok.sh start "$dir"
  fi
  echo "KUBECONFIG=$dir/kubeconfig"
}

down() {
  local dir=$1 pid
  [[ -d $dir ]] || { echo "controlplane: no plane in $dir" >&2; return 0; }
  if [[ -f $dir/pids/kwok.pid ]]; then
    kill "$(cat "$dir/pids/kwok.pid")" 2>/dev/null || true
    rm -f "$dir/pids/kwok.pid"
  fi
  if pid=$(running_pid "$dir"); then
    kill -TERM "$pid"
    for _ in $(seq 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # Whatever a killed supervisor left behind.
  for f in "$dir"/pids/*.pid; do
    [[ -f $f ]] || continue
    kill -KILL "-$(cat "$f")" 2>/dev/null || kill -KILL "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
  rm -f "$dir/supervisor.pid" "$dir/ready"
}

restart_apiserver() {
  local dir=$1 pid
  pid=$(running_pid "$dir") || { echo "controlplane: no plane running in $dir" >&2; exit 2; }
  rm -f "$dir/ready"
  kill -USR1 "$pid"
  local deadline=$((SECONDS + UP_TIMEOUT))
  until [[ -f $dir/ready ]]; do
    kill -0 "$pid" 2>/dev/null || { echo "controlplane: the plane in $dir stopped; see $dir/logs" >&2; exit 2; }
    ((SECONDS < deadline)) || { echo "controlplane: kube-apiserver not back after ${UP_TIMEOUT} s" >&2; exit 2; }
    sleep 0.2
  done
}

[[ $# -ge 1 ]] || usage
case $1 in
  up) [[ $# -ge 2 ]] || usage; up "${@:2}" ;;
  down) [[ $# -eq 2 ]] || usage; down "$2" ;;
  restart-apiserver) [[ $# -eq 2 ]] || usage; restart_apiserver "$2" ;;
  build) build_plane ;;
  *) usage ;;
esac
