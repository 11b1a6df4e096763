#!/usr/bin/env bash
# The whole test suite (the README's `make test`; CI runs exactly this):
#   1. formatting check (clang-format) and header contracts (scripts/check_headers.sh)
#   2. GCC release build with warnings as errors, every test (unit, scenario, CLI, and the
#      shipped alerts with promtool: scripts/test_alerts.sh)
#   2b. Kubernetes' own code as the oracle (scripts/k8sref.sh): its CEL on the conformance
#       vectors and 20,000 random selectors; its structured allocator on 20,000 random
#       allocation instances, each decided by both
#   2c. end-to-end suites against a real control plane built from Kubernetes' Go modules
#       (scripts/e2e.sh: gpuplane validate vs kube-apiserver's dry run; the live mode's API
#       client, informers through an apiserver restart, Lease leader election)
#   3. clang-tidy over src/, started after the unit tests at the lowest CPU priority (nice 19)
#      so that it runs in the CPU time 2b and 2c leave idle (the e2e suites mostly wait on
#      their control plane); its findings are reported, and fail the suite, after 2c
#   4. clang build with AddressSanitizer + UndefinedBehaviorSanitizer, unit tests and the
#      command-line suites (any sanitizer report fails them)
#   5. libFuzzer targets from the clang build, each for FUZZ_SECONDS, JOBS of them at a time
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}

