#!/usr/bin/env bash
# Checks the daemon's rooms (daemon/CMakeLists.txt, docs/ARCHITECTURE.md):
#   1. a room includes headers only of itself and of the rooms below it;
#   2. the include graph of daemon/ has no cycle (tsort finds loops);
#   3. warns (does not fail) for a source file of daemon/ over 600 lines: concepts, not a
#      line count, decide where code goes; a long file is a hint to look for two concerns;
#   4. the tests of a room sit in tests/<room>/: every test source there reaches a header of
#      its room (directly or through a fixture header of tests/) and none of a room above it.
#      The suites outside the rooms' directories (proto, client, ascend_trace, integration,
#      hardening) see only the rooms tests/CMakeLists.txt links them to.
# Usage: scripts/check_rooms.sh [source dir]   (the `layout.rooms` test runs it)
set -euo pipefail
src="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"  # absolute: the checks cd between rooms
cd "$src/daemon"

# What each room may include besides itself (base and proto sit below every room).
declare -A allowed=(
  [common]=""
  [store]="common"
  [rings]="common store"
  [processes]="common store"
  [admission]="common"
  [io]="common"
  [service]="common store rings processes admission io"
  [crash]="common store processes"
  [ipc]="common store rings processes admission io service"
  [app]="common store rings processes admission io service ipc crash"
)
rooms=" ${!allowed[*]} "
failed=0

for room in "${!allowed[@]}"; do
  [[ -d "$room" ]] || { echo "room $room: no directory daemon/$room" >&2; failed=1; continue; }
  while IFS=: read -r file _ inc; do
    target="$(sed -E 's|.*"atraced/([a-z_]+)/.*|\1|' <<<"$inc")"
    [[ "$rooms" == *" $target "* ]] || continue  # base, proto, the client library: below every room
    [[ "$target" == "$room" || " ${allowed[$room]} " == *" $target "* ]] && continue
    echo "$file: room $room includes from room $target, which is not below it: $inc" >&2
    failed=1
  done < <(grep -rnE '^#include "atraced/' "$room" || true)
done

# Every quoted include, resolved to a file, as an edge for tsort.
resolve() {  # $1 including file, $2 included name
  local dir name="$2"
  dir="$(dirname "$1")"
  if [[ "$name" == atraced/* ]]; then
    local room="${name#atraced/}"
    room="${room%%/*}"
    [[ -f "$room/include/$name" ]] && echo "$room/include/$name"
  elif [[ -f "$dir/$name" ]]; then
    echo "$dir/$name"
  fi
  return 0
}
edges="$(mktemp)"
trap 'rm -f "$edges"' EXIT
while IFS= read -r file; do
  while IFS= read -r name; do
    to="$(resolve "$file" "$name")"
    [[ -n "$to" ]] && echo "$file $to" >>"$edges"
  done < <(sed -nE 's|^#include "([^"]+)".*|\1|p' "$file")
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | sort)
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
  echo "the include graph has a cycle:" >&2
  cat "$edges.err" >&2
  failed=1
fi
rm -f "$edges.err"

while read -r lines file; do
  [[ "$file" == total ]] && continue
  if ((lines > 600)); then
    echo "warning: $file: $lines lines, over 600: does it hold two concerns?" >&2
  fi
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | xargs wc -l)

# The rooms a test source of tests/ reaches: its own "atraced/<room>/" includes and those of
# the test headers it includes ("dir/name.h" from tests/, or a name beside it), recursively.
declare -A seen
rooms_of() {  # $1 file, relative to tests/
  [[ -n "${seen[$1]:-}" ]] && return 0
  seen[$1]=1
  local name
  while IFS= read -r name; do
    if [[ "$name" == atraced/* ]]; then
      name="${name#atraced/}"
      echo "${name%%/*}"
    elif [[ -f "$(dirname "$1")/$name" ]]; then
      rooms_of "$(dirname "$1")/$name"
    elif [[ -f "$name" ]]; then
      rooms_of "$name"
    fi
  done < <(sed -nE 's|^#include "([^"]+)".*|\1|p' "$1")
}
cd "$src/tests"
for room in "${!allowed[@]}"; do
  [[ -d "$room" ]] || continue
  while IFS= read -r file; do
    reached=""
    for target in $(rooms_of "$file" | sort -u); do
      [[ "$rooms" == *" $target "* ]] && reached+="${reached:+ }$target"  # not base, proto
    done
    [[ " $reached " == *" $room "* ]] ||
      { echo "tests/$file: reaches no header of room $room (only of: ${reached:-none}); it belongs in the tests of the room it tests" >&2; failed=1; }
    for target in $reached; do
      [[ "$target" == "$room" || " ${allowed[$room]} " == *" $target "* ]] && continue
      echo "tests/$file: a test of room $room reaches room $target, which is not below it" >&2
      failed=1
    done
  done < <(find "$room" -name '*.cc' | sort)
done

if ((failed)); then exit 1; fi
echo "rooms: every include points down, no cycle, every test in its room"
