#!/usr/bin/env bash
# The README's two commands on a Debian 12 machine that has nothing installed by earlier work:
#   sudo bash scripts/fresh_debian_check.sh DIR [RUNS] [REV]
#   sudo bash scripts/fresh_debian_check.sh --first-command DIR [REV]
# Each makes DIR/root a minimal Debian 12 tree with debootstrap (once; from the mirror in
# $DEBIAN_MIRROR, default deb.debian.org), copies REV (default HEAD) into it, and works inside
# a private mount namespace rooted there (pivot_root, its own /proc, the host's /sys and /dev),
# with a bare environment and no stdin.
# The test command:
#   1. runs `bash scripts/dev.sh deps` in an exported copy of REV (installs git, compilers, ...);
#   2. RUNS times (default 3): clones REV into a new directory under a 0700 parent
#      (/root/p700, as `mktemp -d` makes and as many home directories are) and runs
#      `CI=true bash .ci/run` there. Stops at the first failing run. Each run's log is
#      DIR/root/root/p700/run-N.log; a line a run ("run N: rc R, S s") goes to stdout.
# --first-command (give it a DIR of its own: the test command's tree already holds the test
# packages): runs `bash scripts/dev.sh run` in an exported copy under /root/p700, waits for
# its daemon's socket, asks `atracectl status`, runs the README's "Your first trace" blocks as
# written (tests/readme/run_first_trace.sh, with its checks), and stops the daemon; in a PID namespace, so nothing it started outlives it. The
# log is DIR/root/root/p700/first.log.
# The host's packages never reach the tree, so a tool that no declared package installs fails.
set -euo pipefail

usage() {
  sed -n '2,20p' "$0" >&2
  exit 2
}
mode=test
if [[ "${1:-}" == --first-command ]]; then
  mode=first
  shift
fi
(($# >= 1)) || usage
dir="$(realpath -m "$1")"
shift
runs=1
if [[ "$mode" == test ]]; then
  runs="${1:-3}"
  (($#)) && shift
fi
rev="${1:-HEAD}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tree="$dir/root"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if [[ "$(id -u)" != 0 ]]; then
  echo "fresh_debian_check: needs root (debootstrap, mount namespaces)" >&2
  exit 2
fi
for tool in debootstrap unshare git; do
  command -v "$tool" >/dev/null || { echo "fresh_debian_check: $tool not found (apt-get install debootstrap util-linux git)" >&2; exit 2; }
done
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "fresh_debian_check: RUNS must be a positive count, got '$runs'" >&2
  exit 2
fi
commit="$(git -C "$here" rev-parse --verify "$rev^{commit}")"

if [[ ! -x "$tree/bin/bash" ]]; then
  mkdir -p "$dir"
  debootstrap --variant=minbase bookworm "$tree" "$mirror"
  echo "deb $mirror bookworm-updates main" >>"$tree/etc/apt/sources.list"
fi

# The revision, as a bare repository the runs clone and as an exported tree.
rm -rf "$tree/root/src.git" "$tree/root/p700"
git clone -q --bare "$here" "$tree/root/src.git"
git -C "$tree/root/src.git" update-ref refs/heads/check "$commit"
install -d -m 0700 "$tree/root/p700"
mkdir -p "$tree/root/p700/atraced"
git -C "$here" archive "$commit" | tar -x -C "$tree/root/p700/atraced"
cp /etc/resolv.conf "$tree/etc/resolv.conf"

if [[ "$mode" == test ]]; then
  cat >"$tree/root/p700/inside.sh" <<EOF
set -euo pipefail
cd /root/p700/atraced
bash scripts/dev.sh deps > /root/p700/deps.log 2>&1 || { echo "deps failed: /root/p700/deps.log"; exit 1; }
for n in \$(seq 1 $runs); do
  clone="\$(mktemp -d -p /root/p700)"
  git clone -q -b check /root/src.git "\$clone/atraced"
  start=\$(date +%s)
  rc=0
  (cd "\$clone/atraced" && CI=true bash .ci/run) </dev/null > /root/p700/run-\$n.log 2>&1 || rc=\$?
  echo "run \$n: rc \$rc, \$((\$(date +%s) - start)) s (commit $commit, \$clone/atraced)"
  [[ \$rc == 0 ]] || exit "\$rc"
  rm -rf "\$clone"
done
EOF
  pidns=()
else
  cat >"$tree/root/p700/inside.sh" <<'EOF'
set -uo pipefail
exec > /root/p700/first.log 2>&1
cd /root/p700/atraced
start=$(date +%s)
bash scripts/dev.sh run > /root/p700/run.log 2>&1 &
runner=$!
until [[ -S /run/atraced/atraced.sock ]]; do
  kill -0 "$runner" 2>/dev/null || { echo "dev.sh run exited before its socket appeared:"; tail -20 /root/p700/run.log; exit 1; }
  sleep 1
done
echo "dev.sh run: socket after $(($(date +%s) - start)) s"
eval "$(bash scripts/dev.sh env)"
atracectl status || { echo "atracectl status failed"; exit 1; }
# "Your first trace" as written, and what a reader is told to look for (the suite's own check).
rc=0
bash tests/readme/run_first_trace.sh /root/p700/atraced /root/p700/atraced/build/run || rc=$?
echo "README walkthrough: rc $rc"
kill "$runner"
wait "$runner"
echo "packages installed: $(dpkg-query -W -f='${Status}\n' | grep -c 'install ok installed')"
exit "$rc"
EOF
  pidns=(-p -f)
fi

# The namespace: the tree bound onto itself (pivot_root needs a mount point), its own /proc,
# the host's /sys (cgroups: journald and systemd-run need them) and /dev, then pivot_root.
rc=0
unshare -m "${pidns[@]}" --propagation private bash -euo pipefail -c '
  tree="$1"
  mount --bind "$tree" "$tree"
  mount -t proc proc "$tree/proc"
  mount --rbind /sys "$tree/sys"
  mount --rbind /dev "$tree/dev"
  mkdir -p "$tree/.old"
  cd "$tree"
  pivot_root . .old
  umount -l /.old
  rmdir /.old
  exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
    bash /root/p700/inside.sh </dev/null
' fresh "$tree" || rc=$?
if [[ "$mode" == first ]]; then
  echo "first command (commit $commit): rc $rc; log $tree/root/p700/first.log"
fi
exit "$rc"
