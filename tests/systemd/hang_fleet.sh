#!/usr/bin/env bash
# A real hang reports itself (issue 51), end to end on one machine: three hosts and a collector
# in network namespaces (fleet_netns.sh). Each host (hang_fleet_host.sh, with its own hostname
# and /run) runs a real systemd-journald, systemd-journal-upload --follow to the collector's
# systemd-journal-remote --split-mode=host, atraced --hang-timeout 5s with its stderr a journal
# stream, and its ranks of job J1: eight CANN-API ranks (hang_child.c) over the three hosts,
# 0-2 on host0, 3-5 on host1, 6-7 on host2. Every rank deadlocks; rank 5's main thread waits in
# join_elsewhere(), the others' in main(). Then, with no command typed:
#   - every host's daemon dumps each of its ranks (list --json: how "hang") soon after they
#     stopped recording: the time from "every rank ready" to the last rank's dump directory
#     (the daemon's created time) is printed per host; the issue's bound, hang-timeout + 10 s,
#     is said when passed (a busy machine), and CAPTURE_BOUND_S (60) fails the test;
#   - the daemons' hang entries reach the collector through journald, journal-upload and
#     journal-remote, with journald's trusted fields, and `atracectl hang --journal` there
#     names rank 5, with its host and pid, as the culprit;
#   - `atracectl hang` over the bundles `export --job J1` wrote on each host (run in the host's
#     UTS namespace, so that each bundle names its host) names the same culprit: the --json
#     `culprits` of both forms are compared.
# Skipped (exit 77) where namespaces cannot be made or the tools are missing.
# usage: hang_fleet.sh ATRACED ATRACECTL HANG_CHILD
set -euo pipefail
atraced="$1"
atracectl="$2"
hang_child="$3"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=fleet_netns.sh
source "$here/fleet_netns.sh"
fleet_require
[[ -x /lib/systemd/systemd-journald ]] && command -v systemd-cat >/dev/null && command -v journalctl >/dev/null ||
  skip "needs systemd-journald, systemd-cat and journalctl (apt-get install systemd)"
command -v nsenter >/dev/null || skip "needs nsenter (util-linux)"
# systemd-journald stops at start without a cgroup hierarchy (a chroot that mounted no /sys).
awk '$5 ~ "^/sys/fs/cgroup" { found = 1 } END { exit !found }' /proc/self/mountinfo ||
  skip "needs a cgroup hierarchy mounted at /sys/fs/cgroup (systemd-journald stops without one)"
unshare --uts -m true 2>/dev/null || skip "cannot make UTS namespaces here"

hang_timeout_s=5
# The issue's bound, hang-timeout + 10 s, holds on an idle machine; an ASan tree on two busy
# cores can take longer, so the test fails only past this one (and says when it was over 15 s).
target_s=$((hang_timeout_s + 10))
capture_bound_s="${CAPTURE_BOUND_S:-60}"
tag="atrh$$"
scratch="$(mktemp -d /tmp/atraced-hang-fleet.XXXXXX)"
trap fleet_cleanup EXIT
fleet_make_namespaces
fleet_start_collector

# Where each host stops: the host scripts kill their journald, daemon and ranks on exit.
stop_hosts() {
  for h in 0 1 2; do touch "$scratch/h$h/stop" 2>/dev/null || true; done
  for p in "${host_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
fail() {
  echo "FAIL: $*"
  stop_hosts
  for h in 0 1 2; do
    echo "== host$h: its script"; cat "$scratch/h$h/host.log" 2>/dev/null || true
    echo "== host$h: journal"; tail -n 40 "$scratch/h$h/journal.txt" 2>/dev/null || true
    echo "== host$h: journal-upload"; cat "$scratch/h$h/upload.log" 2>/dev/null || true
  done
  echo "== collector"; cat "$scratch/collector.log"
  exit 1
}

rank_specs=("0 1 2" "3 4 5:1" "6 7")
host_pids=()
for h in 0 1 2; do
  mkdir -p "$scratch/h$h"
  # shellcheck disable=SC2086 # the rank list is words
  # nsenter, not `ip netns exec`: that mounts a sysfs of the namespace's own, without
  # /sys/fs/cgroup, and journald stops at start without its cgroup root.
  nsenter --net="/run/netns/${tag}h$h" unshare --uts -m --propagation private bash "$here/hang_fleet_host.sh" \
    "$scratch/h$h" "host$h" "$atraced" "$atracectl" "$hang_child" "${hang_timeout_s}s" "http://10.213.$h.1:19532" \
    ${rank_specs[$h]} >"$scratch/h$h/host.log" 2>&1 &
  host_pids+=($!)
  pids+=($!)
done
for h in 0 1 2; do
  for _ in $(seq 1200); do
    [[ -s "$scratch/h$h/ready_at" ]] && break
    kill -0 "${host_pids[$h]}" 2>/dev/null || fail "host$h stopped: $(cat "$scratch/h$h/host.log")"
    sleep 0.1
  done
  [[ -s "$scratch/h$h/ready_at" ]] || fail "host$h's ranks were not ready in 120 s"
done
echo "ranks (rank pid):"
cat "$scratch"/h*/ranks

# 1. Every host dumps each of its ranks by itself. The time of a host's capture is the
#    daemon's own: when it made the last of its ranks' dump directories (list's created
#    time), after the ranks were ready. Polled for up to POLL_S: on two busy cores one poll
#    (atracectl and python under ASan) can take seconds, so the poll's own time is no measure.
poll_s=180
dumped() {  # HOST: prints the seconds from ready to the last rank's hang dump, once all are there
  local d="$scratch/h$1"
  "$atracectl" --socket "$d/s.sock" list --json >"$d/list.json" 2>"$d/list.err" || return 1
  python3 - "$d/list.json" "$d/ranks" "$d/ready_at" <<'PY'
import json, sys
entries = json.load(open(sys.argv[1]))["entries"]
pids = {int(line.split()[1]) for line in open(sys.argv[2]) if line.strip()}
ready = float(open(sys.argv[3]).read())
dumps = {e["pid"]: e["created_unix_us"] / 1e6 for e in entries if e["how"] == "hang" and e["pid"] in pids}
if set(dumps) != pids:
    sys.exit(1)
print(f"{max(dumps.values()) - ready:.1f}")
PY
}
declare -A captured=()
deadline=$((SECONDS + poll_s))
while ((SECONDS < deadline)) && [[ "${#captured[@]}" != 3 ]]; do
  for h in 0 1 2; do
    [[ -n "${captured[$h]:-}" ]] && continue
    if took="$(dumped "$h")"; then captured[$h]="$took"; fi
  done
  sleep 0.5
done
for h in 0 1 2; do
  [[ -n "${captured[$h]:-}" ]] || fail "host$h did not dump each of its ranks in ${poll_s} s: $(cat "$scratch/h$h/list.json")"
  python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))' "${captured[$h]}" "$capture_bound_s" ||
    fail "host$h dumped its ranks ${captured[$h]} s after they were ready, past ${capture_bound_s} s"
  over=""
  python3 -c 'import sys; sys.exit(float(sys.argv[1]) <= float(sys.argv[2]))' "${captured[$h]}" "$target_s" &&
    over=" (over the ${target_s} s target: a busy machine)"
  echo "host$h: every rank dumped ${captured[$h]} s after they were ready (hang-timeout ${hang_timeout_s} s)$over"
