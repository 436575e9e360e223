#!/usr/bin/env bash
# docs/FLEET.md's runbook on one host, at the size it claims, as an operator types it:
# RANKS ranks of one job (default 16), each with THREADS idle threads more (default 200), on
# a daemon with the default record number. Rank 5 (or the last, with fewer ranks) waits in
# another function than the others. Then, with nobody typing:
#   1. the hang watch must dump every rank (ATRACE_EVENT=hang's directories, HOW `hang`);
# then as the runbook says:
#   2. `atracectl dump --job J` takes one more dump of each rank, and
#      `atracectl export --format tar --job J` writes the bundle;
#   3. `atracectl hang BUNDLE` must hold every rank (none missing, none aged) and name the
#      odd rank as the culprit;
#   4. `atracectl merge BUNDLE` draws every dump with the stack-dump mark.
# Every dump made must still be on disk at the end: the record number (10) is smaller than
# the dumps a job of 16 ranks makes, and dump-keep must spare them.
#
# Usage: scripts/fleet_runbook.sh BUILD_TREE [RANKS [THREADS]]   (a scratch root and socket
# under a fresh directory, removed at the end unless KEEP=1; the test fleet.runbook_at_scale
# runs it with the defaults)
set -euo pipefail
tree=$(cd "${1:?usage: scripts/fleet_runbook.sh BUILD_TREE [RANKS [THREADS]]}" && pwd)
ranks=${2:-16}
threads=${3:-200}
odd=$((ranks > 5 ? 5 : ranks - 1))
job=runbook$$
atraced=$tree/daemon/atraced
atracectl=$tree/client/atracectl
child=$tree/tests/ascend_trace/ascend_trace_hang_child
for p in "$atraced" "$atracectl" "$child"; do [[ -x $p ]] || { echo "missing $p: build the tree first" >&2; exit 2; }; done

work=$(mktemp -d /tmp/atraced-runbook.XXXXXX)
chmod 0755 "$work"
socket=$work/atraced.sock
pids=()
cleanup() {
  ((${#pids[@]})) && kill -9 "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  [[ ${KEEP:-0} == 1 ]] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
t0=$(date +%s%N)
step() { local ms=$((($(date +%s%N) - t0) / 1000000)); printf '== %4d.%d s  %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"; }
ctl() { "$atracectl" --socket "$socket" "$@"; }

"$atraced" --root "$work/root" --socket "$socket" --hang-timeout 10s --log-level notice \
  >"$work/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S $socket ]] && break; sleep 0.1; done
[[ -S $socket ]] || fail "the daemon did not start: $(cat "$work/daemon.log")"
step "daemon up (record-num default, hang-timeout 10s, dump-keep default)"

for ((r = 0; r < ranks; r++)); do
  extra=()
  ((r == odd)) && extra=(HANG_MAIN_ELSEWHERE=1)
  env ATRACED_SOCKET="$socket" ATRACE_JOB="$job" RANK_ID=$r RANK_SIZE="$ranks" "${extra[@]}" \
    "$child" 100 2 "$threads" idle >"$work/rank$r.out" 2>&1 &
  pids+=($!)
done
for ((r = 0; r < ranks; r++)); do
  for _ in $(seq 600); do grep -q '^ready' "$work/rank$r.out" && break; sleep 0.1; done
  grep -q '^ready' "$work/rank$r.out" || fail "rank $r never got ready: $(cat "$work/rank$r.out")"
done
step "$ranks ranks of job $job hung, $((threads + 3)) threads each; rank $odd elsewhere"

# 1. Nobody types: the watch dumps every rank.
hang_dirs=0
for _ in $(seq 1200); do
  hang_dirs=$(ctl list --job "$job" --json | { grep -o '"how":"hang"' || true; } | wc -l)
  ((hang_dirs >= ranks)) && break
  sleep 0.1
done
((hang_dirs >= ranks)) || fail "the hang watch dumped $hang_dirs of $ranks ranks in 120 s"
step "the hang watch dumped all $hang_dirs ranks"

# 2. The runbook's step 2.
ctl dump --job "$job" >"$work/dump.out" 2>&1 || fail "dump --job: $(cat "$work/dump.out")"
step "dump --job: $(tail -n 1 "$work/dump.out")"
# Every dump made is still there before the export: the record number (10) is smaller than the
# dumps a job of 16 ranks makes, and dump-keep spares them until exported.
dumps=$(ctl list --job "$job" --json | { grep -oE '"how":"(hang|dump)"' || true; } | wc -l)
((dumps == 2 * ranks)) || fail "$dumps dump directories left of $((2 * ranks)) made, before the export"
step "all $dumps dump directories kept (record-num 10)"
ctl export --format tar --job "$job" -o "$work/bundle.tar.gz" >"$work/export.out" 2>&1 ||
  fail "export: $(cat "$work/export.out")"
step "export: $(grep -o 'wrote .*' "$work/export.out") ($(stat -c %s "$work/bundle.tar.gz") bytes)"
in_bundle=$(tar -xzOf "$work/bundle.tar.gz" bundle.jsonl | { grep -c '"record":"dir"' || true; })
((in_bundle == 2 * ranks)) || fail "the bundle holds $in_bundle directories of $((2 * ranks)) dumps"
# Exported, they are released to record-num's aging.
left=$(ctl list --job "$job" --json | { grep -oE '"how":"(hang|dump)"' || true; } | wc -l)
step "the bundle holds all $in_bundle; exported, they age as any other: $left left on disk"
ctl status | sed 's/^/   status: /'

# 3. The culprit.
ctl hang "$work/bundle.tar.gz" >"$work/hang.txt" 2>&1 || fail "hang: $(cat "$work/hang.txt")"
step "hang over the bundle:"
sed 's/^/   /' "$work/hang.txt" | head -n 40
grep -qE '^Missing ranks|^Aged ranks|^Ranks without stacks' "$work/hang.txt" && fail "hang calls ranks missing, aged or without stacks"
grep -q "^Ranks seen: 0-$((ranks - 1)) of $ranks (world size)" "$work/hang.txt" || fail "hang does not see every rank"
grep -qE "^Culprit: .*rank $odd\b" "$work/hang.txt" || fail "hang does not name rank $odd as the culprit"
# 4. One timeline: every dump drawn with the stack-dump mark, the watch's and the operator's apart.
ctl merge "$work/bundle.tar.gz" --format chrome-json -o "$work/job.json" >"$work/merge.out" 2>&1 ||
  fail "merge: $(cat "$work/merge.out")"
hang_marks=$({ grep -o '"name":"hang dump"' "$work/job.json" || true; } | wc -l)
dump_marks=$({ grep -o '"name":"stack dump"' "$work/job.json" || true; } | wc -l)
((hang_marks == ranks && dump_marks == ranks)) ||
  fail "merge drew $hang_marks hang dumps and $dump_marks stack dumps, $ranks of each made"
step "merge: $hang_marks hang dumps and $dump_marks stack dumps drawn"
step "PASS: $ranks ranks, $dumps dumps kept, culprit rank $odd"
