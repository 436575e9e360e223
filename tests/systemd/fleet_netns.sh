# Sourced by the fleet scripts (journal_remote_fleet.sh, hang_fleet.sh): three "hosts" and a
# collector, each in its own network namespace, joined by veth pairs so that host H reaches
# the collector at 10.213.H.1 from its own address 10.213.H.2; systemd-journal-remote
# --split-mode=host listens on the collector (port 19532) and writes to $scratch/agg.
# The sourcing script sets `tag` (a prefix unique to the run) and `scratch` (a directory it
# owns) first; `namespaces` and `pids` are cleaned up by fleet_cleanup, which it traps on EXIT.
remote=/lib/systemd/systemd-journal-remote
upload=/lib/systemd/systemd-journal-upload
namespaces=()
pids=()

skip() { echo "skipped: $*"; exit 77; }

# Skips (exit 77) where the fleet cannot run: not root, no namespaces, no journal-remote.
fleet_require() {
  [[ "$(id -u)" == 0 ]] || skip "needs root (network and mount namespaces)"
  [[ -x "$remote" && -x "$upload" ]] || skip "systemd-journal-remote is not installed (apt-get install systemd-journal-remote)"
  command -v python3 >/dev/null || skip "needs python3"
  command -v ip >/dev/null || skip "needs ip (iproute2)"
  unshare -n -m true 2>/dev/null || skip "cannot make network and mount namespaces here"
}

# Kills what the script started (the pids it recorded), deletes the namespaces and $scratch.
fleet_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in "${namespaces[@]}"; do ip netns delete "$n" 2>/dev/null || true; done
  rm -rf "$scratch"
}

# Waits up to 60 s for a file to exist.
wait_for() {
  for _ in $(seq 600); do
    [[ -e "$1" ]] && return 0
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2
  return 1
}

# The namespaces: ${tag}c (the collector) and ${tag}h0..h2 (the hosts), with their links.
fleet_make_namespaces() {
  local collector="${tag}c" h ns
  ip netns add "$collector" || skip "ip netns add failed"
  namespaces+=("$collector")
  ip -n "$collector" link set lo up
  for h in 0 1 2; do
    ns="${tag}h$h"
    ip netns add "$ns"
    namespaces+=("$ns")
    ip -n "$ns" link set lo up
    ip link add "${tag}v$h" type veth peer name "${tag}p$h"
    ip link set "${tag}v$h" netns "$collector"
    ip link set "${tag}p$h" netns "$ns"
    ip -n "$collector" addr add "10.213.$h.1/24" dev "${tag}v$h"
    ip -n "$collector" link set "${tag}v$h" up
    ip -n "$ns" addr add "10.213.$h.2/24" dev "${tag}p$h"
    ip -n "$ns" link set "${tag}p$h" up
  done
}

# systemd-journal-remote on the collector: one journal file per host in $scratch/agg.
fleet_start_collector() {
  mkdir -p "$scratch/agg"
  ip netns exec "${tag}c" "$remote" --listen-http=0.0.0.0:19532 --split-mode=host --output="$scratch/agg/" \
    >"$scratch/collector.log" 2>&1 &
  pids+=($!)
}
