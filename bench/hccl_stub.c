/* A libhccl.so whose functions return at once, for bench/hccl_ledger_bench.c: the cost of a
 * collective's call through it is the call, so the interposer's cost shows beside it. The
 * signatures are HCCL's public ones (client/atrace_hccl/src/hccl_types.h). */
#include <stdio.h>

#include "hccl_types.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT HcclResult HcclAllReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c,
                                aclrtStream st) {
  (void)s, (void)r, (void)n, (void)t, (void)o, (void)c, (void)st;
  __asm__ volatile("" ::: "memory"); /* a call the compiler keeps */
  return 0;
}
EXPORT HcclResult HcclGetCommName(HcclComm c, char* name) {
  (void)c;
  snprintf(name, ATRACE_HCCL_COMM_NAME_MAX, "bench_world_group");
  return 0;
}
EXPORT HcclResult HcclGetRankId(HcclComm c, uint32_t* rank) {
  (void)c;
  *rank = 0;
  return 0;
}
EXPORT HcclResult HcclGetRankSize(HcclComm c, uint32_t* size) {
  (void)c;
  *size = 8;
  return 0;
}
