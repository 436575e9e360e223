/* One rank of a job, for libatrace_hccl's end-to-end tests: linked with libhccl (the double),
 * run with LD_PRELOAD=libatrace_hccl.so.
 *
 *   hccl_rank RANK SIZE CALLS [hold]
 *
 * Makes the communicator (HcclGetRootInfo, HcclCommInitRootInfo), then makes CALLS
 * AllReduces of 1024 * i fp16 elements (sum) on stream 0x5151, printing "enter i" before
 * and "done i" after each, then "finished". With "hold" it then waits to be killed; else it
 * destroys the communicator and returns from main. $HCCL_RANK_ACL_LIB, when set, is
 * dlopen'ed (RTLD_GLOBAL) first: the acl runtime of a process that has one. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hccl_types.h"

HcclResult HcclGetRootInfo(HcclRootInfo* info);
HcclResult HcclCommInitRootInfo(uint32_t n, const HcclRootInfo* info, uint32_t rank, HcclComm* comm);
HcclResult HcclAllReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c, aclrtStream st);
HcclResult HcclCommDestroy(HcclComm comm);

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  const char* acl = getenv("HCCL_RANK_ACL_LIB");
  if (acl != NULL && dlopen(acl, RTLD_NOW | RTLD_GLOBAL) == NULL) return 3;
  const uint32_t rank = (uint32_t)atoi(argv[1]), size = (uint32_t)atoi(argv[2]);
  const int calls = atoi(argv[3]);
  HcclRootInfo info;
  HcclComm comm = NULL;
  if (HcclGetRootInfo(&info) != 0 || HcclCommInitRootInfo(size, &info, rank, &comm) != 0) return 4;
  printf("init\n");
  for (int i = 1; i <= calls; ++i) {
    printf("enter %d\n", i);
    if (HcclAllReduce(NULL, NULL, 1024u * (uint64_t)i, 3 /* fp16 */, 0 /* sum */, comm, (aclrtStream)0x5151) != 0) {
      return 5;
    }
    printf("done %d\n", i);
  }
  printf("finished\n");
  if (argc > 4 && strcmp(argv[4], "hold") == 0) {
    for (;;) pause();
  }
  return HcclCommDestroy(comm) == 0 ? 0 : 6;
}
