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

# shellcheck source=bench/timed_run.sh
source "$here/timed_run.sh"

mkdir -p "$scratch/x"
timed_run "tar -xzf (every bundle, the floor)" sh -c 'for f in "$1"/*.tar.gz; do tar -xzf "$f" -C "$2"; done' _ "$scratch/b" "$scratch/x"
rm -rf "$scratch/x"
timed_run "atracectl hang" "$atracectl" hang "$scratch"/b/*.tar.gz
grep -E "^(Ranks seen|  ranks|Likely)" "$scratch/out" | head -4
timed_run "atracectl hang --json" "$atracectl" hang --json "$scratch"/b/*.tar.gz
timed_run "atracectl merge --format chrome-json" "$atracectl" merge "$scratch"/b/*.tar.gz --format chrome-json -o "$scratch/m.json"
ls -la "$scratch/m.json" | awk '{print "merged document: " $5 " bytes"}'
