/* HCCL's own atrace records, as the double's communicators write them when a test asks
 * ($ATRACE_HCCL_DOUBLE_TRACE_LIB): what hcomm's HcclTraceInfo does (hccl_trace_info.cc,
 * hccl_communicator.cc InitATraceInfo, op_base_host.cc HcclAllReduceInner), through the
 * libascend_trace drop-in's C API, dlopen'ed by path as HCCL dlopens libascend_trace.so:
 *   - one schedule tracer per communicator, "HCCL_<tid>_<device>";
 *   - each record "<tid>_<index>_<text>", cut into pieces of 111 bytes, one AtraceSubmit
 *     each; <index> counts the communicator's records;
 *   - per AllReduce an entry record before the call and a success record after it.
 * $ATRACE_HCCL_DOUBLE_TRACE_GARBAGE=1 also submits, before the first entry, records that do
 * not read: a hostile process's own ring. */
#ifndef ATRACE_TESTS_HCCL_ENTRY_TRACE_H_
#define ATRACE_TESTS_HCCL_ENTRY_TRACE_H_

#include <stdint.h>

struct entry_trace {
  intptr_t handle; /* 0: not tracing */
  uint64_t index;
};

/* Opens the communicator's tracer when $ATRACE_HCCL_DOUBLE_TRACE_LIB names the library. */
void EntryTraceOpen(struct entry_trace* t);
/* The entry record of an AllReduce of `count` fp16 elements (sum) in communicator `comm`. */
void EntryTraceAllReduce(struct entry_trace* t, const char* comm, uint32_t rank, uint64_t count);
/* Its success record. */
void EntryTraceDone(struct entry_trace* t, const char* comm);

#endif
