/* HcclAllReduce through a stub libhccl (bench/hccl_stub.c), N calls in one thread after a
 * warm-up: run as it is, it times the call alone; with LD_PRELOAD=libatrace_hccl.so, the call
 * and its ledger record. scripts/hccl_ledger_bench.sh runs both and counts system calls.
 *
 *   atraced_hccl_ledger_bench N
 *
 * Prints "ns_per_call_wall W ns_per_call_cpu C" (CLOCK_MONOTONIC and thread CPU time over
 * the N calls). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hccl_types.h"

HcclResult HcclAllReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c, aclrtStream st);

static double Now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 2000000;
  HcclComm comm = (HcclComm)0x1000;
  for (long i = 0; i < 10000; ++i) HcclAllReduce(NULL, NULL, (uint64_t)i, 3, 0, comm, (aclrtStream)0x5151);
  const double wall = Now(CLOCK_MONOTONIC), cpu = Now(CLOCK_THREAD_CPUTIME_ID);
  for (long i = 0; i < n; ++i) HcclAllReduce(NULL, NULL, (uint64_t)i, 3, 0, comm, (aclrtStream)0x5151);
  const double wall_ns = Now(CLOCK_MONOTONIC) - wall, cpu_ns = Now(CLOCK_THREAD_CPUTIME_ID) - cpu;
  printf("ns_per_call_wall %.1f ns_per_call_cpu %.1f\n", n ? wall_ns / (double)n : 0.0, n ? cpu_ns / (double)n : 0.0);
  return 0;
}
