#!/usr/bin/env bash
# The timeline page at scale (issue 42): a root of PROCS processes with RECORDS records in all
# is exported with `atracectl export --format html`, and the page is opened in headless
# Chromium. Prints the export's time, the page's size (and the chrome-json document's, for
# comparison), Chromium's run from start to the dumped DOM, and the page's own time to first
# paint (performance.now() when its first draw ended: parse, decode and draw included).
# A benchmark figure, not a test: docs/BENCHMARKS.md records a run.
#   bash bench/timeline_bench.sh [BUILD_DIR] [RECORDS] [PROCS]
# BUILD_DIR holds daemon/atraced and client/atracectl (default build/rel; an unsanitised
# tree: bench/bench.sh's build/bench or `cmake -B build/rel -DCMAKE_BUILD_TYPE=RelWithDebInfo`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build/rel}" && pwd)"
records="${2:-1000000}"
procs="${3:-20}"
chromium=/usr/bin/chromium
[[ -x "$build/daemon/atraced" && -x "$build/client/atracectl" ]] || { echo "no atraced/atracectl in $build" >&2; exit 2; }
[[ -x "$chromium" ]] || { echo "no $chromium" >&2; exit 2; }
scratch="$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/atraced-timeline.XXXXXX")"
daemon=""
cleanup() { [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT
ctl() { "$build/client/atracectl" --socket "$scratch/s.sock" "$@"; }
mkdir -p "$scratch/root"
"$build/daemon/atraced" --socket "$scratch/s.sock" --root "$scratch/root" --record-num 1000 \
  --rate-limit-burst 0 --max-bytes-per-client 1T >"$scratch/atraced.log" 2>&1 &
daemon=$!
for _ in $(seq 50); do [[ -S "$scratch/s.sock" ]] && break; sleep 0.1; done
per=$((records / procs))
echo "== $records records: $procs processes of $per, one object file each, over an hour"
for p in $(seq "$procs"); do
  # Records of CANN's runtime form, their ids varying so that few texts repeat.
  awk -v n="$per" -v p="$p" 'BEGIN { for (i = 0; i < n; i++) { t = int(i * 3600000000 / n) + p;
    printf "2026-12-03 08:%02d:%02d.%03d.%03d CqReport:devId=%d,stmId=%d,taskId=%d,sqId=%d\n",
      int(t / 60000000) % 60, int(t / 1000000) % 60, int(t / 1000) % 1000, t % 1000, p % 8, i % 64, i, p } }' \
    >"$scratch/records.txt"
  ctl emit --event schedule --object "runtime_$p" "$scratch/records.txt" >/dev/null
done
echo "== machine: nproc $(nproc), $(uptime)"
start=$(date +%s.%N)
ctl export --format html -o "$scratch/page.html"
end=$(date +%s.%N)
ctl export --format chrome-json -o "$scratch/trace.json"
printf 'export html: %.2f s\n' "$(echo "$end - $start" | bc)"
echo "page: $(stat -c %s "$scratch/page.html") bytes; chrome-json: $(stat -c %s "$scratch/trace.json") bytes"
for run in 1 2 3; do
  start=$(date +%s.%N)
  timeout 300 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$scratch/profile" --window-size=1400,900 --dump-dom "file://$scratch/page.html" \
    >"$scratch/dom.html" 2>/dev/null
  end=$(date +%s.%N)
  paint=$(grep -o 'data-first-paint-ms="[0-9]*"' "$scratch/dom.html" | grep -o '[0-9]*' || echo "none")
  drawn=$(grep -o 'data-records="[0-9]*"' "$scratch/dom.html" | grep -o '[0-9]*' || echo "none")
  printf 'run %d: chromium to the dumped DOM %.2f s; first paint %s ms (page time); %s records in the page\n' \
    "$run" "$(echo "$end - $start" | bc)" "$paint" "$drawn"
done
