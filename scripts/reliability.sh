#!/usr/bin/env bash
# Collects the measured results behind docs/RELIABILITY.md from the tests' own output:
# the hardening tests print "reliability: key=value" lines, and each libFuzzer target
# reports how many inputs it executed. Run after `bash scripts/dev.sh test` (it reuses
# build/release and the fuzzers of build/asan):
#   bash scripts/reliability.sh [seconds per fuzz target, default 30]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-30}"
tests=build/release/tests/hardening_tests
[[ -x "$tests" ]] || { echo "reliability.sh: build the suite first (bash scripts/dev.sh test)" >&2; exit 2; }

echo "| measurement | value |"
echo "| --- | --- |"
"$tests" 2>/dev/null | sed -n 's/^reliability: \([^=]*\)=\(.*\)$/| \1 | \2 |/p'
scratch="$(mktemp -d /tmp/atraced-corpus.XXXXXX)"
trap 'rm -rf "$scratch" /tmp/atraced-fuzz.*' EXIT
for target in frame_decoder names config session; do
  bin=build/asan/tests/fuzz/${target}_fuzzer
  [[ -x "$bin" ]] || continue
  mkdir -p "$scratch/$target"
  runs=$("$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 "$scratch/$target" \
    "tests/fuzz/corpus/$target" 2>&1 | sed -n 's/^stat::number_of_executed_units: *//p')
  echo "| fuzz.$target.executions_in_${seconds}s | ${runs:-failed} |"
done
