#!/usr/bin/env bash
# Tests the shipped alerts (deploy/scheduler/prometheusrule.yaml) with Prometheus' promtool:
#   1. `promtool check rules` on the PrometheusRule's spec: PromQL and templates parse;
#   2. every alert there has a case in testdata/deploy/alerts_test.yaml;
#   3. `promtool test rules` on those cases: each alert fires on the series that should page
#      and stays quiet on the near misses (descriptions, fixed text, are stripped first).
# promtool: .deps/bin/promtool (scripts/install-deps.sh unpacks it) or one on PATH; without
# either the script says so and exits 77 (ctest: skipped).
# Usage: scripts/test_alerts.sh [RULES_YAML [CASES_YAML]]
set -euo pipefail
cd "$(dirname "$0")/.."
rules=${1:-deploy/scheduler/prometheusrule.yaml}
cases=${2:-testdata/deploy/alerts_test.yaml}

promtool=.deps/bin/promtool
if [[ ! -x $promtool ]]; then
  promtool=$(command -v promtool || true)
fi
if [[ -z $promtool ]]; then
  echo "test_alerts: skipped: no promtool (run scripts/install-deps.sh, or put promtool on PATH)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The PrometheusRule's spec is a Prometheus rule file indented by two spaces.
awk 'found { sub(/^  /, ""); print } /^spec:/ { found = 1 }' "$rules" >"$work/full.yaml"
if ! grep -q '^groups:' "$work/full.yaml"; then
  echo "test_alerts: $rules: no 'spec:' with 'groups:' under it; expected a PrometheusRule"
  exit 1
fi
# promtool's positions are the spec's: add the lines above it and its indent to name the file's.
offset=$(grep -n '^spec:' "$rules" | head -n 1 | cut -d: -f1)
"$promtool" check rules "$work/full.yaml" 2>&1 |
  awk -v tmp="$work/full.yaml" -v file="$rules" -v offset="$offset" '{
    if (index($0, tmp ": ") == 1) {
      rest = substr($0, length(tmp) + 3)
      split(rest, pos, ":")
      $0 = file ":" (pos[1] + offset) ":" (pos[2] + 2) ":" substr(rest, length(pos[1] pos[2]) + 3)
    }
    gsub(tmp, file)
    print
  }'

missing=0
while read -r alert; do
  if ! grep -Eq "alertname: $alert\$" "$cases"; then
    echo "test_alerts: $rules: alert $alert has no case in $cases; add one"
    missing=1
  fi
done < <(sed -nE 's/^ *- alert: *([A-Za-z0-9_]+) *$/\1/p' "$rules")
((missing == 0)) || exit 1

# Descriptions are fixed text (checked above); the cases compare labels and summaries.
awk '/^ *description:/ { indent = match($0, /[^ ]/); skipping = 1; next }
     skipping { if (match($0, /[^ ]/) > indent) next; skipping = 0 }
     { print }' "$work/full.yaml" >"$work/rules.yaml"
cp "$cases" "$work/cases.yaml"
"$promtool" test rules "$work/cases.yaml"
