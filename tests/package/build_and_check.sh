#!/usr/bin/env bash
# The Debian packages, end to end (a stage of `bash scripts/dev.sh test`; run as root on a
# machine that may be changed: it installs and purges the packages):
#  1. copies the tree (what git tracks, plus untracked files that are not ignored; no
#     build/) into a directory only root may enter, as a checkout under `mktemp -d` or in a
#     private home directory is, and builds source and binary packages there with
#     `dpkg-buildpackage -us -uc`, tests on (DEB_BUILD_OPTIONS="parallel=N"), warnings as
#     errors (ATRACED_WERROR=ON): the whole suite but what debian/rules leaves to a machine
#     with systemd runs in the packages' own build tree, g++ -O2 with Debian's flags, as
#     shipped, and the tests that act as other users stage what those users run;
#  2. lintian on all of them: any error or warning fails (overrides need a reason, in
#     debian/*.lintian-overrides);
#  3. tests/systemd/check_deb.sh on the .deb files (files, fields, maintainer scripts);
#  4. apt install ./*.deb, then: atraced --version, atracectl --help, man -w for every page,
#     the group, the trace directory, the enabled socket, pkg-config, a consumer built
#     against libatrace-client-dev (pkg-config, find_package, C99), and the installed daemon
#     started from /etc/atraced/atraced.conf on a scratch root, driven by atracectl;
#  5. apt install --reinstall (an edited conffile and a disabled socket stay so), apt remove
#     (conffile and traces stay), then apt purge (both go, the group stays).
# Usage: tests/package/build_and_check.sh [WORK_DIR]   (default build/package)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$src/build/package}
packages=(atraced atracectl libatrace-client0 libatrace-client-dev libascend-trace0 libascend-trace-dev)

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== package: $* ($(( $(date +%s) - t0 )) s)"; }
t0=$(date +%s)
known() {  # the packages dpkg still has a record of (installed, or removed with conffiles)
  local p
  for p in "${packages[@]}"; do
    if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qvx 'not-installed'; then echo "$p"; fi
  done
}

[[ $(id -u) == 0 ]] || fail "run as root: the check installs and purges the packages"
for tool in dpkg-buildpackage dh lintian pandoc apt-get man pkg-config; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/dev.sh deps installs it)"
done
[[ -z $(known) ]] || fail "$(known | xargs) already installed here; purge first (apt purge $(known | xargs))"
[[ ! -e /var/log/ascend/atrace ]] || fail "/var/log/ascend/atrace exists; purging the package would delete it"
had_log_root=0
if [[ -d /var/log/ascend ]]; then had_log_root=1; fi

# 1. A clean copy, and the build.
rm -rf "$work"
mkdir -p "$work/src"
work=$(cd "$work" && pwd)
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
     tar --null -T - -cf -) | tar -xf - -C "$work/src"
else
  tar -C "$src" --exclude='./build*' --exclude=./.cache -cf - . | tar -xf - -C "$work/src"
fi
version=$(cd "$work/src" && dpkg-parsechangelog -S Version)
cmake_version=$(sed -n 's/^project(atraced VERSION \([0-9.]*\).*/\1/p' "$work/src/CMakeLists.txt")
[[ $version == "$cmake_version" ]] || fail "debian/changelog is $version, CMakeLists.txt project() is $cmake_version"
step "building $version with its tests"
# The copy's parent is root's alone while it builds, then opened for apt, which reads the
# .deb files as _apt.
chmod 0700 "$work"
jobs=$(nproc 2>/dev/null || echo 2)
(cd "$work/src" && ATRACED_WERROR=ON DEB_BUILD_OPTIONS="parallel=$jobs" dpkg-buildpackage -us -uc >"$work/build.log" 2>&1) ||
  { grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(Failed|Timeout|Exception)' "$work/build.log" || true
    tail -n 120 "$work/build.log"; fail "dpkg-buildpackage failed (log: $work/build.log)"; }
chmod 0755 "$work"
grep -E 'tests passed|tests failed|Total Test time' "$work/build.log" || fail "dpkg-buildpackage ran no tests (log: $work/build.log)"
arch=$(dpkg --print-architecture)
changes=$work/atraced_${version}_${arch}.changes

# 2. lintian: source and every binary package, including -dbgsym.
step "lintian"
lintian_out=$work/lintian.txt
rc=0
lintian --fail-on error,warning --info --display-experimental --show-overrides "$changes" >"$lintian_out" 2>&1 || rc=$?
grep -v '^running with root privileges is not recommended!$' "$lintian_out" || true
if [[ $rc != 0 ]] || grep -qE '^[EW]: ' "$lintian_out"; then fail "lintian reports errors or warnings (exit $rc)"; fi