echo "== clang-format (at ${SECONDS}s)"
git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc' 'fuzz/*.cc' | xargs clang-format --dry-run -Werror

echo "== header contracts (at ${SECONDS}s)"
scripts/check_headers.sh
# The check itself: a header without a contract must fail it.
contractless=$(mktemp --suffix=.h)
printf '// A thing.\n#ifndef X_H_\n#define X_H_\n#endif\n' >"$contractless"
if scripts/check_headers.sh "$contractless" >/dev/null; then
  echo "check_headers.sh accepted a header without a contract"
  exit 1
fi
rm -f "$contractless"

echo "== GCC release build (-Werror) and all tests (at ${SECONDS}s)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUPLANE_WERROR=ON >/dev/null
cmake --build build -j "$JOBS"
ctest --test-dir build --output-on-failure -j "$JOBS" 2>&1 | tee build/ctest.log

echo "== clang-tidy starts in the background at nice 19 (at ${SECONDS}s)"
tidy_log=$(mktemp)
# Its own session (setsid), so that an early exit stops xargs and every clang-tidy it started.
git ls-files 'src/*.cc' |
  setsid nice -n 19 xargs -P "$JOBS" -n 4 clang-tidy -p build --quiet --warnings-as-errors='*' \
    >"$tidy_log" 2>/dev/null &
tidy_pid=$!
trap 'kill -- -"$tidy_pid" 2>/dev/null || true; rm -f "$tidy_log"' EXIT

echo "== Kubernetes' CEL vs gpuplane's (scripts/k8sref.sh) (at ${SECONDS}s)"
vectors=${GPUPLANE_SHARED_DIR:-../shared}/data/cel-conformance/conformance.jsonl
if [[ -f $vectors ]]; then
  scripts/k8sref.sh cel --vectors "$vectors" --show 50 | tail -n 60
else
  echo "skipped the conformance vectors: $vectors is absent (set GPUPLANE_SHARED_DIR)"
fi
scripts/k8sref.sh cel --random "${K8SREF_CEL_CASES:-20000}" --seed 1 --show 50 | tail -n 60

echo "== Kubernetes' allocator vs gpuplane's (scripts/k8sref.sh diff) (at ${SECONDS}s)"
scripts/k8sref.sh diff --instances "${K8SREF_DIFF_INSTANCES:-20000}" --seed 1 --show 20 | tail -n 120

echo "== end-to-end against a real control plane (scripts/e2e.sh) (at ${SECONDS}s)"
scripts/e2e.sh

echo "== clang-tidy (.clang-tidy; findings are errors): waiting for it to finish (at ${SECONDS}s)"
if ! wait "$tidy_pid"; then
  cat "$tidy_log"
  echo "clang-tidy found the problems above; rerun one file: clang-tidy -p build FILE"
  exit 1
fi
trap - EXIT
rm -f "$tidy_log"

echo "== clang ASan+UBSan build (-Werror), unit tests, fuzz targets (at ${SECONDS}s)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DGPUPLANE_WERROR=ON -DGPUPLANE_SANITIZE=ON -DGPUPLANE_BENCH=OFF -DGPUPLANE_FUZZ=ON \
  -DGPUPLANE_PLANE_TESTS=OFF >/dev/null
cmake --build build-asan -j "$JOBS"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan -L unit --output-on-failure -j "$JOBS"
# The command-line suites (cli_test.sh, agent_test.sh: bad input of every command, the agent
# killed and restarted) with the sanitized binary. They judge exit codes and output, so the
# sanitizers write their reports to files, and any report fails the suite.
san_logs=$(mktemp -d)
ASAN_OPTIONS=$ASAN_OPTIONS:log_path=$san_logs/asan UBSAN_OPTIONS=$UBSAN_OPTIONS:log_path=$san_logs/ubsan \
  ctest --test-dir build-asan -L cli --output-on-failure -j "$JOBS"
if compgen -G "$san_logs/*" >/dev/null; then
  head -n 60 "$san_logs"/*
  echo "the command-line suites under ASan/UBSan made the reports above"
  exit 1
fi
rm -rf "$san_logs"

# fuzz_one TARGET: one libFuzzer target for FUZZ_SECONDS on a corpus of the project's own inputs.
# Its report is printed in one piece at the end, so that targets running side by side do not mix.
fuzz_one() {
  local target=$1 name corpus log report status=0
  name=$(basename "$target")
  corpus=$(mktemp -d)
  case "$name" in
    cel_fuzz) cp testdata/cel/corpus/* "$corpus"/ ;;
    trace_fuzz) cp testdata/sim/*.csv testdata/sched/tenants/*.txt "$corpus"/ ;;
    cgroup_fuzz) cp testdata/acct/cgroup/* "$corpus"/ ;;
    kubeconfig_fuzz) cp testdata/kube/*.yaml "$corpus"/ ;;
    gang_intent_fuzz) cp testdata/kube/intents/* "$corpus"/ ;;
    queue_usage_fuzz) cp testdata/kube/queue-usage/* "$corpus"/ ;;
    informer_fuzz) cp testdata/kube/watch/* "$corpus"/ ;;
    acct_fuzz) cp testdata/acct/node/*.json testdata/acct/node/*.jsonl testdata/acct/node/*.yaml \
      "$corpus"/ ;;
    *) find testdata examples -type f \( -name '*.yaml' -o -name '*.json' \) -size -64k \
         -exec cp {} "$corpus"/ \; 2>/dev/null || true ;;
  esac
  log="$corpus.log" report="$corpus.report"
  echo "== fuzz $name for ${FUZZ_SECONDS}s (at $(($(date +%s) - SUITE_STARTED_AT))s)" >"$report"
  if ! "$target" -max_total_time="$FUZZ_SECONDS" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    status=1
    {
      # Show what was found and where the input was saved (crash-*, leak-*, timeout-*).
      grep -E "ERROR|SUMMARY|runtime error|Test unit written|^ +#[0-9]+ " "$log" | head -40
      # The input itself, so that a CI log alone is enough to reproduce (base64 -d > file).
      for found in $(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log"); do
        [ -f "$found" ] && echo "input $found (base64): $(head -c 4096 "$found" | base64 -w0)"
      done
      echo "fuzz $name found a problem; rerun: $target <the file named above>"
    } >>"$report"
  else
    tail -n 4 "$log" >>"$report"
  fi
  cat "$report"
  rm -rf "$corpus" "$log" "$report"
  return "$status"
}
export -f fuzz_one
# Each target's shell counts its SECONDS from 0, so it reads the suite's start from the clock.
export FUZZ_SECONDS SUITE_STARTED_AT=$(($(date +%s) - SECONDS))
# JOBS targets at a time (each runs on one core); xargs exits non-zero when any target failed.
if ! printf '%s\n' build-asan/fuzz/*_fuzz | xargs -P "$JOBS" -I{} bash -c 'fuzz_one "$1"' _ {}; then
  echo "a fuzz target found a problem (its report is above)"
  exit 1
fi

# Last, so CI reads ctest's closing line for the whole suite (from the run above).
echo "== summary (at ${SECONDS}s)"
grep -E "tests passed|tests failed|Total Test time" build/ctest.log
