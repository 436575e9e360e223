/* A test double of libhccl.so, built from the public C signatures (hccl.h, hccl_comm.h), for
 * libatrace_hccl's tests: ranks are separate processes, and every collective blocks until
 * every rank of its communicator has entered the same sequence number, so a rank that skips
 * a collective leaves the others waiting, as on hardware.
 *
 * The ranks of a communicator meet in a shared-memory file, $ATRACE_HCCL_DOUBLE_DIR/<name>.rdv:
 * one 64-bit word per rank, the sequence number that rank has entered. A communicator's name
 * is HcclRootInfo's bytes up to their first NUL (HcclGetRootInfo writes
 * $ATRACE_HCCL_DOUBLE_COMM, default "hccl_world_group"); HcclCommInitClusterInfo names it
 * "hccl_world_group" with $RANK_SIZE ranks. Send, Recv and BatchSendRecv return at once
 * (point-to-point has no whole-communicator rendezvous). With $ATRACE_HCCL_DOUBLE_TRACE_LIB,
 * each communicator also writes HCCL's own atrace records of its AllReduces
 * (hccl_entry_trace.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hccl_entry_trace.h"
#include "hccl_types.h"

#define EXPORT __attribute__((visibility("default")))
#define E_PARA 1
#define E_INTERNAL 4

struct double_comm {
  char name[ATRACE_HCCL_COMM_NAME_MAX];
  uint32_t rank;
  uint32_t size;
  uint64_t seq;
  uint64_t* entered; /* shared: size words */
  struct entry_trace trace; /* HCCL's own records, when asked (hccl_entry_trace.h) */
};

static HcclResult Open(const char* name, uint32_t size, uint32_t rank, HcclComm* out) {
  const char* dir = getenv("ATRACE_HCCL_DOUBLE_DIR");
  if (out == NULL || size == 0 || rank >= size || dir == NULL || strchr(name, '/') != NULL || name[0] == '\0') {
    return E_PARA;
  }
  struct double_comm* c = calloc(1, sizeof *c);
  if (c == NULL) return E_INTERNAL;
  snprintf(c->name, sizeof c->name, "%s", name);
  c->rank = rank;
  c->size = size;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.rdv", dir, name);
  const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  const size_t bytes = sizeof(uint64_t) * size;
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    if (fd >= 0) close(fd);
    free(c);
    return E_INTERNAL;
  }
  void* map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    free(c);
    return E_INTERNAL;
  }
  c->entered = map;
  EntryTraceOpen(&c->trace);
  *out = c;
  return ATRACE_HCCL_SUCCESS;
}

/* Enters the next sequence number and waits for every rank to enter it. */
static HcclResult Rendezvous(HcclComm comm) {
  struct double_comm* c = comm;
  if (c == NULL) return E_PARA;
  const uint64_t mine = ++c->seq;
  __atomic_store_n(&c->entered[c->rank], mine, __ATOMIC_RELEASE);
  for (;;) {
    uint32_t behind = 0;
    for (uint32_t r = 0; r < c->size; ++r) behind += __atomic_load_n(&c->entered[r], __ATOMIC_ACQUIRE) < mine;
    if (behind == 0) return ATRACE_HCCL_SUCCESS;
    const struct timespec pause = {0, 500000};
    nanosleep(&pause, NULL);
  }
}

EXPORT HcclResult HcclGetRootInfo(HcclRootInfo* info) {
  if (info == NULL) return E_PARA;
  const char* name = getenv("ATRACE_HCCL_DOUBLE_COMM");
  memset(info, 0, sizeof *info);
  snprintf(info->internal, sizeof info->internal, "%s", name != NULL ? name : "hccl_world_group");
  return ATRACE_HCCL_SUCCESS;
}

EXPORT HcclResult HcclCommInitRootInfo(uint32_t n, const HcclRootInfo* info, uint32_t rank, HcclComm* comm) {
  if (info == NULL) return E_PARA;
  char name[ATRACE_HCCL_COMM_NAME_MAX];
  snprintf(name, sizeof name, "%.*s", (int)sizeof name - 1, info->internal);
  return Open(name, n, rank, comm);
}

EXPORT HcclResult HcclCommInitRootInfoConfig(uint32_t n, const HcclRootInfo* info, uint32_t rank, const void* config,
                                             HcclComm* comm) {
  (void)config;
  return HcclCommInitRootInfo(n, info, rank, comm);
}

EXPORT HcclResult HcclCommInitClusterInfo(const char* cluster_info, uint32_t rank, HcclComm* comm) {
  (void)cluster_info;
  const char* size = getenv("RANK_SIZE");
  return Open("hccl_world_group", size != NULL ? (uint32_t)strtoul(size, NULL, 10) : 0, rank, comm);
}

EXPORT HcclResult HcclCommInitClusterInfoConfig(const char* cluster_info, uint32_t rank, void* config, HcclComm* comm) {
  (void)config;
  return HcclCommInitClusterInfo(cluster_info, rank, comm);
}

