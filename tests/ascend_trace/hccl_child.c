/* HCCL's pattern, for cann_parity_test.cc: every communicator of a thread is an exitSave
 * object named HCCL_<tid>_<devLogicId>, so two communicators in one thread share a name.
 *
 *   hccl_child
 *
 * Creates the world communicator's object, then a sub-group's of the same name, submits one
 * record to each ("world" and "sub-group"), destroys the sub-group's, submits "world again"
 * and returns from main: the library's GOODBYE has the daemon write the exit dir, in which
 * CANN keeps the live object. Exit code 0, or 10 when a call failed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atrace_pub.h"

int main(void) {
    TraceAttr attr;
    char name[32];
    TraHandle world, sub;
    memset(&attr, 0, sizeof attr);
    attr.exitSave = true;
    snprintf(name, sizeof name, "HCCL_%d_0", (int)getpid());
    world = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, name, &attr);
    sub = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, name, &attr);
    if (world < 0 || sub < 0) return 10;
    if (AtraceSubmit(world, "world", 5) != TRACE_SUCCESS) return 10;
    if (AtraceSubmit(sub, "sub-group", 9) != TRACE_SUCCESS) return 10;
    AtraceDestroy(sub);
    if (AtraceSubmit(world, "world again", 11) != TRACE_SUCCESS) return 10;
    return 0;
}
