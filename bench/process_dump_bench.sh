#!/usr/bin/env bash
# atracectl dump against eu-stack -p (elfutils) on one hung process (issue 40), side by side
# in one run: a libascend_trace program with 8 full rings (1024 records each) and 64 threads
# (the main thread in pthread_join, two deadlocked, 61 spinning so that a stop costs it CPU,
# or idle),
# every signal blocked. Rounds alternate dump, eu-stack, dump, eu-stack, ...; each reports
#   latency     the command's wall time, start to exit;
#   held (max)  the longest any one thread was stopped: for dump, what the helper measured
#               per thread, from the stop it saw to its detach (PROCESS_DUMP's max_stop_us),
#               and an upper bound, from its interrupt to its detach (the thread may have run,
#               or waited for a CPU, until it stopped); for both, a sampler reading every
#               thread's /proc state in a loop (resolution: one sweep, ~1 ms on a quiet
#               machine, far coarser when the process's spinners take every CPU);
#   lost CPU    the process's CPU time (utime + stime) in a window around the command, against
#               the same window just before it with nothing running: what it did not get.
# Usage: bench/process_dump_bench.sh [BUILD_DIR] [ROUNDS] [UNWIND_MS] [spin|idle]
#        (default build/release, 5, 10000, spin; idle: the 61 threads wait on a condition instead)
# UNWIND_MS is the daemon's crash-unwind-timeout-ms: at its default, 2000, a process whose
# threads keep every CPU busy has only the threads that stopped by then in its report (each
# waits for its turn on a CPU before it stops); 10000 lets all 64 be read, as eu-stack reads them.
# The machine is shared: run it on a quiet one, and read the medians, not one round.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$src/build/release}"
rounds="${2:-5}"
unwind_ms="${3:-10000}"
threads_do="${4:-spin}"
atraced="$build/daemon/atraced"
ctl="$build/client/atracectl"
child="$build/tests/ascend_trace/ascend_trace_hang_child"
for f in "$atraced" "$ctl" "$child"; do
  [[ -x "$f" ]] || { echo "missing $f (build atraced, atracectl and ascend_trace_hang_child)" >&2; exit 2; }
done
command -v eu-stack >/dev/null || { echo "eu-stack missing: apt-get install elfutils" >&2; exit 2; }

tmp="$(mktemp -d)"
cleanup() {
  [[ -n "${hung:-}" ]] && kill -9 "$hung" 2>/dev/null || true
  [[ -n "${daemon:-}" ]] && kill "$daemon" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
"$atraced" --root "$tmp/root" --socket "$tmp/s.sock" --record-num 1000 --crash-unwind-timeout-ms "$unwind_ms" >"$tmp/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 200); do [[ -S "$tmp/s.sock" ]] && break; sleep 0.05; done
ATRACED_SOCKET="$tmp/s.sock" ATRACE_QUIET=1 "$child" 1024 8 61 "$threads_do" >"$tmp/child.out" &
hung=$!
for _ in $(seq 200); do grep -q ready "$tmp/child.out" 2>/dev/null && break; sleep 0.05; done
sleep 1  # the spinners settle

echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "process: pid $hung, $(ls /proc/$hung/task | wc -l) threads, 8 rings of 1024 records, 61 threads $threads_do; crash-unwind-timeout-ms $unwind_ms"
HUNG="$hung" CTL="$ctl" SOCK="$tmp/s.sock" ROUNDS="$rounds" python3 - <<'EOF'
import glob, json, os, re, statistics, subprocess, threading, time
pid, ctl, sock, rounds = int(os.environ["HUNG"]), os.environ["CTL"], os.environ["SOCK"], int(os.environ["ROUNDS"])
tick = os.sysconf("SC_CLK_TCK")

def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick  # utime, stime

def sample(stop, out):
    longest, since = {}, {}
    while not stop.is_set():
        now = time.monotonic()
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                state = open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state in "tT":
                since.setdefault(t, now)
                longest[t] = max(longest.get(t, 0), now - since[t])
            else:
                since.pop(t, None)
    out.append(max(longest.values(), default=0.0))

def measure(argv):
    window = 1.0
    c0 = cpu(); time.sleep(window); base = cpu() - c0          # nothing running
    stop, seen = threading.Event(), []
    sampler = threading.Thread(target=sample, args=(stop, seen)); sampler.start()
    c1 = cpu(); t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, ATRACED_SOCKET=sock))
    latency = time.monotonic() - t0
    time.sleep(max(0.0, window - latency))
    got = cpu() - c1
    stop.set(); sampler.join()
    lost = base * max(window, latency) / window - got
    return r, latency, seen[0], lost

rows = {"dump": [], "eu-stack": []}
for _ in range(rounds):
    r, lat, held, lost = measure([ctl, "dump", "--json", str(pid)])
    d = json.loads(r.stdout)["dumps"][0]
    report = open(glob.glob(d["path"] + "/stackcore_tracer_35_*.txt")[0]).read()
    bound = max((int(a) + int(b) for a, b in re.findall(r"\(held stopped (\d+) us; it stopped (\d+) us after", report)),
                default=0)
    rows["dump"].append((lat, d["max_stop_us"] / 1e6, bound / 1e6, held, lost, d["threads"]))
    r, lat, held, lost = measure(["eu-stack", "-p", str(pid)])
    rows["eu-stack"].append((lat, None, None, held, lost, r.stdout.count("TID ")))

def med(xs): return statistics.median(xs)
print(f"{'':10} {'latency ms':>11} {'held max ms (own)':>18} {'(own, upper bound)':>19} "
      f"{'held max ms (sampled)':>22} {'lost CPU ms':>12} {'threads':>8}")
for name, xs in rows.items():
    own = [x[1] for x in xs if x[1] is not None]
    bound = [x[2] for x in xs if x[2] is not None]
    nan = float('nan')
    print(f"{name:10} {med([x[0] for x in xs])*1e3:11.1f} {(med(own)*1e3 if own else nan):18.3f} "
          f"{(med(bound)*1e3 if bound else nan):19.1f} {med([x[3] for x in xs])*1e3:22.1f} "
          f"{med([x[4] for x in xs])*1e3:12.0f} {med([x[5] for x in xs]):8.0f}")
print(f"medians of {rounds} rounds; lost CPU = CPU the process got in a quiet 1 s window minus what it got "
      "in the same window with the command running")
EOF