# 3. The .deb files without installing them.
bash "$src/tests/systemd/check_deb.sh" "$work" "$version"

# 4. Install.
step "apt install"
purge() {  # apt cannot name a package that is gone and in no archive, so only the known ones
  local left
  mapfile -t left < <(known)
  ((${#left[@]} == 0)) || DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${left[@]}" >"$work/purge.log" 2>&1
}
cleanup() {
  rm -rf "$scratch"
  purge || true
  rm -rf /var/log/ascend/atraced-pkgtest-other
  if [[ $had_log_root == 0 ]]; then rmdir /var/log/ascend 2>/dev/null || true; fi
}
scratch=$(mktemp -d /tmp/atraced-pkg.XXXXXX)
trap cleanup EXIT
debs=()
for p in "${packages[@]}"; do debs+=("$work/${p}_${version}_${arch}.deb"); done
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${debs[@]}" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "apt install failed"; }
for p in "${packages[@]}"; do
  [[ $(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p") == "installed $version" ]] || fail "$p is not installed at $version"
done
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in /usr/sbin/atraced /usr/bin/atracectl /etc/atraced/atraced.conf /lib/systemd/system/atraced.socket \
         /lib/systemd/system/atraced.service /usr/lib/$triplet/libatrace_client.so.0 \
         /usr/lib/$triplet/pkgconfig/atrace_client.pc /usr/include/atraced/atrace_client.h \
         /usr/lib/$triplet/ascend-trace/libatrace_hccl.so /usr/lib/$triplet/ascend-trace/libatrace_hccl_audit.so; do
  [[ -e $f ]] || fail "$f is not installed"
done
atraced --version | grep -qF "atraced $version " || fail "atraced --version: $(atraced --version)"
atracectl --help | grep -q '^Usage: atracectl' || fail "atracectl --help"
for page in 1:atracectl 8:atraced 5:atraced.conf; do
  man -w "${page%%:*}" "${page#*:}" >/dev/null || fail "man -w ${page/:/ } finds no page"
done
man -w atracectl | grep -qx '/usr/share/man/man1/atracectl.1.gz' || fail "man -w atracectl: $(man -w atracectl)"
# What the maintainer scripts did: group, trace directory (root's, group read for adm, the
# reader group of the shipped configuration; atrace, the socket's group, reads nothing; the
# root above only passed through), socket enabled (not the service, not the user units).
getent group atrace >/dev/null || fail "no group atrace"
[[ $(stat -c '%a %U %G' /var/log/ascend/atrace) == "750 root adm" ]] ||
  fail "/var/log/ascend/atrace is $(stat -c '%a %U %G' /var/log/ascend/atrace)"
[[ $(stat -c '%a %U %G' /var/log/ascend) == "711 root root" ]] ||
  fail "/var/log/ascend is $(stat -c '%a %U %G' /var/log/ascend)"
grep -qx 'reader-group = adm' /etc/atraced/atraced.conf || fail "atraced.conf does not set reader-group = adm"
[[ -L /etc/systemd/system/sockets.target.wants/atraced.socket ]] || fail "atraced.socket is not enabled"
if compgen -G '/etc/systemd/system/*.wants/atraced.service' >/dev/null; then fail "atraced.service is enabled"; fi
if compgen -G '/etc/systemd/user/*.wants/atraced.*' >/dev/null; then fail "the user units are enabled for everyone"; fi
dpkg-query -W -f='${Conffiles}\n' atraced | grep -q '^ /etc/atraced/atraced.conf ' || fail "atraced.conf is not a conffile"
if [[ -d /run/systemd/system ]]; then
  systemctl is-enabled atraced.socket | grep -qx enabled || fail "systemctl: atraced.socket not enabled"
  systemctl is-active atraced.socket | grep -qx active || fail "systemctl: atraced.socket not active"
fi

# pkg-config and consumers of the -dev package.
step "consumers"
# prefix=/usr: no -I/-L for the system directories, and the library by name.
pc=$(pkg-config --cflags --libs atrace_client | xargs)
echo "pkg-config --cflags --libs atrace_client: $pc"
[[ $pc == "-latrace_client" ]] || fail "pkg-config --cflags --libs atrace_client: '$pc'"
[[ $(pkg-config --variable=libdir atrace_client) == "/usr/lib/$triplet" ]] || fail "pkg-config libdir"
g++ -std=c++17 -Wall -Werror "$src/tests/client/consumer/consumer.cc" -o "$scratch/consumer_pc" $(pkg-config --cflags --libs atrace_client) ||
  fail "a C++ consumer does not build with pkg-config"
gcc -std=c99 -pedantic -Wall -Werror "$src/tests/client/c99_example.c" -o "$scratch/consumer_c99" $(pkg-config --cflags --libs atrace_client) ||
  fail "a C99 consumer does not build with pkg-config"
# A forwarder author's part of the -dev package (issue 23): the protocol's C header compiles
# alone, and its specification is beside it.
printf '#include <atraced/proto/wire.h>\nint main(void) { return ATR_MAX_DEVICE_ID == 1023u ? 0 : 1; }\n' >"$scratch/wire.c"
gcc -std=c99 -pedantic -Wall -Werror "$scratch/wire.c" -o "$scratch/wire" && "$scratch/wire" ||
  fail "atraced/proto/wire.h does not build alone"
compgen -G '/usr/share/doc/libatrace-client-dev/PROTOCOL.md*' >/dev/null || fail "PROTOCOL.md is not in libatrace-client-dev"
compgen -G '/usr/share/doc/libascend-trace-dev/ASCEND_TRACE.md*' >/dev/null || fail "ASCEND_TRACE.md is not in libascend-trace-dev"
compgen -G '/usr/share/doc/atraced/CONFIGURATION.md*' >/dev/null || fail "CONFIGURATION.md is not in atraced"
# ascend_trace.pc: its include directory by the prefix, not through pkgconfig/../../..
pc=$(pkg-config --cflags ascend_trace | xargs)
[[ $pc == "-I/usr/include/ascend_trace" ]] || fail "pkg-config --cflags ascend_trace: '$pc'"
# The CANN drop-in, the way an application builds against CANN's headers: pkg-config keeps
# the library under -Wl,--as-needed, and programs linked against CANN's library find ours
# under its file name in the private directory.
gcc -std=c99 -pedantic -Wall -Werror "$src/tests/ascend_trace/dropin_example.c" -o "$scratch/dropin" -Wl,--as-needed \
  $(pkg-config --cflags --libs ascend_trace) || fail "the drop-in example does not build with pkg-config ascend_trace"
objdump -p "$scratch/dropin" | grep -qE 'NEEDED +libascend_trace\.so\.0$' || fail "the drop-in example does not need libascend_trace.so.0"
[[ -e /usr/lib/$triplet/ascend-trace/libascend_trace.so ]] || fail "no libascend_trace.so under CANN's name in /usr/lib/$triplet/ascend-trace"
cmake -S "$src/tests/client/consumer" -B "$scratch/consumer_cmake" >"$scratch/cmake.log" 2>&1 &&
  cmake --build "$scratch/consumer_cmake" >>"$scratch/cmake.log" 2>&1 || { cat "$scratch/cmake.log"; fail "find_package(AtraceClient) consumer"; }

# The installed daemon, from the installed configuration, on a scratch root and socket.
step "daemon"
sock=$scratch/atraced.sock
atraced --config /etc/atraced/atraced.conf --root "$scratch/root" --socket "$sock" >"$scratch/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { cat "$scratch/daemon.log"; fail "the installed atraced did not listen on $sock"; }
# The shipped configuration sets socket-group = atrace: members of the group can use it.
[[ $(stat -c '%G %a' "$sock") == "atrace 660" ]] || fail "the socket is $(stat -c '%U:%G %a' "$sock"), not atrace 660"
status=$(atracectl --socket "$sock" status --json)
grep -qF "\"root\":\"$scratch/root\"" <<<"$status" || fail "status: $status"
path=$(echo from-atracectl | atracectl --socket "$sock" emit --event schedule --object pkgtest)
[[ $(cat "$path") == from-atracectl && $path == "$scratch/root/atrace/"* ]] || fail "atracectl emit wrote '$path'"
for exe in consumer_pc consumer_c99 consumer_cmake/consumer; do
  path=$("$scratch/$exe" "$sock" "${exe##*/}") || fail "$exe failed"
  [[ -s $path && $path == "$scratch/root/atrace/"* ]] || fail "$exe wrote '$path'"
done
ATRACED_SOCKET=$sock "$scratch/dropin" >/dev/null || fail "the drop-in example failed against the installed daemon"
# Who reads what on the installed daemon's tree: a member of atrace writes and reads its own
# trace; the trace directory lists for adm only; the process directory names the user.
reader=atrpkg$$
useradd --no-create-home --shell /usr/sbin/nologin --groups atrace "$reader" || fail "useradd $reader"
chmod 0755 "$scratch"
path=$(echo own | runuser -u "$reader" -- atracectl --socket "$sock" emit --event schedule --object mine) ||
  { userdel "$reader"; fail "atracectl emit as a member of atrace"; }
own=$(runuser -u "$reader" -- cat "$path") || own="(refused)"
acl_dir=$(getfacl --absolute-names --omit-header "$(dirname "$(dirname "$path")")")
acl_top=$(getfacl --absolute-names --omit-header "$scratch/root/atrace")
userdel "$reader"
[[ $own == own ]] || fail "a member of atrace cannot read its own trace $path: $own"
grep -qx "user:$reader:r-x" <<<"$acl_dir" || fail "the process dir does not name its user: $acl_dir"
grep -qx 'group:adm:r-x' <<<"$acl_dir" || fail "the process dir is not readable by adm: $acl_dir"
for entry in 'group::---' 'other::---' 'group:adm:r-x'; do
  grep -qx "$entry" <<<"$acl_top" || fail "$scratch/root/atrace lacks $entry: $acl_top"
done
ls "$scratch"/root/atrace/trace_*/schedule_event_*/schedule_tracer_c_app.txt >/dev/null 2>&1 ||
  fail "the drop-in example's report is not in the CANN layout"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[[ $rc == 0 ]] || { cat "$scratch/daemon.log"; fail "atraced exited $rc on SIGTERM"; }

# An upgrade (here: the same packages again) keeps an edited configuration and an
# administrator's disable of the socket.
step "reinstall"
echo '# edited before the upgrade' >>/etc/atraced/atraced.conf
systemctl disable atraced.socket 2>/dev/null  # what an administrator types; works offline too
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "${debs[@]}" >"$work/reinstall.log" 2>&1 ||
  { cat "$work/reinstall.log"; fail "apt install --reinstall failed"; }
grep -qx '# edited before the upgrade' /etc/atraced/atraced.conf || fail "the upgrade replaced the edited atraced.conf"
[[ ! -e /etc/systemd/system/sockets.target.wants/atraced.socket ]] || fail "the upgrade enabled a disabled atraced.socket"
systemctl enable atraced.socket 2>/dev/null

# 5. Remove keeps the configuration and the traces; purge removes both (Policy 10.8: log
# files go on purge), keeps /var/log/ascend if something else lives there, keeps the group.
step "remove and purge"
mkdir -p /var/log/ascend/atrace/trace_1_1_00000000000000000000 /var/log/ascend/atraced-pkgtest-other
touch /var/log/ascend/atrace/trace_1_1_00000000000000000000/probe /var/log/ascend/atraced-pkgtest-other/log
echo '# edited' >>/etc/atraced/atraced.conf
DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "${packages[@]}" >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "apt remove"; }
[[ ! -e /usr/sbin/atraced && ! -e /usr/lib/$triplet/libatrace_client.so.0 ]] || fail "apt remove left the programs"
grep -qx '# edited' /etc/atraced/atraced.conf || fail "apt remove did not keep the edited conffile"
[[ -e /var/log/ascend/atrace/trace_1_1_00000000000000000000/probe ]] || fail "apt remove deleted the traces"
purge || { cat "$work/purge.log"; fail "apt purge"; }
[[ -z $(known) ]] || fail "left after purge: $(known | xargs)"
[[ $(dpkg-query -W -f='${db:Status-Status}' atraced 2>/dev/null || echo not-installed) == not-installed ]] || fail "atraced left after purge"
for gone in /etc/atraced /var/log/ascend/atrace /etc/systemd/system/sockets.target.wants/atraced.socket \
            /var/lib/systemd/deb-systemd-helper-enabled/atraced.socket.dsh-also /lib/systemd/system/atraced.socket; do
  [[ ! -e $gone && ! -L $gone ]] || fail "$gone is left after purge"
done
[[ -e /var/log/ascend/atraced-pkgtest-other/log ]] || fail "purge deleted another program's files under /var/log/ascend"
rm -rf /var/log/ascend/atraced-pkgtest-other
if [[ $had_log_root == 0 ]]; then rmdir /var/log/ascend; fi
getent group atrace >/dev/null || fail "purge removed the group atrace (it is kept on purpose)"
trap 'rm -rf "$scratch"' EXIT

echo "OK: packages $version built and tested, lintian clean, installed, checked, purged in $(( $(date +%s) - t0 )) s"
