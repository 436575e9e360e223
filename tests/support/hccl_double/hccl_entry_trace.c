#define _GNU_SOURCE
#include "hccl_entry_trace.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atrace_types.h"

typedef TraHandle (*CreateFn)(TracerType, const char*, const TraceAttr*);
typedef TraStatus (*SubmitFn)(TraHandle, const void*, uint32_t);

static SubmitFn submit_fn;

enum { kPiece = 111 }; /* hccl_trace_info.cc's TRACE_MAX_MSG_SIZE */

static long Tid(void) { return syscall(SYS_gettid); }

/* HcclTraceInfo::SaveTraceInfo with AtraceOption::Opbasekey. */
static void Save(struct entry_trace* t, const char* text) {
  char record[2048];
  const int n = snprintf(record, sizeof record, "%ld_%llu_%s", Tid(), (unsigned long long)t->index, text);
  if (n < 0) return;
  const size_t total = (size_t)n < sizeof record ? (size_t)n : sizeof record - 1;
  for (size_t pos = 0; pos < total; pos += kPiece) {
    submit_fn(t->handle, record + pos, (uint32_t)(total - pos < kPiece ? total - pos : kPiece));
  }
  ++t->index;
}

static void Garbage(struct entry_trace* t) {
  static const char* const kBad[] = {
      "Entry-HcclAllReduceInner: no prefix",
      "99999999999_0_Entry-HcclAllReduceInner: tag[AllReduce_x], count[1], dataType[float16], op[sum]",
      "7_1_Entry-HcclAllReduceInner: tag[AllReduce_\x1b[31mred], count[notanumber], dataType[float16], op[sum]",
      "7_2_Entry-HcclAllReduceInner: tag[AllReduce_x], count[4], dataType[float99], op[sum]",
      "7_3_Entry-HcclAllReduceInner: tag[], count[4], dataType[float16], op[sum]",
  };
  for (size_t i = 0; i < sizeof kBad / sizeof kBad[0]; ++i) submit_fn(t->handle, kBad[i], (uint32_t)strlen(kBad[i]));
}

void EntryTraceOpen(struct entry_trace* t) {
  t->handle = 0;
  t->index = 0;
  const char* lib = getenv("ATRACE_HCCL_DOUBLE_TRACE_LIB");
  if (lib == NULL) return;
  void* h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  CreateFn create = h != NULL ? (CreateFn)dlsym(h, "AtraceCreateWithAttr") : NULL;
  submit_fn = h != NULL ? (SubmitFn)dlsym(h, "AtraceSubmit") : NULL;
  if (create == NULL || submit_fn == NULL) return;
  /* hccl_communicator.cc InitATraceInfo: "HCCL_<tid>_<deviceLogicId>"; adapter_trace.cc's
   * attributes: saved at exit, 1024 records of 112 bytes. */
  char name[64];
  snprintf(name, sizeof name, "HCCL_%ld_0", Tid());
  TraceAttr attr;
  memset(&attr, 0, sizeof attr);
  attr.exitSave = true;
  attr.msgNum = 1024;
  attr.msgSize = 112;
  const TraHandle handle = create(TRACER_TYPE_SCHEDULE, name, &attr);
  if (handle == TRACE_INVALID_HANDLE) return;
  t->handle = handle;
  const char* garbage = getenv("ATRACE_HCCL_DOUBLE_TRACE_GARBAGE");
  if (garbage != NULL && strcmp(garbage, "1") == 0) Garbage(t);
}

void EntryTraceAllReduce(struct entry_trace* t, const char* comm, uint32_t rank, uint64_t count) {
  if (t->handle == 0) return;
  /* op_base_host.cc HcclAllReduceInner's entry record. */
  char text[1024];
  snprintf(text, sizeof text,
           "Entry-HcclAllReduceInner: tag[AllReduce_%s], sendBuf[0x12c0c0000000], recvBuf[0x12c0c0400000], "
           "count[%llu], dataType[float16], op[sum], localRank[%u], streamId[3], comm[0x55d0c0a0], "
           "deviceLogicId[0], capture status[0], model id[4294967295].",
           comm, (unsigned long long)count, rank);
  Save(t, text);
}

void EntryTraceDone(struct entry_trace* t, const char* comm) {
  if (t->handle == 0) return;
  char text[512];
  snprintf(text, sizeof text, "HcclAllReduceInner:success,take time: 12 us,tag[AllReduce_%s]", comm);
  Save(t, text);
}
