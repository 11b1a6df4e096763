#!/usr/bin/env bash
# Runs the benchmarks recorded in docs/PERFORMANCE.md (Release build in build/).
# Usage: scripts/bench.sh [extra Google Benchmark flags]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
for b in build/bench/*_bench; do
  echo "== $(basename "$b")"
  "$b" --benchmark_repetitions="$REPS" --benchmark_report_aggregates_only=true "$@"
done
