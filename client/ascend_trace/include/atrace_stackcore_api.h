/* CANN's stack-dump parser (src/dfx/trace/inc/toolchain/atrace_stackcore_api.h): the call
 * CANN's asys makes on the .bin an on-demand stack dump left (asys collect -r=stacktrace
 * queues signal 35 with 0xAABB0003 and waits for
 * stackcore_event_{pid}_{time}/stackcore_tracer_35_{pid}_{program}_{time}.bin).
 *
 * AtraceStackcoreParse(path, strlen(path)) writes the stack report beside the file, with
 * .txt for .bin: CANN's [process], [stack] and [maps] sections, which asys analyze
 * symbolizes. atraced writes that .txt with the .bin already; the call then checks it and
 * returns TRACE_SUCCESS, and writes it again where it is missing. TRACE_INVALID_PARAM for a
 * null or mis-sized path or one not ending in .bin; TRACE_FAILURE, with one line on stderr
 * saying why, for a file that is not an atraced stack dump or a .txt that cannot be written.
 * The .bin's layout is docs/ASCEND_TRACE.md's. */
#ifndef ATRACE_STACKCORE_API_H
#define ATRACE_STACKCORE_API_H

#include "atrace_types.h"

#ifdef __cplusplus
extern "C" {
#endif

TRACE_EXPORT TraStatus AtraceStackcoreParse(const char *filePath, uint32_t len) __attribute((weak));

#ifdef __cplusplus
}
#endif

#endif
