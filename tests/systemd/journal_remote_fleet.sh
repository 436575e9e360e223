#!/usr/bin/env bash
# The fleet's journal path (docs/FLEET.md), end to end on one machine: three "hosts" and a
# collector, each in its own network namespace, joined by veth pairs so that each host
# reaches the collector from its own address. In each host namespace atraced runs with its
# stderr as "the journal" and journald's socket served by fake_journald.py (a private mount
# namespace), three labelled processes of job J1 (and one of another job) make directories,
# the entries are written in the Journal Export Format, turned into a journal file by
# systemd-journal-remote, and sent by systemd-journal-upload --follow=no to
# systemd-journal-remote --split-mode=host in the collector's namespace. There,
# `journalctl -D … ATRACE_JOB=J1` must list the job's directories on all three hosts.
# Skipped (exit 77) where namespaces cannot be made or the tools are missing.
# usage: journal_remote_fleet.sh ATRACED ATRACECTL
set -euo pipefail
atraced="$1"
atracectl="$2"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=fleet_netns.sh
source "$here/fleet_netns.sh"
fleet_require

tag="atrf$$"
scratch="$(mktemp -d /tmp/atraced-fleet.XXXXXX)"
trap fleet_cleanup EXIT
fleet_make_namespaces
fleet_start_collector

# One host: atraced with a journal, two ranks of J1 and one process of J2, then the upload.
run_host() {
  local h="$1" d="$scratch/h$h"
  mkdir -p "$d"
  ip netns exec "${tag}h$h" unshare -m --propagation private bash -c '
    set -euo pipefail
    d="$1"; h="$2"; atraced="$3"; atracectl="$4"; here="$5"
    if [[ -d /run/systemd ]]; then mount -t tmpfs tmpfs /run/systemd; else mount -t tmpfs tmpfs /run; mkdir -p /run/systemd; fi
    mkdir -p /run/systemd/journal
    python3 "$here/fake_journald.py" /run/systemd/journal/socket "$d/entries.export" "host$h" "$d/stop" "$d/ready" &
    journald=$!
    for _ in $(seq 600); do [[ -e "$d/ready" ]] && break; sleep 0.1; done
    exec 3>"$d/atraced.log"
    stream="$(stat -c "%d:%i" "$d/atraced.log")"
    JOURNAL_STREAM="$stream" "$atraced" --root "$d/root" --socket "$d/s.sock" 2>&3 &
    daemon=$!
    for _ in $(seq 600); do "$atracectl" --socket "$d/s.sock" status >/dev/null 2>&1 && break; sleep 0.1; done
    for k in 0 1; do
      echo x | ATRACE_JOB=J1 RANK_ID=$((h * 2 + k)) RANK_SIZE=6 "$atracectl" --socket "$d/s.sock" emit --event schedule --object CANN_API >/dev/null
    done
    echo x | ATRACE_JOB=J2 RANK_ID=0 "$atracectl" --socket "$d/s.sock" emit --event schedule --object CANN_API >/dev/null
    for _ in $(seq 600); do [[ "$(grep -c "^ATRACE_EVENT=created" "$d/entries.export" 2>/dev/null)" == 3 ]] && break; sleep 0.1; done
    kill -TERM "$daemon"; wait "$daemon" || true
    touch "$d/stop"; wait "$journald"
  ' _ "$d" "$h" "$atraced" "$atracectl" "$here"
  "$remote" -o "$d/host$h.journal" - <"$d/entries.export"
  ip netns exec "${tag}h$h" "$upload" --follow=no --file="$d/host$h.journal" --url="http://10.213.$h.1:19532" \
    >"$d/upload.log" 2>&1
}

for h in 0 1 2; do run_host "$h"; done

# The collector: one file per host, and the job's directories on all three.
for _ in $(seq 300); do
  [[ "$(ls "$scratch/agg" | grep -c '\.journal$')" -ge 3 ]] && break
  sleep 0.1
done
ls "$scratch/agg"
files="$(ls "$scratch/agg" | grep -c '\.journal$')"
[[ "$files" -ge 3 ]] || { echo "FAIL: $files journal files on the collector, expected one per host"; cat "$scratch/collector.log"; exit 1; }
journalctl -D "$scratch/agg" ATRACE_JOB=J1 -o json >"$scratch/j1.json"
python3 - "$scratch/j1.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
created = [r for r in rows if r.get("ATRACE_EVENT") == "created"]
hosts = sorted({r["_HOSTNAME"] for r in created})
ranks = sorted(int(r["ATRACE_RANK"]) for r in created)
print("J1 directories:", [(r["_HOSTNAME"], r["ATRACE_RANK"], r["ATRACE_PATH"]) for r in created])
assert hosts == ["host0", "host1", "host2"], hosts
assert ranks == [0, 1, 2, 3, 4, 5], ranks
assert all(r["ATRACE_JOB"] == "J1" and r["ATRACE_WORLD_SIZE"] == "6" for r in created)
PY
[[ "$(journalctl -D "$scratch/agg" ATRACE_JOB=J2 -o json | grep -c '"ATRACE_EVENT":"created"')" == 3 ]] ||
  { echo "FAIL: J2's directories (one per host) are not all on the collector"; exit 1; }
echo "PASS: journalctl -D … ATRACE_JOB=J1 lists the job's directories on host0, host1 and host2"
