#!/usr/bin/env bash
# AtraceSubmit of a 112-byte record: CANN's own libascend_trace against ours, side by side.
#   bash bench/cann_submit_bench.sh CANN_SRC_GIT_DIR [--rounds N] [--records N] [--current-clocksource]
# CANN_SRC_GIT_DIR is a git directory of CANN's runtime repository (a bare mirror will do);
# its HEAD is read with git archive. The script
#   1. builds CANN's libascend_trace from src/dfx/trace at -O2 (its ring, tracer, recorder,
#      event and attribute code unchanged) with the stubs of bench/cann_stubs/ for what lies
#      outside the submit path (bench/cann_stubs/README.md lists them);
#   2. builds ours (atraced, libascend_trace, atraced_tick_bench) in BUILD_DIR (default
#      build/rel, RelWithDebInfo at -O2 -DNDEBUG), nice'd, JOBS jobs (default 2);
#   3. builds bench/cann_submit_bench.c once, with no run path, and runs that one binary
#      against each library in turn by LD_LIBRARY_PATH (ours twice: as it runs, and with
#      ATRACE_RING_CLOCK=monotonic, the fallback), ROUNDS rounds (default 7), the order
#      reversed every other round, against a daemon of ours on a scratch root and socket;
#   4. does that once per kernel clocksource (tsc, then kvm-clock) where it runs as root and
#      the kernel offers both, restarting the daemon under each (its counter checks run at
#      start-up), and puts the original clocksource back on any exit; elsewhere, or with
#      --current-clocksource (a machine shared with other measurements), it runs under the
#      current clocksource only and says so;
#   5. runs it with --pair: both libraries loaded in one process, PAIR_ROUNDS short
#      rounds (default 101) alternating between them, steadier on a busy machine;
#   6. prints, per clocksource, the median and min-max ns/record of each case and side by
#      thread CPU time and by wall time, the median and min-max of the per-round ratios to
#      CANN, the clock each ring is stamped with (its header), the load (uptime) before and
#      after, and atraced_tick_bench: what the daemon's tick costs for the counter's upkeep;
#   7. where valgrind is installed, counts the instructions of one AtraceSubmit (callgrind,
#      collecting only inside AtraceSubmit, 1 thread, locked and noLock) for each library:
#      a figure no other load on the machine moves.
# Environment: BUILD_DIR, JOBS, BENCH_DIR (scratch parent, default $TMPDIR or /tmp), CC,
# PAIR_ROUNDS, PAIR_RECORDS (default 200000).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
cann_git="${1:-}"
if [[ -z "$cann_git" || "$cann_git" == -* ]]; then
  sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
shift
rounds=7
records=2000000
switch_clocksource=1
while (($#)); do
  case "$1" in
    --rounds) shift; rounds="${1:?--rounds needs a number}" ;;
    --records) shift; records="${1:?--records needs a number}" ;;
    --current-clocksource) switch_clocksource=0 ;;
    *) echo "cann_submit_bench.sh: unknown argument [$1]" >&2; exit 2 ;;
  esac
  shift
done
git --git-dir="$cann_git" rev-parse --verify HEAD >/dev/null
cc="${CC:-gcc}"
build="${BUILD_DIR:-build/rel}"
scratch="$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/cann-submit.XXXXXX")"
cs_file=/sys/devices/system/clocksource/clocksource0/current_clocksource
cs_avail=/sys/devices/system/clocksource/clocksource0/available_clocksource
cs_original="$(cat "$cs_file")"
daemon_pid=""

