#!/usr/bin/env bash
# Tests the shipped alerts (deploy/scheduler/prometheusrule.yaml, the scheduler's, and
# deploy/agent-prometheusrule.yaml, the accounting agent's) with Prometheus' promtool:
#   1. `promtool check rules` on each PrometheusRule's spec: PromQL and templates parse;
#   2. every alert there has a case in testdata/deploy/alerts_test.yaml;
#   3. `promtool test rules` on those cases: each alert fires on the series that should page
#      and stays quiet on the near misses (descriptions, fixed text, are stripped first);
#   4. `amtool check-config` on the example Alertmanager configuration, and every alert routed
#      through it by its severity: critical to pagerduty-gpu, warning to slack-gpu, info to
#      "null" (what deploy/scheduler/README.md promises);
#   5. every query of the Grafana dashboard (deploy/grafana-dashboard.json) parses as PromQL.
# promtool and amtool: in .deps/bin (scripts/install-deps.sh unpacks them) or on PATH; without
# them the script says so and exits 77 (ctest: skipped).
# Other files (to check that a broken one fails): SCHEDULER_RULES, AGENT_RULES, CASES,
# ALERTMANAGER, DASHBOARD in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
scheduler_rules=${SCHEDULER_RULES:-deploy/scheduler/prometheusrule.yaml}
agent_rules=${AGENT_RULES:-deploy/agent-prometheusrule.yaml}
cases=${CASES:-testdata/deploy/alerts_test.yaml}
alertmanager=${ALERTMANAGER:-deploy/alertmanager.yaml}
dashboard=${DASHBOARD:-deploy/grafana-dashboard.json}

# tool NAME: its path, from .deps/bin or PATH; exits 77 without it.
tool() {
  if [[ -x .deps/bin/$1 ]]; then
    echo ".deps/bin/$1"
  elif command -v "$1" >/dev/null; then
    command -v "$1"
  else
    echo "test_alerts: skipped: no $1 (run scripts/install-deps.sh, or put $1 on PATH)" >&2
    exit 77
  fi
}
promtool=$(tool promtool)
amtool=$(tool amtool)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check_rules FILE NAME: FILE's spec into $work/NAME.yaml (the name the cases' rule_files
# use), checked by promtool; its alerts must have cases.
check_rules() {
  local rules=$1 name=$2 offset missing=0
  # The PrometheusRule's spec is a Prometheus rule file indented by two spaces.
  awk 'found { sub(/^  /, ""); print } /^spec:/ { found = 1 }' "$rules" >"$work/full-$name.yaml"
  if ! grep -q '^groups:' "$work/full-$name.yaml"; then
    echo "test_alerts: $rules: no 'spec:' with 'groups:' under it; expected a PrometheusRule"
    return 1
  fi
  # promtool's positions are the spec's: add the lines above it and its indent to name the
  # file's.
  offset=$(grep -n '^spec:' "$rules" | head -n 1 | cut -d: -f1)
  "$promtool" check rules "$work/full-$name.yaml" 2>&1 |
    awk -v tmp="$work/full-$name.yaml" -v file="$rules" -v offset="$offset" '{
      if (index($0, tmp ": ") == 1) {
        rest = substr($0, length(tmp) + 3)
        split(rest, pos, ":")
        $0 = file ":" (pos[1] + offset) ":" (pos[2] + 2) ":" substr(rest, length(pos[1] pos[2]) + 3)
      }
      gsub(tmp, file)
      print
    }'
  while read -r alert; do
    if ! grep -Eq "alertname: $alert\$" "$cases"; then
      echo "test_alerts: $rules: alert $alert has no case in $cases; add one"
      missing=1
    fi
  done < <(sed -nE 's/^ *- alert: *([A-Za-z0-9_]+) *$/\1/p' "$rules")
  ((missing == 0)) || return 1
  # Descriptions are fixed text (checked above); the cases compare labels and summaries.
  awk '/^ *description:/ { indent = match($0, /[^ ]/); skipping = 1; next }
       skipping { if (match($0, /[^ ]/) > indent) next; skipping = 0 }
       { print }' "$work/full-$name.yaml" >"$work/$name.yaml"
}
check_rules "$scheduler_rules" scheduler
check_rules "$agent_rules" agent
cp "$cases" "$work/cases.yaml"
"$promtool" test rules "$work/cases.yaml"

"$amtool" check-config "$alertmanager"
wrong=0
while read -r alert severity; do
  case "$severity" in
    critical) receiver=pagerduty-gpu ;;
    warning) receiver=slack-gpu ;;
    info) receiver=null ;;
    *)
      echo "test_alerts: alert $alert has severity '$severity'; expected critical, warning or info"
      wrong=1
      continue
      ;;
  esac
  if ! got=$("$amtool" config routes test --config.file="$alertmanager" \
    --verify.receivers="$receiver" "alertname=$alert" "severity=$severity" 2>/dev/null |
    head -n 1); then
    echo "test_alerts: $alertmanager routes $alert (severity $severity) to $got; expected $receiver"
    wrong=1
  fi
done < <(awk '/^ *- alert:/ { alert = $3 } /severity:/ && alert != "" {
               match($0, /severity: *[a-z]+/); split(substr($0, RSTART, RLENGTH), kv, /: */)
               print alert, kv[2]; alert = "" }' "$scheduler_rules" "$agent_rules")
((wrong == 0)) || exit 1
echo "  every alert routed by its severity"

# The dashboard's queries, as recording rules for promtool to parse (a JSON string's escapes
# undone; YAML single quotes doubled).
{
  echo "groups:"
  echo "  - name: dashboard"
  echo "    rules:"
  n=0
  grep -oE '"expr": *"([^"\\]|\\.)*"' "$dashboard" |
    sed -E 's/^"expr": *"//; s/"$//; s/\\"/"/g; s/\\\\/\\/g' |
    while IFS= read -r expr; do
      n=$((n + 1))
      echo "      - record: gpuplane_dashboard:query_$n"
      echo "        expr: '${expr//\'/\'\'}'"
    done
} >"$work/dashboard.yaml"
queries=$(grep -c 'record:' "$work/dashboard.yaml" || true)
if ((queries == 0)); then
  echo "test_alerts: $dashboard: no \"expr\" found; expected a Grafana dashboard with PromQL queries"
  exit 1
fi
if ! "$promtool" check rules "$work/dashboard.yaml" >"$work/dashboard.log" 2>&1; then
  sed "s|$work/dashboard.yaml|$dashboard (its queries as rules)|" "$work/dashboard.log"
  exit 1
fi
echo "  $dashboard: $queries queries parse"
