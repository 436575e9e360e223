#!/usr/bin/env bash
# Runs README.md's "Your first trace" as a reader would paste it: the fenced sh blocks under
# that heading, in order, in one shell, from the source tree. Then checks what the reader is
# told to look for: the program's report, its crash found by `atracectl list` and `info`, and
# the exported timeline.
#   run_first_trace.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"
if [[ "$(id -u)" != 0 ]]; then
  echo "SKIP: the walkthrough runs as root" >&2
  exit 0
fi

scratch="$(mktemp -d /tmp/atraced-readme.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

# The blocks: from the "## Your first trace" heading to the next "## " heading.
awk '
  /^## / { inside = ($0 ~ /^## Your first trace/) }
  inside && /^```/ { if (fenced) { fenced = 0; next } if ($0 == "```sh") { fenced = 1; next } }
  inside && fenced { print }
' "$src/README.md" >"$scratch/walkthrough.sh"
blocks="$(awk '/^## /{inside=($0 ~ /^## Your first trace/)} inside && $0=="```sh"{n++} END{print n+0}' "$src/README.md")"
echo "== README.md, Your first trace: $blocks sh blocks"
cat "$scratch/walkthrough.sh"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
((blocks >= 4)) || fail "expected the walkthrough's sh blocks under '## Your first trace', found $blocks"
for step in "atracectl list" "atracectl info" "atracectl export" "pkg-config" "examples/"; do
  grep -q -- "$step" "$scratch/walkthrough.sh" || fail "the walkthrough has no '$step'"
done

# Its own temporary directory (mktemp honours TMPDIR) and this build tree. Whatever the
# blocks leave running (the daemon, if a block fails before the one that stops it) is
# stopped when the shell ends.
mkdir "$scratch/tmp"
set +e
(
  cd "$src"
  export TMPDIR="$scratch/tmp" ATRACED_BUILD="$build"
  unset ATRACED_SOCKET ASCEND_WORK_PATH
  bash -c 'set -euo pipefail; trap '\''kill $(jobs -p) 2>/dev/null || true'\'' EXIT; source "$0"' \
    "$scratch/walkthrough.sh"
) >"$scratch/out" 2>&1
code=$?
set -e
echo "== its output (exit code $code)"
cat "$scratch/out"
((code == 0)) || fail "the walkthrough exited with $code"

out="$(cat "$scratch/out")"
grep -q "first_trace: reported them to atraced" <<<"$out" || fail "the program's report did not succeed"
grep -Eq "first_trace died" <<<"$out" || fail "the crashing run did not die"
grep -q "stackcore" <<<"$out" || fail "neither list nor info showed a stackcore directory"
grep -q "SIGSEGV" <<<"$out" || fail "info did not name the signal"
grep -q "Fault address" <<<"$out" || fail "info did not show the crash report"
timeline="$(find "$scratch/tmp" -name timeline.json -print -quit)"
[[ -n "$timeline" ]] || fail "no timeline.json was exported"
grep -q '"traceEvents"' "$timeline" || fail "$timeline is not a Trace Event Format file"
grep -q 'stmId=2' "$timeline" || fail "$timeline does not hold the recorded lines"
echo "PASS"
