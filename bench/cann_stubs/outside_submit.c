/* What CANN's libascend_trace does outside the submit path, left out of the benchmark build:
 *  - the stack-trace dumper (stacktrace/), which would save the rings from a fatal signal:
 *    TraceDumperSetCallback accepts the callback and never calls it;
 *  - the library constructor and destructor (trace_core.c), here without the dumper, the
 *    signal handlers and the client of the device trace server (trace_client/), none of which
 *    AtraceCreate or AtraceSubmit touch. The order of the rest is trace_core.c's. */
#include <stdint.h>

#include "adiag_print.h"
#include "atrace_types.h"
#include "stacktrace_dumper.h"
#include "trace_attr.h"
#include "trace_event.h"
#include "trace_recorder.h"
#include "tracer_core.h"

TraStatus TraceDumperSetCallback(DumperCallback func, void *arg)
{
    (void)func;
    (void)arg;
    return TRACE_SUCCESS;
}

__attribute__((constructor)) static void CannBenchTraceInit(void)
{
    TraStatus ret = TraceAttrInit();
    ADIAG_CHK_EXPR_ACTION(ret != TRACE_SUCCESS, return, "init attr failed, ret=%d.", ret);
    if (!AtraceCheckSupported()) {
        return;
    }
    ret = TraceRecorderInit();
    ADIAG_CHK_EXPR_ACTION(ret != TRACE_SUCCESS, return, "init recorder failed, ret=%d.", ret);
    ret = TraceEventInit();
    ADIAG_CHK_EXPR_ACTION(ret != TRACE_SUCCESS, return, "init event failed, ret=%d.", ret);
    ret = TracerInit();
    ADIAG_CHK_EXPR_ACTION(ret != TRACE_SUCCESS, return, "init tracer failed, ret=%d.", ret);
}

__attribute__((destructor)) static void CannBenchTraceExit(void)
{
    if (AtraceCheckSupported()) {
        TracerExit();
        TraceEventExit();
        TraceRecorderExit();
    }
    TraceAttrExit();
}
