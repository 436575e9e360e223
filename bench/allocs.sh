#!/usr/bin/env bash
# Heap allocations per synchronous event in the daemon (one 4 KiB file, record num 10, the
# root at its limit), the same run as bench/syscalls.sh: the daemon runs with
# bench/count_malloc.so preloaded (malloc, calloc, realloc, memalign; operator new goes
# through malloc), over 20 warm-up events then N events, and over 20 then 0; the count at
# exit of (N) minus (0), divided by N, is the per-event cost, free of start-up, connection
# and shutdown allocations. Every thread of the daemon counts (the event loop and the
# remover). The daemon is stopped only once the remover has finished (bench/event_run.sh),
# so no delete is left out of the count.
#   bash bench/allocs.sh [BUILD_DIR] [N]     (defaults: build/bench, 2000)
set -euo pipefail
build="${1:-build/bench}"
n="${2:-2000}"
atraced="$build/daemon/atraced"
loop="$build/bench/atraced_emit_loop"
shim="$build/bench/count_malloc.so"
[[ -x "$atraced" && -x "$loop" && -f "$shim" ]] ||
  { echo "allocs.sh: build $atraced, $loop and $shim (target atraced_count_malloc) first" >&2; exit 2; }
shim="$(cd "$(dirname "$shim")" && pwd)/$(basename "$shim")"
scratch="$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/atraced-allocs.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
# shellcheck source=bench/event_run.sh
source "$(dirname "${BASH_SOURCE[0]}")/event_run.sh"

# run N OUT: the daemon under the shim while a client sends 20 warm-up events then N more.
run() {
  local count="$1" out="$2" dir="$scratch/d$1"
  mkdir -p "$dir/root"
  COUNT_MALLOC_OUT="$out" LD_PRELOAD="$shim" "$atraced" --root "$dir/root" --socket "$dir/s.sock" \
    --record-num 10 --log-level warning 2>"$dir/log" &
  local daemon=$!
  drive_events "$loop" "$dir" "$count"
  kill -TERM "$daemon"
  wait "$daemon" || true
}

run 0 "$scratch/count0"
run "$n" "$scratch/countN"
a=$(cat "$scratch/countN")
b=$(cat "$scratch/count0")
awk -v a="$a" -v b="$b" -v n="$n" \
  'BEGIN { printf "%-38s %8.1f allocations/event  (daemon threads, N=%d; %d and %d in all)\n", "allocs.daemon", (a - b) / n, n, a, b }'
