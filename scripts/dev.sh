#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, run as root (or with sudo available):
#   scripts/dev.sh run    install what is missing, build, run atraced in the foreground
#   scripts/dev.sh test   install what is missing, build, run the whole suite (what CI runs)
#   scripts/dev.sh deps   only install the packages
# Build trees go to build/<flavour>; nothing is downloaded except Debian packages.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
jobs="$(nproc 2>/dev/null || echo 2)"

# Everything the build, the tests, the sanitizer and the fuzz stages use.
packages=(
  cmake g++ make pkg-config
  libboost-dev libboost-program-options-dev libsystemd-dev catch2
  clang libclang-rt-14-dev
)

install_deps() {
  local missing=()
  for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  echo "== installing: ${missing[*]}"
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then sudo=(sudo); fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# build <dir> [cmake args...]
build() {
  local dir="$1"
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

run_tests() {
  local dir="$1"
  shift
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$jobs" "$@")
}

case "${1:-}" in
  deps)
    install_deps
    ;;
  run)
    install_deps
    build build/release
    shift
    exec build/release/daemon/atraced "$@"
    ;;
  test)
    install_deps
    start=$(date +%s)
    echo "== sanitizer build (ASan + UBSan), warnings as errors"
    build build/asan -DATRACED_SANITIZE=ON -DATRACED_WERROR=ON
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      run_tests build/asan
    echo "== release build, warnings as errors"
    build build/release -DATRACED_WERROR=ON
    run_tests build/release
    echo "== all stages passed in $(( $(date +%s) - start )) s"
    ;;
  *)
    echo "usage: scripts/dev.sh run|test|deps" >&2
    exit 2
    ;;
esac
