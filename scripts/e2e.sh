#!/usr/bin/env bash
# End-to-end suites against a real Kubernetes control plane (scripts/controlplane.sh; one
# plane for the whole run, started once and always stopped):
#   1. validation: `gpuplane validate` vs kube-apiserver's server-side dry run, file by file,
#      over testdata/api/malformed, testdata/api/valid and examples/, with the Queue CRD of
#      deploy/crds installed; a disagreement not listed with its reason in
#      test/controlplane/validate_known.txt fails the suite (docs/CONTROLPLANE.md)
#   2. the live mode's API client (src/kube) against kube-apiserver: token and client
#      certificate, RBAC refusal, watch; an informer through a kube-apiserver restart
#      (scripts/controlplane.sh restart-apiserver: 410 Gone, list again); leader election on
#      a Lease (one of two leads, hand-over, a crashed leader); a scheduling pass over the
#      cluster cache placing a pod; kube_test's *PlaneTest with GPUPLANE_TEST_PLANE
#   3. the live scheduler (`gpuplane scheduler`, kube/scheduler.h; kube_scheduler_plane_test):
#      the three seed scenarios on the example cluster where the offline pass puts them,
#      claims from templates, Workload gangs whole or not at all, unschedulable pods'
#      condition, Event and reason, a claim whose CEL fails, a ResourceSlice for a missing
#      node, a kube-apiserver restart;
#      then as processes (*ProcessTest, GPUPLANE_BIN): 50 SIGKILLs while binding gangs (every
#      gang whole or with nothing bound within 30 s, no device in two claims) and a leader
#      killed during a burst (the standby leads within the lease + 5 s); the shipped RBAC
#      (deploy/scheduler/rbac.yaml) enough for every write, as the scheduler's ServiceAccount
# Needs build/gpuplane; builds build/controlplane when missing. Exit 1 on a failure, 2 when
# the plane cannot be built or started.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUPLANE_BIN=${GPUPLANE_BIN:-build/gpuplane}
CONTROLPLANE_BIN=${CONTROLPLANE_BIN:-build/controlplane}
export CONTROLPLANE_BIN
if [[ ! -x $GPUPLANE_BIN ]]; then
  echo "e2e: $GPUPLANE_BIN is missing; build it first (cmake --build build)" >&2
  exit 2
fi
bash scripts/controlplane.sh build
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuplane-e2e.XXXXXX")
cleanup() {
  local rc=$?
  bash scripts/controlplane.sh down "$dir" || true
  if ((rc != 0)); then
    echo "e2e: failed; the plane's logs (last lines):" >&2
    tail -n 15 "$dir"/logs/*.log >&2 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
start=$SECONDS
bash scripts/controlplane.sh up "$dir" >/dev/null
echo "e2e: plane ready in $((SECONDS - start)) s"

echo "== e2e: validation against kube-apiserver"
validate=("$CONTROLPLANE_BIN" validate --kubeconfig "$dir/kubeconfig" --gpuplane "$GPUPLANE_BIN"
  --crds deploy/crds)
"${validate[@]}" --known test/controlplane/validate_known.txt \
  testdata/api/malformed testdata/api/valid examples 2>/dev/null | grep -v '^known '
# The check itself: without the list, a known disagreement must fail it.
if "${validate[@]}" testdata/api/malformed/queue-parent-missing.yaml >/dev/null 2>&1; then
  echo "e2e: validate passed a disagreement that is not listed" >&2
  exit 1
fi

echo "== e2e: the kube client and the live scheduler against the plane"
for tests in kube_test kube_scheduler_plane_test; do
  GPUPLANE_TEST_PLANE=$dir GPUPLANE_BIN=$(realpath "$GPUPLANE_BIN") \
    "$(dirname "$GPUPLANE_BIN")/src/kube/$tests" --gtest_filter='*PlaneTest.*:*ProcessTest.*' \
    --gtest_brief=1
done

