#!/usr/bin/env bash
# The README's test command on a Debian 12 machine that has had nothing but `dev.sh deps`:
#   sudo bash scripts/fresh_debian_check.sh DIR [RUNS] [REV]
# makes DIR/root a minimal Debian 12 tree with debootstrap (once; from the mirror in
# $DEBIAN_MIRROR, default deb.debian.org), copies REV (default HEAD) into it, and inside a
# private mount namespace rooted there (pivot_root, its own /proc, the host's /sys and /dev):
#   1. runs `bash scripts/dev.sh deps` in an exported copy of REV (installs git, compilers, ...);
#   2. RUNS times (default 3): clones REV into a new directory under a 0700 parent
#      (/root/p700, as `mktemp -d` makes and as many home directories are) and runs
#      `CI=true bash .ci/run` there with a bare environment and no stdin.
# Stops at the first failing run. Each run's log is DIR/root/root/p700/run-N.log, and a line a
# run ("run N: rc R, S s") goes to stdout. The host's packages never reach the tree, so a tool
# the suite runs that no declared package installs fails here.
set -euo pipefail

if (($# < 1)); then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
dir="$(realpath -m "$1")"
runs="${2:-3}"
rev="${3:-HEAD}"
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

# The revision, as a bare repository the runs clone and as an exported tree for `deps`.
rm -rf "$tree/root/src.git" "$tree/root/p700"
git clone -q --bare "$here" "$tree/root/src.git"
git -C "$tree/root/src.git" update-ref refs/heads/check "$commit"
install -d -m 0700 "$tree/root/p700"
mkdir -p "$tree/root/p700/deps"
git -C "$here" archive "$commit" | tar -x -C "$tree/root/p700/deps"
cp /etc/resolv.conf "$tree/etc/resolv.conf"

cat >"$tree/root/p700/inside.sh" <<EOF
set -euo pipefail
cd /root/p700/deps
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

# The namespace: the tree bound onto itself (pivot_root needs a mount point), its own /proc,
# the host's /sys (cgroups: journald and systemd-run need them) and /dev, then pivot_root.
unshare -m --propagation private bash -euo pipefail -c '
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
    bash /root/p700/inside.sh
' fresh "$tree"
