/* A CANN program in miniature, written against CANN's atrace API (atrace_pub.h) and run over
 * atraced through libascend_trace: it records a few lines in a schedule tracer, reports them
 * (atraced writes schedule_tracer_first_trace.txt), and with --crash then writes through a
 * null pointer, so that atraced writes the crash's stackcore directory with the same lines.
 * The README's "Your first trace" builds and runs it:
 *   cc -o first_trace first_trace.c $(pkg-config --cflags --libs ascend_trace)
 * Exit codes: 0 done, 1 a call failed, 3 libascend_trace is not loaded. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atrace_pub.h"

int main(int argc, char **argv) {
    const int crash = argc > 1 && strcmp(argv[1], "--crash") == 0;
    TraHandle tracer;
    TraEventHandle event;
    TraceEventAttr once;
    char line[64];
    int i;

    /* The API is declared weak: a link that dropped the library (a bare -lascend_trace under
     * -Wl,--as-needed) leaves every function NULL. pkg-config's flags keep it. */
    if (AtraceCreate == NULL) {
        fprintf(stderr, "first_trace: libascend_trace is not loaded: link with "
                        "$(pkg-config --libs ascend_trace)\n");
        return 3;
    }
    tracer = AtraceCreate(TRACER_TYPE_SCHEDULE, "first_trace");
    event = AtraceEventCreate("first_trace_event");
    if (tracer < 0 || event < 0) return 1;
    memset(&once, 0, sizeof once);
    once.limitedNum = 1;
    if (AtraceEventSetAttr(event, &once) != TRACE_SUCCESS) return 1;
    if (AtraceEventBindTrace(event, tracer) != TRACE_SUCCESS) return 1;
    for (i = 0; i < 3; ++i) {
        snprintf(line, sizeof line, "CqReport:devId=0,stmId=%d", i);
        if (AtraceSubmit(tracer, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 1;
    }
    printf("first_trace: pid %d recorded 3 lines\n", (int)getpid());
    if (crash) {
        volatile int *nowhere = NULL;
        fflush(stdout);
        *nowhere = 42; /* SIGSEGV: the drop-in's handler asks atraced for a crash report */
    }
    if (AtraceEventReportSync(event) != TRACE_SUCCESS) return 1;
    printf("first_trace: reported them to atraced\n");
    AtraceEventDestroy(event);
    AtraceDestroy(tracer);
    return 0;
}
