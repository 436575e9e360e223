/* One rank of a job, for libatrace_hccl's end-to-end tests: linked with libhccl (the double),
 * run with LD_PRELOAD=libatrace_hccl.so.
 *
 *   hccl_rank RANK SIZE CALLS [hold]
 *
 * Makes the communicator (HcclGetRootInfo, HcclCommInitRootInfo), then makes CALLS
 * AllReduces of 1024 * i fp16 elements (sum) on stream 0x5151, printing "enter i" before
 * and "done i" after each, then "finished". With "hold" it then waits to be killed; else it
 * destroys the communicator and returns from main. $HCCL_RANK_ACL_LIB, when set, is
 * dlopen'ed (RTLD_GLOBAL) first: the acl runtime of a process that has one.
 *
 * Divergences a test asks for:
 *   HCCL_RANK_COUNT_AT=I:N    AllReduce #i is made with N elements (a rank whose parameters
 *                             differ from its peers' at the same call);
 *   HCCL_RANK_PAIR=R:SKIP     a second communicator, a pair (size 2, this process its rank R):
 *                             before each AllReduce #i of the world, one AllReduce #i of 512 * i
 *                             elements in the pair ("pair enter i", "pair done i"), but for
 *                             i == SKIP, which this rank leaves out. The world is then made
 *                             with HcclCommInitClusterInfo (the double's hccl_world_group of
 *                             $RANK_SIZE ranks), the pair with HcclGetRootInfo (named by the
 *                             double's $ATRACE_HCCL_DOUBLE_COMM). */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hccl_types.h"

HcclResult HcclGetRootInfo(HcclRootInfo* info);
HcclResult HcclCommInitRootInfo(uint32_t n, const HcclRootInfo* info, uint32_t rank, HcclComm* comm);
HcclResult HcclCommInitClusterInfo(const char* cluster_info, uint32_t rank, HcclComm* comm);
HcclResult HcclAllReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c, aclrtStream st);
HcclResult HcclCommDestroy(HcclComm comm);

static int AllReduce(HcclComm comm, uint64_t count) {
  return HcclAllReduce(NULL, NULL, count, 3 /* fp16 */, 0 /* sum */, comm, (aclrtStream)0x5151);
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  const char* acl = getenv("HCCL_RANK_ACL_LIB");
  if (acl != NULL && dlopen(acl, RTLD_NOW | RTLD_GLOBAL) == NULL) return 3;
  const uint32_t rank = (uint32_t)atoi(argv[1]), size = (uint32_t)atoi(argv[2]);
  const int calls = atoi(argv[3]);
  int odd_call = 0;
  uint64_t odd_count = 0;
  const char* count_at = getenv("HCCL_RANK_COUNT_AT");
  if (count_at != NULL && sscanf(count_at, "%d:%" SCNu64, &odd_call, &odd_count) != 2) return 2;
  int pair_rank = -1, pair_skip = 0;
  const char* pair = getenv("HCCL_RANK_PAIR");
  if (pair != NULL && (sscanf(pair, "%d:%d", &pair_rank, &pair_skip) != 2 || pair_rank < 0 || pair_rank > 1)) return 2;
  HcclRootInfo info;
  HcclComm comm = NULL, pair_comm = NULL;
  if (pair_rank < 0) {
    if (HcclGetRootInfo(&info) != 0 || HcclCommInitRootInfo(size, &info, rank, &comm) != 0) return 4;
  } else if (HcclCommInitClusterInfo(NULL, rank, &comm) != 0 || HcclGetRootInfo(&info) != 0 ||
             HcclCommInitRootInfo(2, &info, (uint32_t)pair_rank, &pair_comm) != 0) {
    return 4;
  }
  printf("init\n");
  for (int i = 1; i <= calls; ++i) {
    if (pair_comm != NULL && i != pair_skip) {
      printf("pair enter %d\n", i);
      if (AllReduce(pair_comm, 512u * (uint64_t)i) != 0) return 5;
      printf("pair done %d\n", i);
    }
    printf("enter %d\n", i);
    if (AllReduce(comm, i == odd_call ? odd_count : 1024u * (uint64_t)i) != 0) return 5;
    printf("done %d\n", i);
  }
  printf("finished\n");
  if (argc > 4 && strcmp(argv[4], "hold") == 0) {
    for (;;) pause();
  }
  if (pair_comm != NULL && HcclCommDestroy(pair_comm) != 0) return 6;
  return HcclCommDestroy(comm) == 0 ? 0 : 6;
}
