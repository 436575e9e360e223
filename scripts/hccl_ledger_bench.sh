#!/usr/bin/env bash
# The collective ledger's cost per HCCL call (issue 52): HcclAllReduce through a stub libhccl
# (bench/hccl_stub.c), with and without LD_PRELOAD=libatrace_hccl.so, ROUNDS rounds (default
# 7) interleaved, N calls each (default 2000000) after a warm-up, no daemon reachable (the
# ledger stays in the process: what a call pays is the same either way). Prints the median
# and min-max ns per call (thread CPU time and wall time) of each side and of the difference,
# and the system calls per call with the interposer, counted with `strace -f -c` over N calls
# and over 0 ((calls(N) - calls(0)) / N: start-up and the ledger's creation cancel out).
#   bash scripts/hccl_ledger_bench.sh [BUILD_DIR] [N]      (default build/release)
set -euo pipefail
build="${1:-build/release}"
n="${2:-2000000}"
rounds="${ROUNDS:-7}"
bin="$build/bench/atraced_hccl_ledger_bench"
lib="$build/client/atrace_hccl/libatrace_hccl.so"
[[ -x "$bin" && -f "$lib" ]] || { echo "hccl_ledger_bench.sh: build $bin and $lib first" >&2; exit 2; }
export ATRACED_SOCKET=/nonexistent/atraced-bench.sock ATRACE_QUIET=1

median_range() {  # numbers on stdin: "median (min-max)"
  sort -g | awk '{ v[NR] = $1 } END { printf "%.1f (%.1f-%.1f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
plain_cpu=() preload_cpu=() plain_wall=() preload_wall=() diff_cpu=()
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then
    a=$("$bin" "$n"); b=$(LD_PRELOAD="$lib" "$bin" "$n")
  else
    b=$(LD_PRELOAD="$lib" "$bin" "$n"); a=$("$bin" "$n")
  fi
  plain_wall+=("$(awk '{print $2}' <<<"$a")"); plain_cpu+=("$(awk '{print $4}' <<<"$a")")
  preload_wall+=("$(awk '{print $2}' <<<"$b")"); preload_cpu+=("$(awk '{print $4}' <<<"$b")")
  diff_cpu+=("$(awk -v x="${preload_cpu[-1]}" -v y="${plain_cpu[-1]}" 'BEGIN { print x - y }')")
done
echo "rounds $rounds, $n calls each"
echo "stub call alone:       cpu $(printf '%s\n' "${plain_cpu[@]}" | median_range) ns, wall $(printf '%s\n' "${plain_wall[@]}" | median_range) ns"
echo "with libatrace_hccl:   cpu $(printf '%s\n' "${preload_cpu[@]}" | median_range) ns, wall $(printf '%s\n' "${preload_wall[@]}" | median_range) ns"
echo "the ledger's cost:     cpu $(printf '%s\n' "${diff_cpu[@]}" | median_range) ns per call"
if command -v strace >/dev/null; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  count=200000
  strace -f -c -o "$scratch/n" env LD_PRELOAD="$lib" "$bin" "$count" >/dev/null
  strace -f -c -o "$scratch/z" env LD_PRELOAD="$lib" "$bin" 0 >/dev/null
  total() { awk '$NF == "total" { print $4 }' "$1"; }
  echo "system calls per call with libatrace_hccl: $(awk -v a="$(total "$scratch/n")" -v b="$(total "$scratch/z")" -v n="$count" 'BEGIN { printf "%.4f (%d over %d calls, %d over 0)", (a - b) / n, a, n, b }')"
else
  echo "system calls: not counted (strace is not installed)"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