stop_daemon() {
  if [[ -n "$daemon_pid" ]]; then
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=""
  fi
}
cleanup() {
  stop_daemon
  if [[ "$(cat "$cs_file")" != "$cs_original" ]]; then
    echo "$cs_original" >"$cs_file" || echo "cann_submit_bench.sh: could not restore clocksource $cs_original" >&2
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. CANN's library -----------------------------------------------------------------------
cann_src="$scratch/cann"
mkdir -p "$cann_src" "$scratch/cann-lib" "$scratch/obj"
cann_rev="$(git --git-dir="$cann_git" rev-parse --short HEAD)"
echo "== CANN's libascend_trace from $cann_git at $cann_rev (-O2)"
git --git-dir="$cann_git" archive HEAD src/dfx/trace/atrace src/dfx/trace/common src/dfx/trace/inc \
  src/dfx/log/inc/toolchain pkg_inc/trace pkg_inc/mmpa pkg_inc/driver | tar -x -C "$cann_src"
t="$cann_src/src/dfx/trace"
u="$t/atrace/utrace"
stubs="$here/bench/cann_stubs"
cann_inc=(-I"$u" -I"$u/event" -I"$u/recorder" -I"$u/ringbuffer" -I"$u/tracer" -I"$u/stacktrace"
  -I"$u/stacktrace/stacktrace_dumper" -I"$u/util" -I"$t/atrace/utils" -I"$t/common" -I"$t/inc/toolchain"
  -I"$stubs/include" -I"$cann_src/pkg_inc/trace" -I"$cann_src/pkg_inc/driver" -I"$cann_src/pkg_inc/mmpa"
  -I"$cann_src/pkg_inc/mmpa/sub_inc" -I"$cann_src/src/dfx/log/inc/toolchain")
# CANN's definitions and flags for the host libascend_trace (utrace/CMakeLists.txt), at -O2.
cann_cflags=(-O2 -std=gnu11 -fPIC -fno-common -fsigned-char -fno-strict-aliasing -fdata-sections -ffunction-sections
  -DOS_TYPE=0 -D_GNU_SOURCE -DHOST_ALOG -DADX_LIB_C -DATRACE_API -DATRACE_HOST)
# CANN's own sources, unchanged: everything AtraceCreate, AtraceSubmit and AtraceDestroy reach.
cann_files=("$u/atrace_api.c" "$u/trace_attr.c" "$u/event/trace_event.c" "$u/recorder/trace_recorder.c"
  "$u/ringbuffer/trace_rb_log.c" "$u/tracer/tracer_core.c" "$u/tracer/tracer_schedule.c"
  "$u/tracer/tracer_mgr_operate.c" "$u/tracer/tracer_mgr_operate_atrace.c" "$u/util/trace_driver_api.c"
  "$t/atrace/utils/trace_load_library.c" "$t/atrace/utils/trace_system_api.c" "$t/common/adiag_list.c"
  "$t/common/adiag_lock.c" "$t/common/adiag_utils.c")
objs=()
for f in "${cann_files[@]}" "$stubs/outside_submit.c"; do
  o="$scratch/obj/$(basename "$f" .c).o"
  "$cc" "${cann_cflags[@]}" -fvisibility=hidden "${cann_inc[@]}" -c "$f" -o "$o"
  objs+=("$o")
done
# securec, dlog and mmpa are libraries of their own in CANN: exported, called through the PLT.
for f in securec dlog mmpa; do
  o="$scratch/obj/stub_$f.o"
  "$cc" "${cann_cflags[@]}" -Wall -Wextra -Werror "${cann_inc[@]}" -c "$stubs/$f.c" -o "$o"
  objs+=("$o")
done
"$cc" -shared -o "$scratch/cann-lib/libascend_trace.so" "${objs[@]}" -Wl,-z,defs -Wl,--gc-sections \
  -Wl,-z,relro,-z,now -ldl -lpthread

# ---- 2. ours ---------------------------------------------------------------------------------
echo "== ours in $build"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  nice cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" >/dev/null
fi
nice cmake --build "$build" -j "${JOBS:-2}" --target atraced ascend_trace atraced_tick_bench >/dev/null
ours_so="$(find "$build/client" -name 'libascend_trace.so' | head -1)"
[[ -n "$ours_so" ]] || { echo "no libascend_trace.so under $build/client" >&2; exit 1; }
ours_lib="$(cd "$(dirname "$ours_so")" && pwd)"
cann_lib="$scratch/cann-lib"

# ---- 3. the program: linked against CANN's (no SONAME: it needs "libascend_trace.so"); its
# references are weak (atrace_pub.h), which --as-needed would not count as a need -------------
bench="$scratch/cann_submit_bench"
"$cc" -O2 -std=c11 -Wall -Wextra -Werror -Iclient/ascend_trace/include -Iproto/include bench/cann_submit_bench.c \
  -L"$cann_lib" -Wl,--no-as-needed -lascend_trace -Wl,--as-needed -lpthread -ldl -o "$bench"
pair="$scratch/cann_pair_bench"  # the same program, linked against neither library
"$cc" -O2 -std=c11 -Wall -Wextra -Werror -Iclient/ascend_trace/include -Iproto/include bench/cann_submit_bench.c -lpthread -ldl -o "$pair"

# ---- 4. the passes ---------------------------------------------------------------------------
cases=(locked1 nolock1 locked4 locked16)
declare -A label=([locked1]="1 thread, locked" [nolock1]="1 thread, noLock" [locked4]="4 threads, one locked object"
  [locked16]="16 threads, one locked object")

start_daemon() {
  local d="$scratch/daemon-$1"
  mkdir -p "$d"
  "$build/daemon/atraced" --root "$d/root" --socket "$d/s.sock" --log-level info >"$d/log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 200); do [[ -S "$d/s.sock" ]] && break; sleep 0.05; done
  [[ -S "$d/s.sock" ]] || { echo "atraced did not start:" >&2; cat "$d/log" >&2; exit 1; }
  export ATRACED_SOCKET="$d/s.sock"
  daemon_log="$d/log"
}

# The sides: CANN's library, ours as it runs, and ours told to stamp with CLOCK_MONOTONIC
# (ATRACE_RING_CLOCK=monotonic: what a library whose daemon refused the counter pays).
sides=(cann ours mono)
declare -A side_name=([cann]="CANN" [ours]="atraced" [mono]="atraced, CLOCK_MONOTONIC")

# Median, min and max of one side's values for one case, and of the per-round ratios of one
# side to CANN's (rounds pair up: every side ran once in each round).
summarize() {  # file side case -> "median min max"
  awk -v s="$2" -v c="$3" '$1 == s && $2 == c { print $3 }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan nan nan"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}
ratios() {  # file side case -> "median min max" of side/CANN per round
  awk -v s="$2" -v c="$3" '$2 == c && $1 == "cann" { a[++na] = $3 } $2 == c && $1 == s { b[++nb] = $3 }
    END { for (i = 1; i <= na && i <= nb; i++) print b[i] / a[i] }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan nan nan"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}

run_pass() {
  local cs="$1" out="$scratch/pass-$1"
  mkdir -p "$out"
  start_daemon "$cs"
  local load_before load_after
  load_before="$(uptime)"
  for ((r = 1; r <= rounds; r++)); do
    local order=(cann ours mono)
    ((r % 2 == 0)) && order=(mono ours cann)
    for side in "${order[@]}"; do
      local dir="$ours_lib" clock=auto
      [[ "$side" == cann ]] && dir="$cann_lib"
      [[ "$side" == mono ]] && clock=monotonic
      ATRACE_RING_CLOCK="$clock" LD_LIBRARY_PATH="$dir" "$bench" --records "$records" >"$out/$side.$r" \
        2>"$out/$side.$r.err" || { echo "round $r, $side failed:" >&2; cat "$out/$side.$r.err" >&2; exit 1; }
      awk -v s="$side" -v o="$out" '$1 == "case" {
        print s, $2, $4 >> (o "/cpu"); print s, $2, $6 >> (o "/wall"); print s, $2, $8 >> (o "/failed") }' "$out/$side.$r"
    done
  done
  local pair_before pair_after
  pair_before="$(uptime)"
  "$pair" --pair "$cann_lib/libascend_trace.so" "$ours_lib/libascend_trace.so" --rounds "${PAIR_ROUNDS:-101}" \
    --records "${PAIR_RECORDS:-200000}" >"$out/pairs"
  pair_after="$(uptime)"
  load_after="$(uptime)"
  stop_daemon

  echo
  echo "== kernel clocksource $cs; $rounds rounds x $records records per case and side; CANN $cann_rev"
  echo "   load before: $load_before"
  echo "   load after:  $load_after"
  for side in "${sides[@]}"; do
    echo "   ${side_name[$side]}: $(awk '$1 == "library" { print $2 }' "$out/$side.1")"
    for c in "${cases[@]}"; do
      echo "      $c stamps with: $(awk -v c="$c" '$2 == c { sub(/.* clock /, ""); print }' "$out/$side.1")"
    done
    for c in "${cases[@]}"; do
      echo "      $c records refused (slot busy), all rounds: $(awk -v s="$side" -v c="$c" '$1 == s && $2 == c { n += $3 }
        END { print n + 0 }' "$out/failed")"
    done
  done
  cat "$out"/*.err | sort | uniq -c | sed 's/^/   stderr: /'
  grep -i 'cycle counter' "$daemon_log" | sed 's/^/   daemon: /' || echo "   daemon: granted the cycle counter (no cycle-counter line in its log)"
  echo "   ns/record, median (min-max) over rounds; ratio to CANN: median (min-max) of the per-round ratios"
  printf '   %-29s | %-4s | %-22s | %-22s | %-18s | %-22s | %s\n' "112-byte record" "" "CANN" "atraced" \
    "atraced/CANN" "atraced, CLOCK_MONOTONIC" "monotonic/CANN"
  for c in "${cases[@]}"; do
    for metric in cpu wall; do
      local row
      row="$(printf '   %-29s | %-4s' "${label[$c]}" "$metric")"
      for side in "${sides[@]}"; do
        read -r m lo hi < <(summarize "$out/$metric" "$side" "$c")
        row+="$(printf ' | %5.1f (%5.1f-%5.1f) ns' "$m" "$lo" "$hi")"
        if [[ "$side" != cann ]]; then
          read -r m lo hi < <(ratios "$out/$metric" "$side" "$c")
          row+="$(printf ' | %4.2fx (%4.2f-%4.2f)' "$m" "$lo" "$hi")"
        fi
      done
      echo "$row"
    done
  done
  echo "-- in one process, CANN's library and ours alternating (cann_submit_bench --pair), ns/record"
  echo "   load before: $pair_before"
  echo "   load after:  $pair_after"
  sed 's/^/   /' "$out/pairs"
  count_instructions
  echo "-- the daemon's tick under $cs (atraced_tick_bench)"
  "$build/bench/atraced_tick_bench" | sed 's/^/   /' || echo "   (the counter lost its grant during the tick bench)"
}

# Instructions executed inside AtraceSubmit per record, 1 thread, by callgrind (inclusive of
# what it calls: the stamp, the copy): load-independent, unlike every timing above.
count_instructions() {
  if ! command -v valgrind >/dev/null; then
    echo "-- instructions per AtraceSubmit: skipped (no valgrind; apt-get install valgrind)"
    return 0
  fi
  local n=200000 warm=1000
  echo "-- instructions per AtraceSubmit (callgrind, inside AtraceSubmit only; $n records after $warm, 1 thread)"
  for c in locked1 nolock1; do
    local row
    row="$(printf '   %-17s' "${label[$c]}")"
    for side in cann ours; do
      local dir="$ours_lib" cg="$scratch/callgrind.$side.$c"
      [[ "$side" == cann ]] && dir="$cann_lib"
      LD_LIBRARY_PATH="$dir" valgrind --tool=callgrind --callgrind-out-file="$cg" --collect-atstart=no \
        --toggle-collect=AtraceSubmit "$bench" --only "$c" --records "$n" --warmup "$warm" >/dev/null 2>"$cg.err" ||
        { echo "callgrind of $side $c failed:" >&2; cat "$cg.err" >&2; exit 1; }
      local ir
      ir="$(awk '/^(summary|totals):/ { print $2; exit }' "$cg")"
      row+="$(printf ' | %s %6.1f instr/record' "${side_name[$side]}" "$(awk -v i="$ir" -v n=$((n + warm)) 'BEGIN { print i / n }')")"
    done
    echo "$row"
  done
}

can_switch=0
if ((switch_clocksource)) && [[ -w "$cs_file" ]] && grep -qw tsc "$cs_avail" && grep -qw kvm-clock "$cs_avail"; then can_switch=1; fi
if ((can_switch)); then
  for cs in tsc kvm-clock; do
    echo "$cs" >"$cs_file"
    [[ "$(cat "$cs_file")" == "$cs" ]] || { echo "the kernel refused clocksource $cs" >&2; exit 1; }
    run_pass "$cs"
  done
else
  echo "== not switching clocksources (--current-clocksource, or not root, or not both tsc and kvm-clock in" \
    "$cs_avail): measuring under the current one, $cs_original, only"
  run_pass "$cs_original"
fi
echo
echo "== done; the clocksource goes back to $cs_original on exit"
