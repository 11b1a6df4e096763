#!/usr/bin/env bash
# Every header under src/ opens (before its include guard) with a contract that says what
# the type is for, who owns what, and whether it is thread-safe (../shared/docs/STYLE.md).
# The check looks for both: a thread-safety statement ("thread", "pure function", "plain
# value") and an ownership statement ("owns", "borrows", "value", "copies", "outlive", "pure
# function", "stateless", "immutable", "static data"). Usage: check_headers.sh [HEADER...] (default:
# every tracked src/**/*.h). Prints each header that lacks one; exits 1 if any does.
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then headers=("$@"); else mapfile -t headers < <(git ls-files 'src/*.h'); fi
bad=0
for h in "${headers[@]}"; do
  contract=$(awk '/^#ifndef/ {exit} {print}' "$h")
  if ! grep -qiE 'thread|pure function|plain value' <<<"$contract"; then
    echo "$h: the opening comment does not say whether it is thread-safe"
    bad=$((bad + 1))
  fi
  if ! grep -qiE 'own|borrow|value|copies|copy|outlive|stateless|immutable|static data|pure function' \
    <<<"$contract"; then
    echo "$h: the opening comment does not say who owns what"
    bad=$((bad + 1))
  fi
done
if [[ $bad -gt 0 ]]; then
  echo "$bad missing contract statements: say them at the top of each header"
  exit 1
fi
echo "headers: ${#headers[@]} with contracts"
