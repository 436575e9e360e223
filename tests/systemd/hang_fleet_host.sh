#!/usr/bin/env bash
# One host of hang_fleet.sh, run by it as
#   nsenter --net=/run/netns/NS unshare --uts -m --propagation private bash hang_fleet_host.sh ...
# so that its hostname, network and /run are its own. It runs what a host runs, as services
# would, and then waits for DIR/stop:
#   - a real systemd-journald (not under PID 1: it binds its own sockets in /run/systemd/journal,
#     a tmpfs here, and keeps a volatile journal in /run/log/journal, a tmpfs too);
#   - systemd-journal-upload --follow, sending this journal to the collector as it grows;
#   - atraced with --hang-timeout, its stderr a journal stream (systemd-cat) named by
#     JOURNAL_STREAM, so that its entries go to journald (which adds _UID, _COMM, _HOSTNAME);
#   - the ranks: hang_child (every signal blocked, two threads deadlocked) labelled
#     ATRACE_JOB=J1 RANK_ID=R RANK_SIZE=8; a rank given as R:1 waits in join_elsewhere().
# It writes DIR/ranks ("RANK PID" lines) and DIR/ready_at (the time, in seconds since the
# epoch, when every rank printed "ready"); on exit DIR/journal.txt (this host's journal) and
# DIR/ranks.err (the ranks' stderr).
# usage: hang_fleet_host.sh DIR HOSTNAME ATRACED ATRACECTL HANG_CHILD HANG_TIMEOUT URL RANK[:1]...
set -euo pipefail
d="$1" host="$2" atraced="$3" atracectl="$4" hang_child="$5" hang_timeout="$6" url="$7"
shift 7
upload=/lib/systemd/systemd-journal-upload
kids=()
ranks=()

finish() {
  journalctl -D /run/log/journal -o short-precise >"$d/journal.txt" 2>&1 || true
  for k in "${kids[@]}" "${ranks[@]}"; do kill -KILL "$k" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap finish EXIT
trap 'exit 1' TERM INT

hostname "$host"
# A machine where systemd does not run (a container) may have no /run/systemd: /run then.
if [[ -d /run/systemd ]]; then mount -t tmpfs tmpfs /run/systemd; else mount -t tmpfs tmpfs /run; mkdir -p /run/systemd; fi
mkdir -p /run/log
mount -t tmpfs tmpfs /run/log
mkdir -p /run/systemd/journal /run/systemd/journald.conf.d
# Volatile (/run/log/journal), no rate limit (one entry per rank comes in one burst), nothing
# forwarded. systemd 252's journald has no ReadKMSG= key: /dev/kmsg is /dev/null here, or the
# machine's kernel log would fill every host's journal.
cat >/run/systemd/journald.conf.d/hang-fleet.conf <<'EOF'
[Journal]
Storage=volatile
RateLimitIntervalSec=0
ForwardToSyslog=no
ForwardToWall=no
ForwardToConsole=no
EOF
mount --bind /dev/null /dev/kmsg
/lib/systemd/systemd-journald >"$d/journald.log" 2>&1 &
kids+=($!)
# Ready once its stream socket takes a connection (the socket file exists before listen()).
for _ in $(seq 600); do
  echo "$host: journald is up" | systemd-cat -t hang-fleet 2>/dev/null && break
  sleep 0.1
done
echo "$host: journald is up" | systemd-cat -t hang-fleet || { echo "$host: journald does not take streams" >&2; exit 1; }

echo "$(date +%T.%N) $host: journald up" >&2
"$upload" --url="$url" --save-state="$d/upload.state" >"$d/upload.log" 2>&1 &
kids+=($!)

# systemd-cat connects stdout and stderr to journald's stream socket; JOURNAL_STREAM names it
# as systemd does for a service (systemd-cat does not set it).
systemd-cat -t atraced bash -c 'JOURNAL_STREAM="$(stat -L -c %d:%i /proc/self/fd/2)" exec "$@"' _ \
  "$atraced" --root "$d/root" --socket "$d/s.sock" --hang-timeout "$hang_timeout" &
kids+=($!)
for _ in $(seq 600); do
  "$atracectl" --socket "$d/s.sock" status >/dev/null 2>&1 && break
  sleep 0.1
done

echo "$(date +%T.%N) $host: atraced up" >&2
for spec in "$@"; do
  rank="${spec%%:*}"
  if [[ "$spec" == *:1 ]]; then
    HANG_MAIN_ELSEWHERE=1 ATRACED_SOCKET="$d/s.sock" ATRACE_QUIET=1 ATRACE_JOB=J1 RANK_ID="$rank" RANK_SIZE=8 \
      "$hang_child" 20 1 >"$d/rank$rank.out" 2>>"$d/ranks.err" &
  else
    ATRACED_SOCKET="$d/s.sock" ATRACE_QUIET=1 ATRACE_JOB=J1 RANK_ID="$rank" RANK_SIZE=8 \
      "$hang_child" 20 1 >"$d/rank$rank.out" 2>>"$d/ranks.err" &
  fi
  ranks+=($!)
  echo "$rank $!" >>"$d/ranks"
done
for spec in "$@"; do
  rank="${spec%%:*}"
  for _ in $(seq 1200); do
    grep -q '^ready ' "$d/rank$rank.out" 2>/dev/null && break
    sleep 0.05
  done
  grep -q '^ready ' "$d/rank$rank.out" || { echo "$host: rank $rank never got ready" >&2; exit 1; }
done
date +%s.%N >"$d/ready_at"
echo "$(date +%T.%N) $host: ranks ready" >&2

while [[ ! -e "$d/stop" ]]; do sleep 0.2; done
