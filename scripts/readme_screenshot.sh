#!/usr/bin/env bash
# The README's screenshot of the timeline page (docs/timeline.png): three CANN-API ranks of a
# small job on one daemon, one that reports and exits, one that crashes (SIGSEGV) and one
# SIGKILLed while it works, exported with `atracectl export --format html` and drawn by
# headless Chromium. Not run by CI (the picture is checked in); the page's behaviour is
# tested in tests/client (the Chromium state tests).
#   bash scripts/readme_screenshot.sh [BUILD_DIR] [OUT.png]   (default build/rel, docs/timeline.png)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build/rel}" && pwd)"
out="${2:-$here/docs/timeline.png}"
scratch="$(mktemp -d)"
daemon=""
cleanup() { [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
cat >"$scratch/rank.c" <<'C'
/* One rank: a runtime and an HCCL tracer, a record every 2 ms; then by argv[1]: "exit"
 * reports and exits, "crash" writes through a null pointer, "hang" waits to be killed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "atrace_pub.h"
int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "exit";
    TraHandle rt = AtraceCreate(TRACER_TYPE_SCHEDULE, "runtime");
    TraHandle hccl = AtraceCreate(TRACER_TYPE_SCHEDULE, "hccl");
    TraEventHandle ev = AtraceEventCreate("rank_event");
    char line[96];
    AtraceEventBindTrace(ev, rt);
    AtraceEventBindTrace(ev, hccl);
    for (int i = 0; i < 400; ++i) {
        snprintf(line, sizeof line, "CqReport:devId=0,stmId=%d,taskId=%d", i % 8, i);
        AtraceSubmit(rt, line, (uint32_t)strlen(line));
        if (i % 10 == 0) {
            snprintf(line, sizeof line, "HcclAllReduce:tag=step_%d,count=4096,dataType=fp16", i / 10);
            AtraceSubmit(hccl, line, (uint32_t)strlen(line));
        }
        usleep(2000);
    }
    if (strcmp(how, "crash") == 0) { volatile int *p = NULL; *p = 1; }
    if (strcmp(how, "hang") == 0) { puts("hang"); fflush(stdout); pause(); }
    AtraceEventReportSync(ev);
    return 0;
}
C
cc -std=c11 -o "$scratch/rank" "$scratch/rank.c" -I"$here/client/ascend_trace/include" \
  -L"$build/client/ascend_trace" -Wl,--no-as-needed -lascend_trace -Wl,-rpath,"$build/client/ascend_trace"
"$build/daemon/atraced" --root "$scratch" --socket "$scratch/s.sock" --log-level warning & daemon=$!
export ATRACED_SOCKET="$scratch/s.sock"
while ! "$build/client/atracectl" status >/dev/null 2>&1; do sleep 0.1; done
"$scratch/rank" exit & ranks=($!)
"$scratch/rank" crash 2>/dev/null & ranks+=($!)
"$scratch/rank" hang >"$scratch/hang.out" & ranks+=($!)
until grep -q hang "$scratch/hang.out"; do sleep 0.1; done
kill -9 "${ranks[2]}"
for r in "${ranks[@]}"; do wait "$r" || true; done
sleep 1  # the daemon writes the killed rank's records as it sees its death
"$build/client/atracectl" export --format html -o "$scratch/page.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,720 \
  --virtual-time-budget=5000 --screenshot="$out" "file://$scratch/page.html" 2>/dev/null
echo "wrote $out"
