#!/usr/bin/env bash
# Checks the .deb files dpkg-buildpackage wrote (debian/), without installing them:
# control fields, each package's file list, the unit contents, the maintainer scripts
# debhelper generated, conffiles, the library's SONAME and symbols, no RPATH.
# Usage: check_deb.sh DIR VERSION   (DIR holds <package>_<VERSION>_<arch>.deb)
# Run by tests/package/build_and_check.sh, which builds the packages first.
set -euo pipefail
dir=$(cd "$1" && pwd)
version=$2
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$triplet

tmp=$(mktemp -d /tmp/atraced-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

deb_of() { local f="$dir/${1}_${version}_${arch}.deb"; [[ -f $f ]] || fail "missing $(basename "$f")"; echo "$f"; }
list_of() {  # "owner path" per entry, ./ stripped, symlinks as "path -> target"
  dpkg-deb -c "$1" | awk '{ o = $2; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print o, $0 }' | sed 's#^\(\S*\) \./#\1 /#'
}
expect_files() {  # expect_files PACKAGE PATH...: every PATH in the package, owned by root/root
  local pkg=$1 deb; shift
  deb=$(deb_of "$pkg")
  list_of "$deb" >"$tmp/$pkg.list"
  for f in "$@"; do
    grep -qE "^root/root ${f//./\\.}( -> .*)?$" "$tmp/$pkg.list" || { cat "$tmp/$pkg.list"; fail "$pkg lacks $f"; }
  done
}

# The packages and their files. Unit directories: Debian 12's (systemd.pc).
expect_files atraced /usr/sbin/atraced /etc/atraced/atraced.conf \
  /lib/systemd/system/atraced.socket /lib/systemd/system/atraced.service \
  /usr/lib/systemd/user/atraced.socket /usr/lib/systemd/user/atraced.service \
  /usr/lib/sysusers.d/atraced.conf /usr/lib/tmpfiles.d/atraced.conf \
  /usr/share/man/man8/atraced.8.gz /usr/share/man/man5/atraced.conf.5.gz /usr/share/doc/atraced/copyright
expect_files atracectl /usr/bin/atracectl /usr/share/man/man1/atracectl.1.gz /lib/systemd/system/atraced-hang-watch.service
expect_files libatrace-client0 "$libdir/libatrace_client.so.0" "$libdir/libatrace_client.so.$version"
expect_files libascend-trace0 "$libdir/libascend_trace.so.0" "$libdir/libascend_trace.so.$version" \
  "$libdir/ascend-trace/libascend_trace.so"
expect_files libascend-trace-dev "$libdir/libascend_trace.so" /usr/include/ascend_trace/atrace_pub.h \
  /usr/include/ascend_trace/atrace_types.h /usr/include/ascend_trace/atrace_api.h "$libdir/pkgconfig/ascend_trace.pc"
expect_files libatrace-client-dev "$libdir/libatrace_client.so" /usr/include/atraced/atrace_client.h \
  /usr/include/atraced/atrace_client.hpp /usr/include/atraced/proto/wire.h "$libdir/pkgconfig/atrace_client.pc" \
  "$libdir/cmake/AtraceClient/AtraceClientConfig.cmake" "$libdir/cmake/AtraceClient/AtraceClientTargets.cmake"
for pkg in atraced atracectl libatrace-client0; do
  [[ -f $dir/${pkg}-dbgsym_${version}_${arch}.deb ]] || fail "no automatic ${pkg}-dbgsym package"
done
# Nothing in a package that belongs to another: the daemon package has no library, the
# runtime library package no .so link, headers or .pc.
if grep -E 'libatrace_client|/usr/include|pkgconfig|/usr/bin/' "$tmp/atraced.list"; then fail "atraced ships client files"; fi
if grep -E '\.so$|/usr/include|pkgconfig|cmake' "$tmp/libatrace-client0.list"; then fail "libatrace-client0 ships -dev files"; fi
if cat "$tmp"/*.list | grep -E ' /usr/local/| /usr/etc/| /usr/lib/libatrace'; then fail "files outside Debian's paths"; fi

# Control fields.
field() { dpkg-deb -f "$(deb_of "$1")" "$2"; }
depends=$(field atraced Depends)
for dep in libc6 libsystemd0 libboost-program-options1.74.0 'systemd | systemd-standalone-sysusers'; do
  grep -qF "$dep" <<<"$depends" || fail "atraced Depends lacks $dep: $depends"
done
grep -q 'libatrace-client0 (>= ' <<<"$(field atracectl Depends)" || fail "atracectl does not depend on libatrace-client0"
[[ $(field libatrace-client-dev Depends) == *"libatrace-client0 (= $version)"* ]] || fail "-dev does not pin libatrace-client0"
[[ $(field libatrace-client0 Multi-Arch) == same ]] || fail "libatrace-client0 is not Multi-Arch: same"
for pkg in atraced atracectl libatrace-client0 libatrace-client-dev libascend-trace0 libascend-trace-dev; do
  m=$(field "$pkg" Maintainer)
  [[ $m == *@* && $m != *localhost* && $m != *.invalid* ]] || fail "$pkg: bogus Maintainer '$m'"
  dpkg-deb -f "$(deb_of "$pkg")" Description | awk -v p="$pkg" 'length > 79 { print p ": description line over 79 columns: " $0; bad = 1 } END { exit bad }' ||
    fail "over-long description lines"
done

# Contents.
for pkg in atraced atracectl libatrace-client0 libascend-trace0; do dpkg-deb -x "$(deb_of "$pkg")" "$tmp/x"; done
unit=$tmp/x/lib/systemd/system
grep -qxF "ExecStart=/usr/sbin/atraced --config /etc/atraced/atraced.conf" "$unit/atraced.service" || fail "system unit ExecStart"
grep -qxF "ListenStream=/run/atraced/atraced.sock" "$unit/atraced.socket" || fail "socket path"
for u in "$unit/atraced.service" "$unit/atraced.socket" "$tmp"/x/usr/lib/systemd/user/atraced.*; do
  grep -q '^Documentation=.*man:atraced(8)' "$u" || fail "$u: Documentation= does not name man:atraced(8)"
done
grep -q '^Documentation=.*man:atraced.conf(5)' "$unit/atraced.service" || fail "atraced.service: no man:atraced.conf(5)"
grep -qxF "root = /var/log/ascend" "$tmp/x/etc/atraced/atraced.conf" || fail "conf root"
[[ $(stat -c %a "$tmp/x/usr/sbin/atraced") == 755 ]] || fail "atraced is not mode 755"
"$tmp/x/usr/sbin/atraced" --version | grep -qF "atraced $version " || fail "the packaged atraced is not version $version"
soname=$(objdump -p "$tmp/x$libdir/libatrace_client.so.$version" | awk '$1 == "SONAME" { print $2 }')
[[ $soname == libatrace_client.so.0 ]] || fail "SONAME is '$soname', the package is libatrace-client0"
soname=$(objdump -p "$tmp/x$libdir/libascend_trace.so.$version" | awk '$1 == "SONAME" { print $2 }')
[[ $soname == libascend_trace.so.0 ]] || fail "SONAME is '$soname', the package is libascend-trace0"
for bin in "$tmp/x/usr/sbin/atraced" "$tmp/x/usr/bin/atracectl" "$tmp/x$libdir/libatrace_client.so.$version"; do
  if objdump -p "$bin" | grep -E 'RPATH|RUNPATH'; then fail "$bin has an RPATH"; fi
  if objdump -h "$bin" | grep -q '\.debug_info'; then fail "$bin is not stripped"; fi
done

# Maintainer scripts (debhelper's) and conffiles.
dpkg-deb -e "$(deb_of atraced)" "$tmp/ctl"
for s in postinst prerm postrm; do
  [[ -x $tmp/ctl/$s ]] || fail "no executable $s"
  sh -n "$tmp/ctl/$s" || fail "$s: syntax error"
done
# The group before the directories that use it, and both before the socket (SocketGroup).
order=$(grep -nE 'systemd-sysusers .*atraced\.conf|systemd-tmpfiles .*--create atraced\.conf|deb-systemd-helper enable .atraced\.socket.' "$tmp/ctl/postinst" | cut -d: -f1 | tr '\n' ' ')
read -r l_sysusers l_tmpfiles l_enable rest <<<"$order"
[[ -n ${l_enable:-} && -z ${rest:-} && $l_sysusers -lt $l_tmpfiles && $l_tmpfiles -lt $l_enable ]] ||
  { cat "$tmp/ctl/postinst"; fail "postinst must run systemd-sysusers, then systemd-tmpfiles, then enable atraced.socket (lines: $order)"; }
# Socket activation: the package starts the socket only; on upgrade it try-restarts the
# service and leaves the socket alone (it queues clients meanwhile); removal stops the
# socket, which stops the service (Requires=atraced.socket). Nothing else is invoked.
invoked() { grep -oE "deb-systemd-invoke [^>]*" "$1" | sed 's/ *$//' | sort | tr '\n' ';'; }
[[ $(invoked "$tmp/ctl/postinst") == "deb-systemd-invoke start 'atraced.socket';deb-systemd-invoke try-restart 'atraced.service';" ]] ||
  { cat "$tmp/ctl/postinst"; fail "postinst units: $(invoked "$tmp/ctl/postinst")"; }
grep -B1 "deb-systemd-invoke try-restart 'atraced.service'" "$tmp/ctl/postinst" | grep -qF 'if [ -n "$2" ]; then' ||
  fail "postinst try-restarts the service on a fresh installation"
[[ $(invoked "$tmp/ctl/prerm") == "deb-systemd-invoke stop 'atraced.socket';" ]] || fail "prerm units: $(invoked "$tmp/ctl/prerm")"
grep -qF '[ "$1" = remove ] && [ -d /run/systemd/system ]' "$tmp/ctl/prerm" || fail "prerm stops the socket on upgrade too"
if [[ -f $tmp/ctl/preinst ]] && grep -q 'deb-systemd-invoke stop' "$tmp/ctl/preinst"; then fail "preinst stops units on upgrade"; fi
grep -q 'rm -rf /var/log/ascend/atrace' "$tmp/ctl/postrm" || fail "postrm does not remove the traces on purge"
if grep -hE '^[^#]*\bsystemctl\b' "$tmp/ctl/postinst" "$tmp/ctl/prerm" "$tmp/ctl/postrm" | grep -v 'systemctl --system daemon-reload'; then
  fail "a maintainer script calls systemctl by hand"
fi
# The collector's unit (atracectl's) is off by default: its package neither enables nor starts it.
dpkg-deb -e "$(deb_of atracectl)" "$tmp/ctl-ctl"
# (debhelper's --no-enable snippet re-enables it only where the administrator had: under was-enabled.)
if grep -qsE "deb-systemd-invoke (start|restart)" "$tmp"/ctl-ctl/postinst ||
   { grep -qs "deb-systemd-helper enable" "$tmp"/ctl-ctl/postinst &&
     ! grep -qs "was-enabled 'atraced-hang-watch.service'" "$tmp"/ctl-ctl/postinst; }; then
  cat "$tmp/ctl-ctl/postinst"; fail "atracectl's postinst enables or starts atraced-hang-watch.service"
fi
grep -qxF "ExecStart=/usr/bin/atracectl hang --journal /var/log/journal/remote --follow" \
  "$tmp/x/lib/systemd/system/atraced-hang-watch.service" || fail "atraced-hang-watch.service ExecStart"
grep -qx /etc/atraced/atraced.conf "$tmp/ctl/conffiles" || fail "/etc/atraced/atraced.conf is not a conffile"
grep -q '^libatrace_client.so.0 libatrace-client0 #MINVER#' "$(dpkg-deb -e "$(deb_of libatrace-client0)" "$tmp/ctl-lib" && echo "$tmp/ctl-lib/symbols")" ||
  fail "libatrace-client0 has no symbols file"
grep -q '^libascend_trace.so.0 libascend-trace0 #MINVER#' "$(dpkg-deb -e "$(deb_of libascend-trace0)" "$tmp/ctl-asc" && echo "$tmp/ctl-asc/symbols")" ||
  fail "libascend-trace0 has no symbols file"
echo "OK: $(ls "$dir"/*_"$version"_"$arch".deb | wc -l) packages in $dir checked"
