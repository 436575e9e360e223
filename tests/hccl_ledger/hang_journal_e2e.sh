#!/usr/bin/env bash
# `hang --journal` says what the bundle form says, from the journal alone (issue 52): eight
# ranks of job J1 over the libhccl double with LD_PRELOAD=libatrace_hccl.so, rank 5 skipping
# the last AllReduce, against the real atraced with a short hang-timeout. Its journal is
# journald's socket served by fake_journald.py in a private mount namespace (the sender's
# credentials become _UID and _COMM, as journald makes them), turned into a journal file by
# systemd-journal-remote. The hang watch judges the job stalled by itself and writes a hang
# entry per rank carrying its communicators' last sequence numbers (ATRACE_COLL_<n>);
# `hang --journal` then names rank 5 behind at #3 and the others at #4, as `hang` over bundles
# does (tests/hccl_ledger/hang_collectives_test.cc). A root process that is not atraced writes
# a forged entry with rank 5 at #99 into the same journal: ignored and counted.
# Skipped (exit 77) where a mount namespace cannot be made or the tools are missing.
# usage: hang_journal_e2e.sh ATRACED ATRACECTL LIBATRACE_HCCL HCCL_RANK FAKE_JOURNALD
set -euo pipefail
atraced="$1" atracectl="$2" interposer="$3" rank_program="$4" fake_journald="$5"
remote=/lib/systemd/systemd-journal-remote

skip() { echo "skipped: $*"; exit 77; }
[[ "$(id -u)" == 0 ]] || skip "needs root (a mount namespace for journald's socket)"
[[ -x "$remote" ]] || skip "systemd-journal-remote is not installed (apt-get install systemd-journal-remote)"
command -v python3 >/dev/null || skip "needs python3"
unshare -m --propagation private true 2>/dev/null || skip "cannot make a mount namespace here"

d="$(mktemp -d /tmp/atraced-hang-journal.XXXXXX)"
trap 'touch "$d/stop"; sleep 0.5; rm -rf "$d"' EXIT
mkdir -p "$d/meeting" "$d/journal"

# In the namespace: journald's stand-in, atraced with its stderr as the journal stream, the
# ranks; until every rank's hang entry is in, then the forged one.
unshare -m --propagation private bash -c '
  set -euo pipefail
  d="$1"; atraced="$2"; atracectl="$3"; interposer="$4"; rank_program="$5"; fake_journald="$6"
  if [[ -d /run/systemd ]]; then mount -t tmpfs tmpfs /run/systemd; else mount -t tmpfs tmpfs /run; mkdir -p /run/systemd; fi
  mkdir -p /run/systemd/journal
  python3 "$fake_journald" /run/systemd/journal/socket "$d/entries.export" host0 "$d/stop" "$d/ready" &
  journald=$!
  for _ in $(seq 600); do [[ -e "$d/ready" ]] && break; sleep 0.1; done
  exec 3>"$d/atraced.log"
  stream="$(stat -c "%d:%i" "$d/atraced.log")"
  JOURNAL_STREAM="$stream" "$atraced" --root "$d/root" --socket "$d/s.sock" --hang-timeout 2s 2>&3 &
  daemon=$!
  for _ in $(seq 600); do "$atracectl" --socket "$d/s.sock" status >/dev/null 2>&1 && break; sleep 0.1; done
  ranks=()
  for r in 0 1 2 3 4 5 6 7; do
    calls=4
    [[ $r == 5 ]] && calls=3
    LD_PRELOAD="$interposer" ATRACED_SOCKET="$d/s.sock" ATRACE_HCCL_DOUBLE_DIR="$d/meeting" ATRACE_QUIET=1 \
      ATRACE_JOB=J1 RANK_ID=$r RANK_SIZE=8 "$rank_program" $r 8 $calls hold >"$d/rank$r.out" &
    ranks+=($!)
  done
  # The watch needs no command: every rank stops moving, and the job is dumped (up to 180 s
  # on a busy machine).
  for _ in $(seq 1800); do
    [[ "$(grep -c "^ATRACE_EVENT=hang$" "$d/entries.export" 2>/dev/null)" -ge 8 ]] && break
    sleep 0.1
  done
  # A root process that is not atraced says rank 5 is at #99: journald marks it _COMM=python3.
  python3 - <<PY
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"MESSAGE=forged\nATRACE_EVENT=hang\nATRACE_JOB=J1\nATRACE_RANK=5\nATRACE_WORLD_SIZE=8\nATRACE_PID=4242\n"
         b"_SYSTEMD_UNIT=atraced.service\n"
         b"ATRACE_COLL_0=rank=5 size=8 seq=99 op=1 count=1 dtype=3 reduce=0 peer=- completed=- tracked=0 cut=0 name=hccl_world_group\n",
         "/run/systemd/journal/socket")
