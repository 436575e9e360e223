#!/usr/bin/env bash
# hang --journal at scale (issue 51): HOSTS hosts of RANKS ranks (default 1024 x 8) write
# their hang and start entries (bench/journal_entries.py) through systemd-journal-remote into
# one journal directory, as a collector with SplitMode=host holds them (a file per host);
# then `atracectl hang --journal` over it, beside `journalctl -D DIR -o export > /dev/null`
# (the floor: reading the same entries at all), wall time and peak RSS (GNU time).
# usage: bench/journal_bench.sh ATRACECTL [HOSTS [RANKS]]
set -euo pipefail
atracectl="$1"
hosts="${2:-1024}" ranks="${3:-8}"
here="$(cd "$(dirname "$0")" && pwd)"
remote=/lib/systemd/systemd-journal-remote
[[ -x $remote ]] || { echo "needs $remote (apt-get install systemd-journal-remote)"; exit 77; }
scratch="$(mktemp -d /tmp/atraced-journal-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

echo "== $hosts hosts x $ranks ranks: a start and a hang entry per rank, a forged entry per host"
python3 "$here/journal_entries.py" "$scratch/in" "$hosts" "$ranks"
mkdir -p "$scratch/j"
for f in "$scratch"/in/*.export; do
  host="$(basename "$f" .export)"
  "$remote" -o "$scratch/j/remote-$host.journal" "$f" 2>/dev/null
done
du -sh "$scratch/j" | sed 's/^/journal: /'

# shellcheck source=bench/timed_run.sh
source "$here/timed_run.sh"

timed_run "journalctl -D DIR -o export > /dev/null" journalctl -D "$scratch/j" -o export --no-pager
timed_run "journalctl -D DIR ATRACE_EVENT=hang -o export" journalctl -D "$scratch/j" ATRACE_EVENT=hang -o export --no-pager
timed_run "atracectl hang --journal DIR" "$atracectl" hang --journal "$scratch/j"
grep -E "^(Job|Ranks seen|Culprit|[0-9]+ entries claiming)" "$scratch/out" | head -5
timed_run "atracectl hang --journal DIR --json" "$atracectl" hang --journal "$scratch/j" --json
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
