#!/usr/bin/env bash
# cmake --install of the build tree, checked twice:
#  1. under a temporary prefix P: every file a host needs, unit paths that point into P,
#     and `systemd-analyze verify` on every system and user unit (it needs ExecStart's
#     binary to exist, which is P/sbin/atraced);
#  2. with prefix /usr into DESTDIR: Debian's paths (/usr/sbin, /etc, systemd's unit dirs),
#     and the sysusers.d/tmpfiles.d files applied for real to a scratch root with
#     systemd-sysusers --root and systemd-tmpfiles --root (group atrace; atrace/ setgid so what is below is group atrace).
# Exit 77 (skip) only if a systemd tool is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
for tool in systemd-analyze systemd-sysusers systemd-tmpfiles; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (Debian package systemd)"
    exit 77
  fi
done

tmp=$(mktemp -d /tmp/atraced-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_file() { [[ -f "$1" ]] || fail "missing $1"; }
expect_line() { grep -qxF -- "$2" "$1" || fail "$1 lacks the line: $2"; }

# 1. A temporary prefix.
P=$tmp/p
cmake --install "$build" --prefix "$P" >"$tmp/install1.log"
[[ -x $P/sbin/atraced ]] || fail "missing $P/sbin/atraced"
for f in lib/systemd/system/atraced.socket lib/systemd/system/atraced.service \
         lib/systemd/system/atraced-hang-watch.service lib/systemd/user/atraced.socket lib/systemd/user/atraced.service \
         lib/sysusers.d/atraced.conf lib/tmpfiles.d/atraced.conf etc/atraced/atraced.conf; do
  expect_file "$P/$f"
done
expect_line "$P/lib/systemd/system/atraced.service" "ExecStart=$P/sbin/atraced --config $P/etc/atraced/atraced.conf"
expect_line "$P/lib/systemd/user/atraced.service" "ExecStart=$P/sbin/atraced"
expect_line "$P/lib/systemd/system/atraced-hang-watch.service" "ExecStart=$P/bin/atracectl hang --journal /var/log/journal/remote --follow"
expect_line "$P/etc/atraced/atraced.conf" "root = /var/log/ascend"
if grep -q '@[A-Z_]*@' "$P"/lib/systemd/system/* "$P"/lib/systemd/user/*; then fail "unsubstituted @VAR@ in a unit"; fi

# Man pages (built when pandoc is there: ATRACED_MAN=AUTO). With them installed,
# systemd-analyze verify also checks that every Documentation=man:... page is found (via
# MANPATH); without them it is told not to look.
pages=()
if [[ -f $build/docs/man/atraced.8 ]]; then
  pages=(man8/atraced.8 man5/atraced.conf.5)
  if [[ -f $build/docs/man/atracectl.1 ]]; then pages+=(man1/atracectl.1); fi
  for f in "${pages[@]}"; do expect_file "$P/share/man/$f"; done
  export MANPATH=$P/share/man
  man_check=()
else
  echo "note: man pages not built (no pandoc); Documentation= not checked"
  man_check=(--man=no)
fi

verify() {  # verify [--user] verify UNIT...
  local out rc=0
  out=$(systemd-analyze "${man_check[@]}" "$@" 2>&1) || rc=$?
  echo "systemd-analyze $* -> $rc"
  [[ -z $out ]] || echo "$out"
  [[ $rc == 0 ]] || fail "systemd-analyze $* failed"
  # verify exits 0 on warnings (unknown keys, bad values are ignored): treat any remark
  # about our units as a failure.
  if grep -q 'atraced' <<<"$out"; then fail "systemd-analyze $* reported problems"; fi
}
verify verify "$P/lib/systemd/system/atraced.socket" "$P/lib/systemd/system/atraced.service" \
  "$P/lib/systemd/system/atraced-hang-watch.service"
mkdir -p "$tmp/xdg" && chmod 0700 "$tmp/xdg"
XDG_RUNTIME_DIR=$tmp/xdg verify --user verify "$P/lib/systemd/user/atraced.socket" "$P/lib/systemd/user/atraced.service"

# 2. Prefix /usr, staged in DESTDIR.
D=$tmp/d
DESTDIR=$D cmake --install "$build" --prefix /usr >"$tmp/install2.log"
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
userdir=$(pkg-config --variable=systemduserunitdir systemd 2>/dev/null || echo /usr/lib/systemd/user)
[[ -x $D/usr/sbin/atraced ]] || fail "missing /usr/sbin/atraced"
for f in "$unitdir/atraced.socket" "$unitdir/atraced.service" "$userdir/atraced.socket" "$userdir/atraced.service" \
         /usr/lib/sysusers.d/atraced.conf /usr/lib/tmpfiles.d/atraced.conf /etc/atraced/atraced.conf; do
  expect_file "$D$f"
done
expect_line "$D$unitdir/atraced.service" "ExecStart=/usr/sbin/atraced --config /etc/atraced/atraced.conf"
expect_line "$D$userdir/atraced.service" "ExecStart=/usr/sbin/atraced"
expect_line "$D$unitdir/atraced-hang-watch.service" "ExecStart=/usr/bin/atracectl hang --journal /var/log/journal/remote --follow"
for f in "${pages[@]}"; do expect_file "$D/usr/share/man/$f"; done

# The group and the directories, applied to a scratch root.
R=$tmp/root
mkdir -p "$R/etc"
systemd-sysusers --root="$R" "$D/usr/lib/sysusers.d/atraced.conf"
gid=$(awk -F: '$1 == "atrace" { print $3 }' "$R/etc/group")
[[ -n $gid ]] || fail "systemd-sysusers made no group atrace"
(( gid < 1000 )) || fail "group atrace got gid $gid, not a system gid"
# Debian's base-passwd has group adm (4): the reader group of the shipped configuration.
grep -q '^adm:' "$R/etc/group" || echo 'adm:x:4:' >>"$R/etc/group"
systemd-tmpfiles --root="$R" --create "$D/usr/lib/tmpfiles.d/atraced.conf"
# The root only passed through; the trace directory root's, group read for adm, none for
# atrace (the socket's group) or others.
for spec in /var/log/ascend:711:0 /var/log/ascend/atrace:750:4; do
  IFS=: read -r d mode group <<<"$spec"
  got=$(stat -c '%a %u %g' "$R$d") || fail "systemd-tmpfiles did not create $d"
  [[ $got == "$mode 0 $group" ]] || fail "$d is '$got', expected '$mode 0 $group'"
done
echo "OK: install tree under $P and /usr (DESTDIR) checked, units verified"
