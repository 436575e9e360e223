#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, run as root (or with sudo available):
#   scripts/dev.sh run [ARGS]  install what is missing, build atraced, atracectl and the
#                         libraries applications link (libascend_trace, libatrace_client)
#                         in build/run, run atraced in the foreground with ARGS
#   scripts/dev.sh env    print the exports a shell needs to build and run against build/run
#                         (or the tree in $ATRACED_BUILD): eval "$(bash scripts/dev.sh env)"
#   scripts/dev.sh test   install what is missing, build, run the whole suite and build,
#                         lint, install and purge the Debian packages (what CI runs)
#   scripts/dev.sh test --busy
#                         the first stage's suite (ASan + UBSan) while stress-ng keeps every
#                         CPU busy, three times in a row (ATRACED_BUSY_RUNS): the suite must
#                         not depend on how fast the machine is
#   scripts/dev.sh deps   only install the packages
# Build trees go to build/<flavour>; nothing is downloaded except Debian packages.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
jobs="$(nproc 2>/dev/null || echo 2)"
# Tests run twice as many at a time as there are cores: many of them wait (a hang watch's
# timeout, a daemon's tick) rather than compute, and the suite must pass on a busy machine.
test_jobs="${ATRACED_TEST_JOBS:-$((jobs * 2))}"

# What building the daemon and atracectl needs (`run`), and what the tests, the sanitizer,
# fuzz and package stages add (`test`): running the daemon installs no test tools.
build_packages=(
  cmake g++ make pkg-config
  libboost-dev libboost-program-options-dev libsystemd-dev libdw-dev libacl1-dev
)
test_packages=(
  catch2
  clang libclang-rt-14-dev
  systemd dpkg-dev file
  systemd-journal-remote  # the fleet's journal path (tests/systemd/journal_remote_fleet.sh)
  python3  # a Python program loads libascend_trace through ctypes, as Python frameworks do
  acl  # setfacl and getfacl: the per-user read tests take grants away and read them back
  git iproute2 bsdextrautils  # the package stage's copy, the fleet's namespaces, the man pages' check
  build-essential debhelper lintian pandoc man-db
  prometheus
  chromium  # the html export test renders the page headless (it skips where this is missing)
  stress-ng  # test --busy
)