PY
  for _ in $(seq 100); do grep -q "^MESSAGE=forged$" "$d/entries.export" && break; sleep 0.1; done
  kill -KILL "${ranks[@]}" 2>/dev/null || true
  wait "${ranks[@]}" 2>/dev/null || true
  kill -TERM "$daemon"; wait "$daemon" || true
  touch "$d/stop"; wait "$journald"
' _ "$d" "$atraced" "$atracectl" "$interposer" "$rank_program" "$fake_journald"

hangs="$(grep -c "^ATRACE_EVENT=hang$" "$d/entries.export" || true)"
if [[ "$hangs" -lt 9 ]]; then
  echo "FAIL: $hangs hang entries (8 of atraced's and the forged one expected)"
  cat "$d/atraced.log"
  exit 1
fi
"$remote" -o "$d/journal/host0.journal" - <"$d/entries.export"

fail=0
expect() {  # expect WHAT TEXT NEEDLE
  if ! grep -qF -- "$3" <<<"$2"; then
    echo "FAIL: $1: no line with: $3"
    fail=1
  fi
}
reject() {
  if grep -qF -- "$3" <<<"$2"; then
    echo "FAIL: $1: has: $3"
    fail=1
  fi
}
text="$("$atracectl" hang --journal "$d/journal")"
echo "$text"
expect text "$text" "Job J1: hang entries of 8 process(es) on 1 host(s), from the journal"
expect text "$text" "Behind: rank 5 in comm hccl_world_group (last entered #3, where ranks 0-4,6-7 entered #4)"
expect text "$text" "    rank 5 (1): last entered #3 AllReduce (3 Ki fp16, sum)"
expect text "$text" "    ranks 0-4,6-7 (7): last entered #4 AllReduce (4 Ki fp16, sum)"
expect text "$text" "1 entries claiming ATRACE_EVENT=hang, start or aged were not written by atraced"
reject text "$text" "#99"
reject text "$text" "Without a ledger"
reject text "$text" "mismatch at"

json="$("$atracectl" hang --journal "$d/journal" --job J1 --json)"
echo "$json"
expect json "$json" '"communicators":[{"name":"hccl_world_group","name_cut":false,"size":8,'
expect json "$json" '"classes":[{"ranks":[5],"ranges":"5","last_enqueued":3,"last_completed":null,"op":"AllReduce","count":3072,"dtype":"fp16","reduce":"sum","root":null,'
expect json "$json" '{"ranks":[0,1,2,3,4,6,7],"ranges":"0-4,6-7","last_enqueued":4,"last_completed":null,"op":"AllReduce","count":4096,'
expect json "$json" '"collective_culprits":[5],"ranks_without_ledger":[]'
expect json "$json" '"forged_entries":1'
[[ $fail == 0 ]] || { cat "$d/atraced.log"; exit 1; }
echo "PASS: hang --journal names rank 5 behind at #3 in hccl_world_group, the others at #4, the forged entry ignored"
