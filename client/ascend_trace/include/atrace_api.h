/* CANN's toolchain-level atrace API (src/dfx/trace/inc/toolchain/atrace_api.h): the struct
 * entry helpers behind the TRACE_STRUCT_* macros, AtraceEventReport (which does not wait for
 * the files) and the device report thread calls. Same names, signatures and macros as CANN.
 *
 *   TRACE_STRUCT_DEFINE_ENTRY(en);              // a TraceStructEntry with an empty field list
 *   TRACE_STRUCT_DEFINE_ENTRY_NAME(en, "task");
 *   TRACE_STRUCT_DEFINE_FIELD_UINT32(en, id, TRACE_STRUCT_SHOW_MODE_HEX);
 *   TRACE_STRUCT_SET_ATTR(en, 0, &attr);        // buffer type 0 uses this layout
 *   h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "aicpu", &attr);  // copies the layout
 *   TRACE_STRUCT_UNDEFINE_ENTRY(en);
 */
#ifndef ATRACE_API_H
#define ATRACE_API_H

#include "atrace_pub.h"
#include "atrace_types.h"

#ifdef __cplusplus
extern "C" {
#endif

TRACE_EXPORT void *AtraceStructEntryListInit(void) __attribute((weak));
TRACE_EXPORT void AtraceStructEntryName(TraceStructEntry *entry, const char *name) __attribute((weak));
TRACE_EXPORT void AtraceStructItemSet(TraceStructEntry *entry, const char *name, uint8_t type, uint8_t mode,
                                      uint16_t length) __attribute((weak));
TRACE_EXPORT void AtraceStructEntryExit(TraceStructEntry *entry) __attribute((weak));

#define TRACE_STRUCT_INIT_ENTRY {.name = {0}, .list = AtraceStructEntryListInit()}
#define TRACE_STRUCT_DEFINE_ENTRY(en) TraceStructEntry en = TRACE_STRUCT_INIT_ENTRY
#define TRACE_STRUCT_UNDEFINE_ENTRY(en) AtraceStructEntryExit(&en)
#define TRACE_STRUCT_DEFINE_ENTRY_NAME(en, name) AtraceStructEntryName(&en, name)

/* Signed scalars are shown in decimal; unsigned ones take a show mode. */
#define TRACE_STRUCT_DEFINE_FIELD_INT8(en, item) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_INT8, TRACE_STRUCT_SHOW_MODE_DEC, 1)
#define TRACE_STRUCT_DEFINE_FIELD_INT16(en, item) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_INT16, TRACE_STRUCT_SHOW_MODE_DEC, 2)
#define TRACE_STRUCT_DEFINE_FIELD_INT32(en, item) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_INT32, TRACE_STRUCT_SHOW_MODE_DEC, 4)
#define TRACE_STRUCT_DEFINE_FIELD_INT64(en, item) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_INT64, TRACE_STRUCT_SHOW_MODE_DEC, 8)
#define TRACE_STRUCT_DEFINE_FIELD_UINT8(en, item, mode) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_UINT8, mode, 1)
#define TRACE_STRUCT_DEFINE_FIELD_UINT16(en, item, mode) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_UINT16, mode, 2)
#define TRACE_STRUCT_DEFINE_FIELD_UINT32(en, item, mode) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_UINT32, mode, 4)
#define TRACE_STRUCT_DEFINE_FIELD_UINT64(en, item, mode) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_UINT64, mode, 8)
/* CANN's version of this macro passes six arguments and cannot compile; this one is the
 * one-byte character field its name describes. */
#define TRACE_STRUCT_DEFINE_FIELD_CHAR(en, item) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_FIELD_TYPE_CHAR, TRACE_STRUCT_SHOW_MODE_CHAR, 1)

/* Arrays: `len` is the bytes the whole array occupies. */
#define TRACE_STRUCT_DEFINE_ARRAY_INT8(en, item, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_INT8, TRACE_STRUCT_SHOW_MODE_DEC, len)
#define TRACE_STRUCT_DEFINE_ARRAY_INT16(en, item, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_INT16, TRACE_STRUCT_SHOW_MODE_DEC, len)
#define TRACE_STRUCT_DEFINE_ARRAY_INT32(en, item, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_INT32, TRACE_STRUCT_SHOW_MODE_DEC, len)
#define TRACE_STRUCT_DEFINE_ARRAY_INT64(en, item, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_INT64, TRACE_STRUCT_SHOW_MODE_DEC, len)
#define TRACE_STRUCT_DEFINE_ARRAY_UINT8(en, item, mode, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_UINT8, mode, len)
#define TRACE_STRUCT_DEFINE_ARRAY_UINT16(en, item, mode, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_UINT16, mode, len)
#define TRACE_STRUCT_DEFINE_ARRAY_UINT32(en, item, mode, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_UINT32, mode, len)
#define TRACE_STRUCT_DEFINE_ARRAY_UINT64(en, item, mode, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_UINT64, mode, len)
#define TRACE_STRUCT_DEFINE_ARRAY_CHAR(en, item, len) \
    AtraceStructItemSet(&en, #item, TRACE_STRUCT_ARRAY_TYPE_CHAR, TRACE_STRUCT_SHOW_MODE_CHAR, len)

/* attr->handle[type] = &en for type < TRACE_STRUCT_ENTRY_MAX_NUM (CANN's expression). */
#define TRACE_STRUCT_SET_ATTR(en, type, attr) \
    (((type) < TRACE_STRUCT_ENTRY_MAX_NUM) ? (attr)->handle[type] = &(en) : NULL)

/* Device trace relay: not provided on an atraced host (device events reach the daemon
 * through forwarders); both return at once, Start with TRACE_UNSUPPORTED. */
TRACE_EXPORT TraStatus AtraceReportStart(int32_t devId) __attribute((weak));
TRACE_EXPORT void AtraceReportStop(int32_t devId) __attribute((weak));

/* Like AtraceEventReportSync, but returns once the daemon has taken the snapshot, without
 * waiting for the files (CANN's version waits anyway). */
TRACE_EXPORT TraStatus AtraceEventReport(TraEventHandle eventHandle) __attribute((weak));

#ifdef __cplusplus
}
#endif

#endif /* ATRACE_API_H */
