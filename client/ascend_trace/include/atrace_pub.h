/* CANN's public atrace API (pkg_inc/trace/atrace_pub.h), implemented by libascend_trace on
 * top of atraced. Every function is declared weak, as in CANN, so that a caller can test
 * `if (AtraceCreate != NULL)` when the library may be absent. Link with
 * `pkg-config --libs ascend_trace` or the CMake target AscendTrace::ascend_trace: both keep
 * the library on the link line even with -Wl,--as-needed (docs/ASCEND_TRACE.md says why). */
#ifndef ATRACE_PUB_H
#define ATRACE_PUB_H

#include "atrace_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tracer objects. Create returns TRACE_INVALID_HANDLE on any error. */
TRACE_EXPORT TraHandle AtraceCreate(TracerType tracerType, const char *objName) __attribute((weak));
TRACE_EXPORT TraHandle AtraceCreateWithAttr(TracerType tracerType, const char *objName, const TraceAttr *attr)
    __attribute((weak));
TRACE_EXPORT TraHandle AtraceGetHandle(TracerType tracerType, const char *objName) __attribute((weak));
/* Hot path: no system call, no lock. Records longer than msgSize are truncated. */
TRACE_EXPORT TraStatus AtraceSubmit(TraHandle handle, const void *buffer, uint32_t bufSize) __attribute((weak));
TRACE_EXPORT void AtraceDestroy(TraHandle handle) __attribute((weak));
/* Saves every live object of this process; waits for the files when syncFlag is true. */
TRACE_EXPORT TraStatus AtraceSave(TracerType tracerType, bool syncFlag) __attribute((weak));
TRACE_EXPORT TraStatus AtraceSubmitByType(TraHandle handle, uint8_t bufferType, const void *buffer, uint32_t bufSize)
    __attribute((weak));

/* Struct entries describe the records of binary objects. */
TRACE_EXPORT TraceStructEntry *AtraceStructEntryCreate(const char *name) __attribute((weak));
TRACE_EXPORT void AtraceStructEntryDestroy(TraceStructEntry *en) __attribute((weak));
TRACE_EXPORT void AtraceStructItemFieldSet(TraceStructEntry *en, const char *item, uint8_t type, uint8_t mode,
                                           uint16_t len) __attribute((weak));
TRACE_EXPORT void AtraceStructItemArraySet(TraceStructEntry *en, const char *item, uint8_t type, uint8_t mode,
                                           uint16_t len) __attribute((weak));
TRACE_EXPORT void AtraceStructSetAttr(TraceStructEntry *en, uint8_t type, TraceAttr *attr) __attribute((weak));

/* Events: a report saves the bound objects (at most 5 per event, 64 events per object). */
TRACE_EXPORT TraEventHandle AtraceEventCreate(const char *eventName) __attribute((weak));
TRACE_EXPORT TraEventHandle AtraceEventGetHandle(const char *eventName) __attribute((weak));
TRACE_EXPORT void AtraceEventDestroy(TraEventHandle eventHandle) __attribute((weak));
TRACE_EXPORT TraStatus AtraceEventBindTrace(TraEventHandle eventHandle, TraHandle handle) __attribute((weak));
TRACE_EXPORT TraStatus AtraceEventSetAttr(TraEventHandle eventHandle, const TraceEventAttr *attr) __attribute((weak));
/* Returns once the daemon has written the files. */
TRACE_EXPORT TraStatus AtraceEventReportSync(TraEventHandle eventHandle) __attribute((weak));

TRACE_EXPORT TraStatus AtraceSetGlobalAttr(const TraceGlobalAttr *attr) __attribute((weak));

#ifdef __cplusplus
}
#endif

#endif /* ATRACE_PUB_H */
