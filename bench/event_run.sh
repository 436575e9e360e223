# shellcheck shell=bash
# Sourced by bench/syscalls.sh and bench/allocs.sh: what both do to a daemon they started
# on DIR/root with its socket at DIR/s.sock (record num 10), around the counted events.
#   drive_events LOOP DIR N [MODE]
# Waits for the socket, sends 20 warm-up events then N more (LOOP is atraced_emit_loop; MODE
# its daemon or daemon-fd, default daemon), then
# waits until the remover has finished: at most 10 event directories left (30 s at most). A
# fixed pause was too short under strace on a loaded machine: about a quarter of the deletes
# of a 2000-event run were still queued at SIGTERM and went uncounted.
drive_events() {
  local loop="$1" dir="$2" count="$3" mode="${4:-daemon}"
  for _ in $(seq 200); do [[ -S "$dir/s.sock" ]] && break; sleep 0.05; done
  "$loop" "$mode" "$dir/s.sock" 20
  "$loop" "$mode" "$dir/s.sock" "$count"
  for _ in $(seq 300); do
    (( $(find "$dir/root/atrace" -mindepth 2 -maxdepth 2 -type d 2>/dev/null | wc -l) <= 10 )) && break
    sleep 0.1
  done
}
