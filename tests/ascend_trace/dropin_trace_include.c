/* A CANN component's include form, as GE writes it (base/common/atrace): the public header
 * under trace/. Built by install_test.cc through pkg-config and find_package, strict C99.
 * Exit code 0 when the calls succeed against a daemon, 3 when the library is missing. */
#include <stddef.h>

#include "trace/atrace_pub.h"

int main(void) {
    TraHandle h;
    if (AtraceCreate == NULL) return 3; /* weak: NULL without the library */
    h = AtraceCreate(TRACER_TYPE_SCHEDULE, "ge_style");
    if (h < 0) return 1;
    if (AtraceSubmit(h, "GE: include trace/atrace_pub.h", 30) != TRACE_SUCCESS) return 2;
    AtraceDestroy(h);
    return 0;
}
