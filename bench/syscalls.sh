#!/usr/bin/env bash
# System calls per synchronous event (one 4 KiB file, record num 10, the root at its limit):
# through atraced (every thread of the daemon: the event loop and the remover) and with the
# CANN-style writer inside the application. Each side is counted with `strace -f -c` over a
# run of N events and over a run of 0 events; (calls(N) - calls(0)) / N is the per-event
# cost, free of start-up and connection calls. The client library's own calls are not
# counted on the daemon side: they are the round trip (one sendmsg, one recvmsg).
#   bash bench/syscalls.sh [BUILD_DIR] [N] [MODE]   (defaults: build/bench, 2000, daemon)
# MODE daemon-fd sends each event through a passed descriptor (ATRACE_EMIT_VIA_FD).
# Prints one line per side, the ratio, and the daemon's calls per event by name.
set -euo pipefail
build="${1:-build/bench}"
n="${2:-2000}"
mode="${3:-daemon}"
command -v strace >/dev/null || { echo "syscalls.sh: strace is not installed" >&2; exit 77; }
atraced="$build/daemon/atraced"
loop="$build/bench/atraced_emit_loop"
[[ -x "$atraced" && -x "$loop" ]] || { echo "syscalls.sh: build $atraced and $loop first" >&2; exit 2; }
scratch="$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/atraced-syscalls.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
# shellcheck source=bench/event_run.sh
source "$(dirname "${BASH_SOURCE[0]}")/event_run.sh"

total() { awk '$NF == "total" { print $4 }' "$1"; }

# daemon_side N OUT: strace the daemon while a client sends 20 warm-up events then N more.
daemon_side() {
  local count="$1" out="$2" dir="$scratch/d$1"
  mkdir -p "$dir/root"
  strace -f -c -o "$out" "$atraced" --root "$dir/root" --socket "$dir/s.sock" --record-num 10 \
    --log-level warning 2>"$dir/log" &
  local tracer=$!
  drive_events "$loop" "$dir" "$count" "$mode"
  pkill -TERM -P "$tracer" atraced || true
  wait "$tracer" || true
}

# direct_side N OUT: strace the application writing 20 warm-up events then N more.
direct_side() {
  local count="$1" out="$2" dir="$scratch/x$1"
  mkdir -p "$dir/root"
  strace -f -c -o "$out" sh -c "'$loop' direct '$dir/root' 20 && '$loop' direct '$dir/root' $((count + 20))" >/dev/null
}

daemon_side 0 "$scratch/daemon0"
daemon_side "$n" "$scratch/daemonN"
# The direct writer's second process repeats the warm-up, so both runs hold the same
# start-up work; only the N events differ.
direct_side 0 "$scratch/direct0"
direct_side "$n" "$scratch/directN"

d=$(awk -v a="$(total "$scratch/daemonN")" -v b="$(total "$scratch/daemon0")" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')
x=$(awk -v a="$(total "$scratch/directN")" -v b="$(total "$scratch/direct0")" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')
r=$(awk -v d="$d" -v x="$x" 'BEGIN { printf "%.2f", d / x }')
printf '%-38s %8s calls/event  (daemon threads, strace -f -c, N=%s, %s)\n' syscalls.daemon "$d" "$n" "$mode"
printf '%-38s %8s calls/event  (the application, CANN-style)\n' syscalls.direct "$x"
printf '%-38s %8s x\n' syscalls.daemon_vs_direct "$r"
echo "# daemon calls per event by name:"
# strace -c rows: "% time  seconds  usecs/call  calls  [errors]  syscall"; calls is field 4.
calls_by_name() { awk '$1 ~ /^[0-9.]+$/ && $NF != "total" { print $NF, $4 }' "$1" | sort; }
join -a1 -e0 -o 0,1.2,2.2 <(calls_by_name "$scratch/daemonN") <(calls_by_name "$scratch/daemon0") |
  awk -v n="$n" '{ per = ($2 - $3) / n; if (per >= 0.05) printf "#   %-14s %5.2f\n", $1, per }' | sort -k3 -rn