# install_deps PACKAGE...: installs those that are missing.
install_deps() {
  local missing=()
  for p in "$@"; do
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
# build <dir> [cmake -D args...] [--target t...]
build() {
  local dir="$1"
  shift
  local defs=() targets=()
  while (($#)); do
    if [[ "$1" == --target ]]; then
      shift
      targets=("$@")
      break
    fi
    defs+=("$1")
    shift
  done
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${defs[@]}" >/dev/null
  if ((${#targets[@]})); then
    cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
  else
    cmake --build "$dir" -j "$jobs"
  fi
}

run_tests() {
  local dir="$1"
  shift
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$test_jobs" "$@")
}

# The sanitizer trees are built with clang at -O1 and line tables only: the sanitizers see
# the same code, and a tree builds in about a third of g++'s -O2 -g time (measured per file
# on this project: 9.6-13.7 s against 28-48 s). The packages' build tree is g++ -O2 -g, as shipped.
sanitizer_flags=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
                 -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only")
# `run`'s tree: g++ -O2 as shipped, with debug info for the developer's debugger.
run_flags=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG")

# Every libFuzzer target for a bounded time from its seed corpus; any crash, leak or
# sanitizer report fails the stage. New inputs go to a scratch dir, not the checkout.
# The fuzzers come from the ASan tree (ATRACED_FUZZ=ON there), built once for both.
# One fuzzer is one process on one core, so they run $jobs at a time: each still gets its
# full time on a core of its own, and the stage takes half the wall time on two cores.
fuzz_targets=(frame_decoder ring_reader hdc_trace stack_report names order_log config session viewer_escape
              bundle_reader ledger_reader hccl_records hang_entry process_device)
fuzz_one() {
  local tree="$1" target="$2" seconds="$3" scratch="$4"
  mkdir -p "$scratch/$target"
  # -timeout: an input that runs over 10 s is a hang, reported as a failure.
  "$tree/tests/fuzz/${target}_fuzzer" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    "$scratch/$target" "tests/fuzz/corpus/$target" >"$scratch/$target.log" 2>&1
}
fuzz_all() {
  local tree="$1"
  local seconds="${ATRACED_FUZZ_SECONDS:-15}"
  local scratch target i
  scratch="$(mktemp -d /tmp/atraced-corpus.XXXXXX)"
  local -a batch=()
  for ((i = 0; i < ${#fuzz_targets[@]}; i += jobs)); do
    batch=("${fuzz_targets[@]:i:jobs}")
    echo "== fuzz ${batch[*]} for ${seconds} s"
    local -A pids=()
    for target in "${batch[@]}"; do
      fuzz_one "$tree" "$target" "$seconds" "$scratch" &
      pids[$target]=$!
    done
    local failed=""
    for target in "${batch[@]}"; do
      wait "${pids[$target]}" || failed+=" $target"
    done
    for target in "${batch[@]}"; do
      if [[ " $failed " == *" $target "* ]]; then
        tail -n 60 "$scratch/$target.log"
        echo "fuzz target $target failed; log above, crash input in $(pwd)" >&2
      else
        echo "$target: $(grep -E '^stat::number_of_executed_units' "$scratch/$target.log" || echo 'no stats')"
      fi
    done
    unset pids
    [[ -z "$failed" ]] || return 1
  done
  rm -rf "$scratch" /tmp/atraced-fuzz.*
}

# print_env TREE: the exports that put TREE's atraced and atracectl on PATH, its pkg-config
# files (TREE/pkgconfig: headers from the source tree, libraries from TREE) on
# PKG_CONFIG_PATH, its libraries on LD_LIBRARY_PATH, and ATRACED_SOCKET at the socket atraced
# listens on by default (as root /run/atraced/atraced.sock, else $XDG_RUNTIME_DIR's), unless
# the caller's environment already sets it.
print_env() {
  local tree
  tree="$(cd "$1" 2>/dev/null && pwd)" || tree=""
  if [[ -z "$tree" || ! -f "$tree/pkgconfig/ascend_trace.pc" ]]; then
    echo "dev.sh env: no build tree at $1: build it first with 'bash scripts/dev.sh run'" >&2
    return 1
  fi
  local socket="${ATRACED_SOCKET:-}"
  if [[ -z "$socket" ]]; then
    socket=/run/atraced/atraced.sock
    if [[ "$(id -u)" != 0 && -n "${XDG_RUNTIME_DIR:-}" ]]; then socket="$XDG_RUNTIME_DIR/atraced.sock"; fi
  fi
  printf 'export PATH=%q\n' "$tree/daemon:$tree/client${PATH:+:$PATH}"
  printf 'export PKG_CONFIG_PATH=%q\n' "$tree/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  printf 'export LD_LIBRARY_PATH=%q\n' "$tree/client:$tree/client/ascend_trace${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  printf 'export ATRACED_SOCKET=%q\n' "$socket"
}

# Prints how long the stage that started at $1 took.
stage_done() {
  echo "== stage done in $(( $(date +%s) - $1 )) s"
}

# CI's first stage: the ASan + UBSan tree with the fuzzers and the benchmarks (no test runs
# them; they are built here so that they compile, warnings as errors), and the whole suite.
build_asan() {
  CC=clang CXX=clang++ build build/asan -DATRACED_SANITIZE=ON -DATRACED_FUZZ=ON -DATRACED_WERROR=ON \
    "${sanitizer_flags[@]}"
}
test_asan() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_tests build/asan
}

# The ASan + UBSan suite, ATRACED_BUSY_RUNS times (3), each while stress-ng spins one worker
# per CPU at the tests' own priority. Timing is the point: a test that asserts "within N ms"
# or sleeps to order two events fails here first. Stops at the first failing run.
busy_runs() {
  local runs="${ATRACED_BUSY_RUNS:-3}" run t load
  build_asan
  for ((run = 1; run <= runs; run++)); do
    # The bound only matters if this shell dies without its trap.
    stress-ng --cpu "$jobs" --timeout 3h --quiet &
    stress_pid=$!
    trap 'kill "$stress_pid" 2>/dev/null || true' EXIT
    t=$(date +%s)
    echo "== busy run $run of $runs: the ASan + UBSan suite with stress-ng --cpu $jobs"
    test_asan
    load=$(cut -d' ' -f1 /proc/loadavg)
    kill "$stress_pid"
    wait "$stress_pid" 2>/dev/null || true
    trap - EXIT
    echo "== busy run $run passed in $(( $(date +%s) - t )) s (load average $load)"
  done
  echo "== $runs busy runs in a row passed"
}

case "${1:-}" in
  deps)
    install_deps "${build_packages[@]}" "${test_packages[@]}"
    ;;
  run)
    install_deps "${build_packages[@]}"
    build build/run "${run_flags[@]}" -DATRACED_BUILD_TESTS=OFF -DATRACED_BUILD_BENCH=OFF -DATRACED_MAN=OFF \
      --target atraced atracectl ascend_trace atraced_client
    echo "== built build/run; for a shell that builds and runs programs against it: eval \"\$(bash scripts/dev.sh env)\""
    shift
    exec build/run/daemon/atraced "$@"
    ;;
  env)
    print_env "${ATRACED_BUILD:-build/run}"
    ;;
  test)
    install_deps "${build_packages[@]}" "${test_packages[@]}"
    if [[ "${2:-}" == --busy ]]; then
      busy_runs
      exit 0
    elif (($# > 1)); then
      echo "usage: scripts/dev.sh test [--busy]" >&2
      exit 2
    fi
    start=$(date +%s)
    echo "== the programs the suite runs, each from a declared package (tests/tools.txt)"
    python3 scripts/check_test_tools.py --list
    echo "== sanitizer build (ASan + UBSan, clang) with the fuzzers, warnings as errors"
    t=$(date +%s)
    build_asan
    test_asan
    stage_done "$t"
    echo "== fuzzing"
    t=$(date +%s)
    fuzz_all build/asan
    stage_done "$t"
    echo "== ThreadSanitizer (clang): the concurrent parts (sessions, the I/O workers, the ring unmapper, the daemon binary and its saves, the drop-in's lock-free ring, its device receivers, a live process's dump, the collective ledger's completion thread, libatrace_client's first calls from threads after dlopen and its fork)"
    t=$(date +%s)
    CC=clang CXX=clang++ build build/tsan -DATRACED_TSAN=ON -DATRACED_WERROR=ON "${sanitizer_flags[@]}" \
      --target io_tests rings_tests ipc_tests integration_tests atraced ascend_trace_tests hccl_ledger_tests client_dlopen_tests
    # Not the forked-child device case: TSan does not support a thread started in the child of
    # a multi-threaded fork (die_after_fork); that case runs in the ASan tree and the packages'.
    # The ledger's cases: ranks whose completion thread polls the acl double's events while
    # the calling thread appends, saved by the daemon. Not "ledger: concurrent writers": its
    # writers lap each other on one slot on purpose (the reader's torn check), plain stores
    # by design that TSan names as a race; it runs in the ASan tree and the packages'.
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_tests build/tsan \
      -R '^(io_tests|rings_tests|ipc_tests|integration_tests)[.]|^ascend_trace_tests[.](ring: 4 writers|ring claims: |e2e: |crash: |link: |device traces: |dump: )|^hccl_ledger_tests[.](hccl ledger: |ledger: )|^client_dlopen_tests[.]' \
      -E 'device traces: a forked child|ledger: concurrent writers'
    stage_done "$t"
    echo "== Debian packages with the whole suite in their build tree (g++ -O2 with Debian's flags, as shipped; warnings as errors), built from a copy under a 0700 directory; lintian, install, purge"
    t=$(date +%s)
    # It installs and purges the packages: root (or sudo), like install_deps.
    if [[ "$(id -u)" == 0 ]]; then
      ATRACED_TEST_JOBS="$test_jobs" bash tests/package/build_and_check.sh build/package
    else
      sudo ATRACED_TEST_JOBS="$test_jobs" bash tests/package/build_and_check.sh build/package
    fi
    stage_done "$t"
    echo "== all stages passed in $(( $(date +%s) - start )) s"
    ;;
  *)
    echo "usage: scripts/dev.sh run [ATRACED-ARGS]|env|test [--busy]|deps" >&2
    exit 2
    ;;
esac