EXPORT HcclResult HcclCommDestroy(HcclComm comm) {
  struct double_comm* c = comm;
  if (c == NULL) return E_PARA;
  munmap(c->entered, sizeof(uint64_t) * c->size);
  free(c);
  return ATRACE_HCCL_SUCCESS;
}

EXPORT HcclResult HcclGetCommName(HcclComm comm, char* name) {
  struct double_comm* c = comm;
  if (c == NULL || name == NULL) return E_PARA;
  memcpy(name, c->name, sizeof c->name);
  return ATRACE_HCCL_SUCCESS;
}

EXPORT HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
  struct double_comm* c = comm;
  if (c == NULL || rank == NULL) return E_PARA;
  *rank = c->rank;
  return ATRACE_HCCL_SUCCESS;
}

EXPORT HcclResult HcclGetRankSize(HcclComm comm, uint32_t* size) {
  struct double_comm* c = comm;
  if (c == NULL || size == NULL) return E_PARA;
  *size = c->size;
  return ATRACE_HCCL_SUCCESS;
}

EXPORT HcclResult HcclAllReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c,
                                aclrtStream st) {
  (void)s, (void)r, (void)t, (void)o, (void)st;
  struct double_comm* dc = c;
  if (dc == NULL) return E_PARA;
  EntryTraceAllReduce(&dc->trace, dc->name, dc->rank, n);
  const HcclResult ret = Rendezvous(c);
  if (ret == ATRACE_HCCL_SUCCESS) EntryTraceDone(&dc->trace, dc->name);
  return ret;
}
EXPORT HcclResult HcclBroadcast(void* b, uint64_t n, HcclDataType t, uint32_t root, HcclComm c, aclrtStream st) {
  (void)b, (void)n, (void)t, (void)root, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclReduceScatter(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c,
                                    aclrtStream st) {
  (void)s, (void)r, (void)n, (void)t, (void)o, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclReduceScatterV(void* s, const void* sc, const void* sd, void* r, uint64_t n, HcclDataType t,
                                     HcclReduceOp o, HcclComm c, aclrtStream st) {
  (void)s, (void)sc, (void)sd, (void)r, (void)n, (void)t, (void)o, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclScatter(void* s, void* r, uint64_t n, HcclDataType t, uint32_t root, HcclComm c, aclrtStream st) {
  (void)s, (void)r, (void)n, (void)t, (void)root, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclAllGather(void* s, void* r, uint64_t n, HcclDataType t, HcclComm c, aclrtStream st) {
  (void)s, (void)r, (void)n, (void)t, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclAllGatherV(void* s, uint64_t n, void* r, const void* rc, const void* rd, HcclDataType t,
                                 HcclComm c, aclrtStream st) {
  (void)s, (void)n, (void)r, (void)rc, (void)rd, (void)t, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclSend(void* s, uint64_t n, HcclDataType t, uint32_t dest, HcclComm c, aclrtStream st) {
  (void)s, (void)n, (void)t, (void)dest, (void)st;
  return c != NULL ? ATRACE_HCCL_SUCCESS : E_PARA;
}
EXPORT HcclResult HcclRecv(void* r, uint64_t n, HcclDataType t, uint32_t src, HcclComm c, aclrtStream st) {
  (void)r, (void)n, (void)t, (void)src, (void)st;
  return c != NULL ? ATRACE_HCCL_SUCCESS : E_PARA;
}
EXPORT HcclResult HcclAlltoAllVC(const void* s, const void* m, HcclDataType st_, const void* r, HcclDataType rt,
                                 HcclComm c, aclrtStream st) {
  (void)s, (void)m, (void)st_, (void)r, (void)rt, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclAlltoAllV(const void* s, const void* sc, const void* sd, HcclDataType st_, const void* r,
                                const void* rc, const void* rd, HcclDataType rt, HcclComm c, aclrtStream st) {
  (void)s, (void)sc, (void)sd, (void)st_, (void)r, (void)rc, (void)rd, (void)rt, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclAlltoAll(const void* s, uint64_t sn, HcclDataType st_, const void* r, uint64_t rn,
                               HcclDataType rt, HcclComm c, aclrtStream st) {
  (void)s, (void)sn, (void)st_, (void)r, (void)rn, (void)rt, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, uint32_t root, HcclComm c,
                             aclrtStream st) {
  (void)s, (void)r, (void)n, (void)t, (void)o, (void)root, (void)st;
  return Rendezvous(c);
}
EXPORT HcclResult HcclBatchSendRecv(HcclSendRecvItem* items, uint32_t n, HcclComm c, aclrtStream st) {
  (void)items, (void)n, (void)st;
  return c != NULL ? ATRACE_HCCL_SUCCESS : E_PARA;
}
EXPORT HcclResult HcclBarrier(HcclComm c, aclrtStream st) {
  (void)st;
  return Rendezvous(c);
}
