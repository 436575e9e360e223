#!/usr/bin/env bash
# Builds and runs the atraced benchmarks (docs/BENCHMARKS.md) and prints the table.
#   bash bench/bench.sh            full run (several minutes; 100,000-dir recovery tree)
#   bash bench/bench.sh --quick    smaller counts, under about a minute once built
#   bash bench/bench.sh --smoke    tiny counts: every case runs once, in seconds
#   bash bench/bench.sh [--quick] -- [atraced_bench options]   e.g. -- --only churn,bulk
#   bash bench/bench.sh --before REV [-- --only cpu,storm]   also builds atraced at git
#                                    revision REV (build/bench-before/<sha>) and gives it to the
#                                    cpu and storm cases (REV against this tree)
# Builds RelWithDebInfo without sanitizers into build/bench (only atraced, the client library
# atraced_bench, atraced_emit_loop and the count_malloc.so shim). atraced_bench starts its own atraced instances on a temporary root and
# socket under a scratch directory, runs every case, prints the table and stops them; this
# script removes the scratch directory. Environment: BENCH_DIR (scratch parent, default
# $TMPDIR or /tmp), JOBS (build jobs, default 2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
mode=full
before=""
extra=()
while (($#)); do
  case "$1" in
    --quick) mode=quick ;;
    --smoke) mode=smoke ;;
    --before) shift; before="${1:?--before needs a git revision}" ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument [$1] (use --quick, or -- before atraced_bench options)" >&2; exit 2 ;;
  esac
  shift
done

build=build/bench
echo "== configuring $build (RelWithDebInfo, no sanitizers)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATRACED_BUILD_TESTS=OFF \
  -DATRACED_SANITIZE=OFF -DATRACED_TSAN=OFF -DATRACED_FUZZ=OFF -DATRACED_BUILD_BENCH=ON >/dev/null
echo "== building atraced, libatrace_client, libascend_trace, atraced_bench, atraced_emit_loop, count_malloc.so"
cmake --build "$build" -j "${JOBS:-2}" --target atraced atraced_client ascend_trace atraced_bench atraced_storm_child atraced_emit_loop \
  atraced_count_malloc >/dev/null

before_args=()
if [[ -n "$before" ]]; then
  sha="$(git rev-parse --verify "$before^{commit}")"
  bdir="build/bench-before/$sha"
  if [[ ! -x "$bdir/build/daemon/atraced" ]]; then
    echo "== building atraced at $before ($sha) in $bdir"
    rm -rf "$bdir/src"
    mkdir -p "$bdir/src"
    git archive "$sha" | tar -x -C "$bdir/src"
    cmake -S "$bdir/src" -B "$bdir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATRACED_BUILD_TESTS=OFF \
      -DATRACED_SANITIZE=OFF -DATRACED_TSAN=OFF -DATRACED_FUZZ=OFF -DATRACED_BUILD_BENCH=OFF >/dev/null
    cmake --build "$bdir/build" -j "${JOBS:-2}" --target atraced >/dev/null
  fi
  before_args=(--before "$bdir/build/daemon/atraced")
fi

scratch="$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/atraced-bench.XXXXXX")"
cleanup() { rm -rf "$scratch"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== machine"
echo "nproc: $(nproc)"
echo "kernel: $(uname -r)"
echo "load: $(uptime)"
df -T "$scratch" | sed 's/^/df: /'
echo "== running atraced_bench --mode $mode ${extra[*]:-}"
# atraced_bench starts and stops the daemons itself (record number 10 and 1000, recovery and
# memory instances); if it dies they get SIGKILL (PR_SET_PDEATHSIG).
set +e
"$build/bench/atraced_bench" --mode "$mode" --dir "$scratch" --atraced "$build/daemon/atraced" "${before_args[@]}" "${extra[@]}"
status=$?
set -e
# System calls per event on each side (strace -f -c), after the timed cases so that strace
# never slows them down.
case "$mode" in smoke) calls=50 ;; quick) calls=500 ;; *) calls=2000 ;; esac
if command -v strace >/dev/null; then
  echo "== system calls per event (bench/syscalls.sh)"
  BENCH_DIR="$scratch" bash bench/syscalls.sh "$build" "$calls" || true
fi
# Heap allocations per event in the daemon (bench/allocs.sh, a counting malloc preloaded).
echo "== heap allocations per event (bench/allocs.sh)"
BENCH_DIR="$scratch" bash bench/allocs.sh "$build" "$calls" || true
exit $status
