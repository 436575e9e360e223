#!/usr/bin/env bash
# scripts/check_test_tools.py against small trees of its own: a test that runs a program no
# package is named for fails the check, naming the program and where it runs; a package named
# but not declared fails it, naming the package and the list it is missing from; declared in
# both, or marked optional and installed by dev.sh, the check passes. Needs dpkg (any Debian).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v dpkg-query >/dev/null || { echo "skipped: needs dpkg-query (Debian's dpkg)"; exit 77; }
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tree/scripts" "$tree/tests/t" "$tree/debian"
cp "$src/scripts/check_test_tools.py" "$tree/scripts/"
printf '# x\n\n```sh\nls /\n```\n' >"$tree/README.md"
printf 'Source: x\nBuild-Depends: debhelper-compat (= 13),\n               cmake,\nStandards-Version: 4.6.2\n' >"$tree/debian/control"
printf 'build_packages=(\n  cmake\n)\ntest_packages=(\n  catch2\n)\n' >"$tree/scripts/dev.sh"
printf 'TEST_CASE("x") { REQUIRE(Run({"sometool", "-x", path}).exit_code == 0); }\n' >"$tree/tests/t/x_test.cc"
printf 'ls coreutils\n' >"$tree/tests/tools.txt"
check() { python3 "$tree/scripts/check_test_tools.py" 2>&1; }

# 1. A program the tests run that tools.txt does not name.
out=$(check) && fail "passed with an unmapped program: $out"
grep -q "tests/t/x_test.cc:1: runs 'sometool', which tests/tools.txt does not map to a package" <<<"$out" ||
  fail "did not name the unmapped program and its place: $out"

# 2. Named, but its package declared nowhere: both lists are named.
printf 'ls coreutils\nsometool some-package\n' >"$tree/tests/tools.txt"
out=$(check) && fail "passed with an undeclared package: $out"
grep -q "some-package is not in scripts/dev.sh's package lists" <<<"$out" || fail "dev.sh not named: $out"
grep -q "some-package is not in debian/control's Build-Depends" <<<"$out" || fail "Build-Depends not named: $out"

# 3. Declared in both (the tool is not installed here: that is said, too).
sed -i 's/^  catch2$/  catch2 some-package/' "$tree/scripts/dev.sh"
sed -i 's/^               cmake,$/               cmake,\n               some-package <!nocheck>,/' "$tree/debian/control"
out=$(check) && fail "passed though sometool is not installed: $out"
grep -q "sometool (some-package) is not installed here" <<<"$out" || fail "the missing tool not named: $out"
[[ $(grep -c 'is not in \(scripts\|debian\)' <<<"$out") == 0 ]] || fail "declared, still reported: $out"

# 4. A real program mapped to the wrong package: dpkg's word wins.
printf 'ls tar\n' >"$tree/tests/tools.txt"
printf 'TEST_CASE("x") {}\n' >"$tree/tests/t/x_test.cc"
out=$(check) && fail "passed with ls mapped to tar: $out"
grep -q "tests/tools.txt says ls comes from tar; dpkg says /usr/bin/ls is coreutils's" <<<"$out" ||
  grep -q "dpkg says /bin/ls is coreutils's" <<<"$out" || fail "the wrong mapping not caught: $out"

# 5. All mapped right: it passes and says how many.
printf 'ls coreutils\n' >"$tree/tests/tools.txt"
out=$(check) || fail "a right tree failed: $out"
grep -q "check_test_tools: 1 programs the suite runs, each from a declared package" <<<"$out" || fail "$out"
# 6. A script's calls of the functions of a script it sources are not programs; the programs
#    those functions run are checked where they are written.
printf 'helper() {\n  sometool -x\n}\n' >"$tree/tests/t/lib.sh"
printf 'here=.\nsource "$here/lib.sh"\nhelper\n' >"$tree/tests/t/main.sh"
out=$(check) && fail "passed with sometool unmapped in the sourced script: $out"
grep -q "tests/t/lib.sh:2: runs 'sometool'" <<<"$out" || fail "the sourced script's program not named: $out"
grep -q "runs 'helper'" <<<"$out" && fail "a sourced function was taken for a program: $out"
printf 'ls coreutils\nsometool some-package optional\n' >"$tree/tests/tools.txt"
out=$(check) || fail "a sourced function's tree failed: $out"
grep -q "runs 'helper'" <<<"$out" && fail "a sourced function was taken for a program: $out"
echo "check_test_tools: 6 cases passed"
