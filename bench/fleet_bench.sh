#!/usr/bin/env bash
# The fleet commands at scale (issue 41): BUNDLES synthetic bundles (bench/fleet_bundles.py;
# default 1024 hosts of 8 ranks, 8 rings of 1000 records and 64 threads per rank), then
# `atracectl hang` and `atracectl merge --format chrome-json` over all of them, each beside
# `tar -xzf` of the same bundles (the floor: reading them at all), wall time and peak RSS
# (GNU time's "Maximum resident set size").
# usage: bench/fleet_bench.sh ATRACECTL [BUNDLES [RANKS [RINGS [RECORDS [THREADS]]]]]
set -euo pipefail
atracectl="$1"
bundles="${2:-1024}" ranks="${3:-8}" rings="${4:-8}" records="${5:-1000}" threads="${6:-64}"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d /tmp/atraced-fleet-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

echo "== $bundles bundles x $ranks ranks, $rings rings of $records records, $threads threads per rank"
python3 "$here/fleet_bundles.py" "$scratch/b" "$bundles" "$ranks" "$rings" "$records" "$threads"
du -sh "$scratch/b" | sed 's/^/bundles: /'

# run NAME CMD...: wall seconds and peak RSS in MiB.
run() {
  local name="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$scratch/time" "$@" >"$scratch/out" 2>"$scratch/err" || {
    echo "$name failed:"
    tail -5 "$scratch/err"
    return 1
  }
  read -r secs kib <"$scratch/time"
  printf '%-34s %8.2f s %8.1f MiB\n' "$name" "$secs" "$(echo "$kib / 1024" | bc -l)"
}

mkdir -p "$scratch/x"
run "tar -xzf (every bundle, the floor)" sh -c 'for f in "$1"/*.tar.gz; do tar -xzf "$f" -C "$2"; done' _ "$scratch/b" "$scratch/x"
rm -rf "$scratch/x"
run "atracectl hang" "$atracectl" hang "$scratch"/b/*.tar.gz
grep -E "^(Ranks seen|  ranks|Likely)" "$scratch/out" | head -4
run "atracectl hang --json" "$atracectl" hang --json "$scratch"/b/*.tar.gz
run "atracectl merge --format chrome-json" "$atracectl" merge "$scratch"/b/*.tar.gz --format chrome-json -o "$scratch/m.json"
ls -la "$scratch/m.json" | awk '{print "merged document: " $5 " bytes"}'
