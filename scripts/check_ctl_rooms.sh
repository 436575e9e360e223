#!/usr/bin/env bash
# Checks atracectl's rooms (client/atracectl/, client/CMakeLists.txt says what each holds):
#   1. every source sits in a room; a room includes headers only of itself and of the rooms
#      below it, always as "room/name.h" (no bare name, so the room is never implied);
#   2. the include graph has no cycle (tsort finds loops);
#   3. no source file is over 600 lines;
#   4. a verb (Run* in verbs/) over 60 lines is named as a warning: a verb is a short
#      function over named steps, and the line count is a hint, not the rule.
# Usage: scripts/check_ctl_rooms.sh [source dir]   (the `layout.atracectl_rooms` test runs it)
set -euo pipefail
src="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$src/client/atracectl"

# What each room may include besides itself (base, proto and the client library sit below all).
declare -A allowed=(
  [common]=""
  [files]="common"
  [daemon_talk]="common files"
  [timeline]="common files"
  [fleet]="common files"
  [host]="common"
  [journal]="common files fleet"
  [verbs]="common files daemon_talk timeline fleet journal host"
)
failed=0

while IFS= read -r file; do
  room="${file%%/*}"
  if [[ "$file" != */* || -z "${allowed[$room]+set}" ]]; then
    echo "client/atracectl/$file: not in a room (${!allowed[*]})" >&2
    failed=1
  fi
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | sort)

for room in "${!allowed[@]}"; do
  [[ -d "$room" ]] || { echo "room $room: no directory client/atracectl/$room" >&2; failed=1; continue; }
  while IFS=: read -r file _ inc; do
    name="$(sed -E 's|^#include "([^"]+)".*|\1|' <<<"$inc")"
    [[ "$name" == atraced/* ]] && continue  # base, proto, the client library
    target="${name%%/*}"
    if [[ "$name" != */* || -z "${allowed[$target]+set}" ]]; then
      echo "client/atracectl/$file: includes \"$name\": name a header by its room (\"room/name.h\")" >&2
      failed=1
    elif [[ "$target" != "$room" && " ${allowed[$room]} " != *" $target "* ]]; then
      echo "client/atracectl/$file: room $room includes from room $target, which is not below it: $name" >&2
      failed=1
    elif [[ ! -f "$name" ]]; then
      echo "client/atracectl/$file: includes \"$name\", which is not there" >&2
      failed=1
    fi
  done < <(grep -rnE '^#include "' "$room" || true)
done

edges="$(mktemp)"
trap 'rm -f "$edges" "$edges.err"' EXIT
while IFS= read -r file; do
  while IFS= read -r name; do
    [[ -f "$name" ]] && echo "$file $name" >>"$edges"
  done < <(sed -nE 's|^#include "([^"]+)".*|\1|p' "$file")
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | sort)
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
  echo "the include graph of client/atracectl has a cycle:" >&2
  cat "$edges.err" >&2
  failed=1
fi

while read -r lines file; do
  [[ "$file" == total ]] && continue
  if ((lines > 600)); then
    echo "client/atracectl/$file: $lines lines, over the 600 a file may have" >&2
    failed=1
  fi
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | xargs wc -l)

for file in verbs/*.cc; do
  awk -v f="$file" '/^int Run[A-Za-z]+\(/ { name = $2; sub(/\(.*/, "", name); start = NR }
    /^}/ && start { if (NR - start + 1 > 60) printf "warning: client/atracectl/%s: %s is %d lines (a verb is a short function over named steps)\n", f, name, NR - start + 1; start = 0 }' "$file"
done

if ((failed)); then exit 1; fi
echo "atracectl rooms: every source in a room, every include points down by its room's name, no cycle, every file within its size"
