/* Types and constants of CANN's atrace API, as libascend_trace (atraced's drop-in) provides
 * them. Names, values and struct layouts are CANN's (pkg_inc/trace/atrace_types.h), so code
 * written against CANN's headers builds against these unchanged; tests/ascend_trace checks
 * the sizes and offsets. C99 and C++. */
#ifndef ATRACE_TYPES_H
#define ATRACE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef int32_t TraStatus;
typedef intptr_t TraHandle;      /* a tracer object; not a pointer in this library */
typedef intptr_t TraEventHandle; /* an event; not a pointer in this library */

#define TRACE_EXPORT __attribute__((visibility("default")))

/* TraStatus values. */
#define TRACE_SUCCESS 0
#define TRACE_FAILURE (-1)
#define TRACE_INVALID_PARAM (-2)
#define TRACE_INVALID_PTR (-3)
#define TRACE_INVALID_DATA (-4)
#define TRACE_UNSUPPORTED (-5)

/* Handle values meaning "no handle". */
#define TRACE_INVALID_HANDLE (-1)
#define TRACE_UNSUPPORTED_HANDLE (-2)

/* TraceAttr defaults (used when msgNum or msgSize is 0). */
#define DEFAULT_ATRACE_MSG_NUM 1024U
#define DEFAULT_ATRACE_MSG_SIZE 112U

/* Struct entry field types: scalars... */
#define TRACE_STRUCT_FIELD_TYPE_CHAR 0
#define TRACE_STRUCT_FIELD_TYPE_INT8 1
#define TRACE_STRUCT_FIELD_TYPE_UINT8 2
#define TRACE_STRUCT_FIELD_TYPE_INT16 3
#define TRACE_STRUCT_FIELD_TYPE_UINT16 4
#define TRACE_STRUCT_FIELD_TYPE_INT32 5
#define TRACE_STRUCT_FIELD_TYPE_UINT32 6
#define TRACE_STRUCT_FIELD_TYPE_INT64 7
#define TRACE_STRUCT_FIELD_TYPE_UINT64 8
/* ...and arrays. */
#define TRACE_STRUCT_ARRAY_TYPE_CHAR 100
#define TRACE_STRUCT_ARRAY_TYPE_INT8 101
#define TRACE_STRUCT_ARRAY_TYPE_UINT8 102
#define TRACE_STRUCT_ARRAY_TYPE_INT16 103
#define TRACE_STRUCT_ARRAY_TYPE_UINT16 104
#define TRACE_STRUCT_ARRAY_TYPE_INT32 105
#define TRACE_STRUCT_ARRAY_TYPE_UINT32 106
#define TRACE_STRUCT_ARRAY_TYPE_INT64 107
#define TRACE_STRUCT_ARRAY_TYPE_UINT64 108

/* How a parser (CANN's asys) shows a field. */
#define TRACE_STRUCT_SHOW_MODE_DEC 0
#define TRACE_STRUCT_SHOW_MODE_BIN 1
#define TRACE_STRUCT_SHOW_MODE_HEX 2
#define TRACE_STRUCT_SHOW_MODE_CHAR 3

/* Event processing kinds (declared by CANN, unused by its API and by this library). */
#define TRACE_EVENT_PROCESS_SYNC 0U
#define TRACE_EVENT_PROCESS_ASYNC 1U
#define TRACE_EVENT_PROCESS_ASYNC_DEDUPLICATION 2U

#define TRACE_NAME_LENGTH 32U          /* names are shorter than this */
#define TRACE_STRUCT_ENTRY_MAX_NUM 10U /* buffer types 0..9 */

/* TraceAttr.noLock values. */
#define TRACE_LOCK_BASED 0U
#define TRACE_LOCK_FREE 1U

typedef enum TracerType {
    TRACER_TYPE_SCHEDULE = 0, /* the only tracer with objects */
    TRACER_TYPE_PROGRESS = 1,
    TRACER_TYPE_STATISTICS = 2,
    TRACER_TYPE_MAX,
} TracerType;

/* A record layout for binary (.bin) objects. `list` is owned by the library. */
typedef struct TraceStructEntry {
    char name[TRACE_NAME_LENGTH];
    void *list;
} TraceStructEntry;

typedef struct TraceAttr {
    bool exitSave;    /* save this object at normal process exit, even if destroyed before */
    uint16_t msgNum;  /* records kept: 1..1024 (rounded up to a power of two), 0 = 1024 */
    uint16_t msgSize; /* bytes per record: 64..1024, 0 = 112; (msgSize + 16) * msgNum <= 128 KiB */
    TraceStructEntry *handle[TRACE_STRUCT_ENTRY_MAX_NUM]; /* struct entry per buffer type */
    uint8_t noLock;   /* TRACE_LOCK_FREE: the caller promises a single writer */
    uint8_t reserve[31];
} TraceAttr;

typedef struct TraceEventAttr {
    uint16_t limitedNum; /* reports after which further reports are ignored; 0 = unlimited */
    uint8_t reserve[30];
} TraceEventAttr;

typedef struct TraceGlobalAttr {
    uint8_t saveMode; /* device-side libraries only; stored and otherwise ignored on a host */
    uint8_t deviceId;
    uint32_t pid;
    uint8_t reserve[32];
} TraceGlobalAttr;

#endif /* ATRACE_TYPES_H */