done

# 2. The collector: hang --journal names rank 5, on host1, with its pid, from the entries
#    journal-upload sent by itself. Polled: the upload follows the journal.
rank5_pid="$(awk '$1 == 5 {print $2}' "$scratch/h1/ranks")"
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  if "$atracectl" hang --journal "$scratch/agg" --job J1 --json >"$scratch/journal.json" 2>"$scratch/journal.err" &&
    grep -q '"missing_count":0' "$scratch/journal.json"; then
    break
  fi
  sleep 0.2
done
"$atracectl" hang --journal "$scratch/agg" --job J1 >"$scratch/journal.txt" 2>&1 ||
  fail "hang --journal: $(cat "$scratch/journal.txt")"
cat "$scratch/journal.txt"
grep -q "^Culprit: job J1, rank 5, host host1, pid $rank5_pid " "$scratch/journal.txt" ||
  fail "hang --journal does not name rank 5 on host1 (pid $rank5_pid) as the culprit"

# What hang --journal trusted is what journald itself wrote: one hang entry per rank, from
# root's atraced, named by the host that holds the rank.
journalctl -D "$scratch/agg" ATRACE_EVENT=hang -o json >"$scratch/hang-entries.json"
python3 - "$scratch/hang-entries.json" "${rank_specs[@]}" <<'PY' || fail "the collector's hang entries are not journald's"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
host_of = {int(spec.split(":")[0]): f"host{h}" for h, specs in enumerate(sys.argv[2:]) for spec in specs.split()}
got = sorted((int(r["ATRACE_RANK"]), r["_HOSTNAME"], r["_UID"], r["_COMM"]) for r in rows)
print("hang entries on the collector (rank, _HOSTNAME, _UID, _COMM):", got)
assert got == [(rank, host, "0", "atraced") for rank, host in sorted(host_of.items())], got
PY
grep -q '"forged_entries":0' "$scratch/journal.json" || fail "hang --journal counted forged entries: $(cat "$scratch/journal.json")"

# 3. The bundles: export on each host (in its UTS namespace: the bundle names its host), and
#    hang over the three names the same culprit.
bundles=()
for h in 0 1 2; do
  bundles+=("$scratch/host$h.tar.gz")
  nsenter --target "${host_pids[$h]}" --uts "$atracectl" --socket "$scratch/h$h/s.sock" \
    export --format tar --job J1 -o "$scratch/host$h.tar.gz" >"$scratch/export$h.log" 2>&1 ||
    fail "export on host$h: $(cat "$scratch/export$h.log")"
done
"$atracectl" hang "${bundles[@]}" >"$scratch/bundles.txt" 2>&1 || fail "hang over the bundles: $(cat "$scratch/bundles.txt")"
"$atracectl" hang --json "${bundles[@]}" >"$scratch/bundles.json" 2>"$scratch/bundles.err" ||
  fail "hang --json over the bundles: $(cat "$scratch/bundles.err")"
grep "Culprit" "$scratch/bundles.txt" || true
python3 - "$scratch/journal.json" "$scratch/bundles.json" "$rank5_pid" <<'PY' || fail "the two forms disagree"
import json, sys
journal, bundles = (json.load(open(p)) for p in sys.argv[1:3])
journal = journal[0] if isinstance(journal, list) else journal
bundles = bundles[0] if isinstance(bundles, list) else bundles
keys = ("job", "rank", "host", "pid", "function", "source", "parts_from")
def culprits(report):
    return [{k: c.get(k) for k in keys} for c in report["culprits"]]
j, b = culprits(journal), culprits(bundles)
print("hang --journal culprits:", j)
print("hang (bundles) culprits:", b)
assert len(j) == 1 and j[0]["job"] == "J1" and j[0]["rank"] == 5, j
assert j[0]["host"] == "host1" and j[0]["pid"] == int(sys.argv[3]), j
assert j == b, "the journal and the bundles name different culprits"
PY
stop_hosts
echo "PASS: rank 5 (host1, pid $rank5_pid) named from the journal and from the bundles, dumps by the daemons alone"
