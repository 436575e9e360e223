/* An application written against CANN's atrace headers only (installed copies), in strict
 * C99: create, bind, submit, report synchronously, destroy. Exit codes: 0 success, 3 the
 * library is not loaded (a weak symbol is NULL, as after a bad --as-needed link), 1 a call
 * failed. tests/ascend_trace/install/install_test.cc builds and runs it. */
#include <stdio.h>
#include <string.h>

#include "atrace_api.h"
#include "atrace_pub.h"

int main(void) {
    TraceAttr attr;
    TraHandle h;
    TraEventHandle ev;
    TraceEventAttr event_attr;
    int i;
    char line[64];

    if (AtraceCreateWithAttr == NULL || AtraceSubmit == NULL) {
        fprintf(stderr, "libascend_trace is not loaded\n");
        return 3;
    }
    memset(&attr, 0, sizeof attr);
    attr.exitSave = true;
    h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "c_app", &attr);
    ev = AtraceEventCreate("c_event");
    if (h < 0 || ev < 0) return 1;
    memset(&event_attr, 0, sizeof event_attr);
    event_attr.limitedNum = 1;
    if (AtraceEventSetAttr(ev, &event_attr) != TRACE_SUCCESS) return 1;
    if (AtraceEventBindTrace(ev, h) != TRACE_SUCCESS) return 1;
    for (i = 0; i < 3; ++i) {
        snprintf(line, sizeof line, "CqReport:devId=0,stmId=%d", i);
        if (AtraceSubmit(h, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 1;
    }
    if (AtraceEventReportSync(ev) != TRACE_SUCCESS) return 1;
    AtraceEventDestroy(ev);
    AtraceDestroy(h);
    printf("ok\n");
    return 0;
}
