#!/usr/bin/env bash
# Builds the Debian package with `cpack -G DEB` from the build tree into a temporary
# directory and checks it without installing it: control fields, the file list, the
# unit contents, the maintainer scripts and conffiles (dpkg-deb -I/-c/-x/-e).
# Usage: check_deb.sh BUILD_DIR HAVE_ATRACECTL(0|1). Exit 77 (skip) if dpkg-deb is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
have_atracectl=${2:-0}
for tool in cpack dpkg-deb; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (packages cmake, dpkg)"
    exit 77
  fi
done

tmp=$(mktemp -d /tmp/atraced-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB failed"; }
shopt -s nullglob
debs=("$tmp"/out/atraced_*.deb)
(( ${#debs[@]} == 1 )) || { ls -l "$tmp/out"; fail "expected one atraced_*.deb"; }
deb=${debs[0]}
echo "built $(basename "$deb")"

# Control fields.
dpkg-deb -f "$deb" Package | grep -qx atraced || fail "Package is not atraced"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for dep in libc6 libsystemd0 libboost-program-options1.74.0; do
  grep -q "$dep" <<<"$depends" || fail "Depends lacks $dep"
done

# Files.
dpkg-deb -c "$deb" | awk '{ print $2, $NF }' | sed 's#^\(\S*\) \./#\1 /#' >"$tmp/list"
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
userdir=$(pkg-config --variable=systemduserunitdir systemd 2>/dev/null || echo /usr/lib/systemd/user)
expected=(/usr/sbin/atraced "$unitdir/atraced.socket" "$unitdir/atraced.service" "$userdir/atraced.socket"
          "$userdir/atraced.service" /usr/lib/sysusers.d/atraced.conf /usr/lib/tmpfiles.d/atraced.conf
          /etc/atraced/atraced.conf)
if [[ $have_atracectl == 1 ]]; then expected+=(/usr/bin/atracectl); fi
for f in "${expected[@]}"; do
  grep -qx "root/root $f" "$tmp/list" || { cat "$tmp/list"; fail "package lacks $f (owned by root/root)"; }
done
if grep -qE ' /usr/local/| /usr/etc/' "$tmp/list"; then cat "$tmp/list"; fail "files under /usr/local or /usr/etc"; fi

# Contents.
dpkg-deb -x "$deb" "$tmp/x"
grep -qxF "ExecStart=/usr/sbin/atraced --config /etc/atraced/atraced.conf" "$tmp/x$unitdir/atraced.service" ||
  fail "system unit ExecStart is not /usr/sbin/atraced --config /etc/atraced/atraced.conf"
grep -qxF "ListenStream=/run/atraced/atraced.sock" "$tmp/x$unitdir/atraced.socket" || fail "socket path"
grep -qxF "root = /var/log/ascend" "$tmp/x/etc/atraced/atraced.conf" || fail "conf root"
[[ $(stat -c %a "$tmp/x/usr/sbin/atraced") == 755 ]] || fail "atraced is not mode 755"
"$tmp/x/usr/sbin/atraced" --version | grep -q . || fail "the packaged atraced does not run"

# Maintainer scripts and conffiles.
dpkg-deb -e "$deb" "$tmp/ctl"
for s in postinst prerm postrm; do
  [[ -x $tmp/ctl/$s ]] || fail "no executable $s"
  sh -n "$tmp/ctl/$s" || fail "$s: syntax error"
done
grep -q 'systemd-sysusers atraced.conf' "$tmp/ctl/postinst" || fail "postinst does not run systemd-sysusers"
grep -q 'addgroup --system atrace' "$tmp/ctl/postinst" || fail "postinst has no addgroup fallback"
grep -q 'systemd-tmpfiles --create atraced.conf' "$tmp/ctl/postinst" || fail "postinst does not run systemd-tmpfiles"
grep -q '\[ -d /run/systemd/system \]' "$tmp/ctl/postinst" || fail "postinst does not check for running systemd"
grep -q 'systemctl start atraced.socket' "$tmp/ctl/postinst" || fail "postinst does not start the socket"
grep -q 'systemctl stop atraced.socket atraced.service' "$tmp/ctl/prerm" || fail "prerm does not stop the units"
grep -qx /etc/atraced/atraced.conf "$tmp/ctl/conffiles" || fail "/etc/atraced/atraced.conf is not a conffile"
echo "OK: $(basename "$deb") checked ($(wc -l <"$tmp/list") entries)"
