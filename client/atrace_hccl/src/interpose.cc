// HCCL's C API, interposed: each collective adds one ledger record, then calls the real
// function. The real one is found with dlsym(RTLD_NEXT) (libhccl loaded after us: a
// program's DT_NEEDED, or a dlopen with RTLD_GLOBAL), else in a libhccl.so already loaded
// with RTLD_LOCAL (its own handle). What this reaches and what it does not is in
// docs/HCCL_LEDGER.md: a caller that looks the functions up with dlsym on its own libhccl
// handle (torch_npu's optional functions, ctypes) calls HCCL directly, unrecorded.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "hccl_types.h"
#include "process_ledger.h"

#define ATRACE_HCCL_EXPORT extern "C" __attribute__((visibility("default")))

namespace atrace_hccl {
namespace {

constexpr HcclResult kNotFound = 6;  // HCCL_E_NOT_FOUND: no libhccl in the process

void* FindReal(const char* name) {
  if (void* f = ::dlsym(RTLD_NEXT, name)) return f;
  void* lib = ::dlopen("libhccl.so", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  void* f = ::dlsym(lib, name);
  ::dlclose(lib);  // NOLOAD took a reference; the library stays loaded by its opener
  Dl_info self{}, found{};
  // Never ourselves (libhccl's scope holding this library would make the call loop).
  if (f != nullptr && ::dladdr(reinterpret_cast<void*>(&FindReal), &self) != 0 && ::dladdr(f, &found) != 0 &&
      self.dli_fbase == found.dli_fbase) {
    return nullptr;
  }
  return f;
}

template <typename Fn>
Fn Real(std::atomic<void*>& cache, const char* name) {
  void* f = cache.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = FindReal(name);
    cache.store(f, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(f);
}

std::atomic<void*> real_get_name, real_get_rank, real_get_size;

HcclResult GetName(HcclComm comm, char* name) {
  auto fn = Real<HcclResult (*)(HcclComm, char*)>(real_get_name, "HcclGetCommName");
  return fn ? fn(comm, name) : kNotFound;
}
HcclResult GetRank(HcclComm comm, uint32_t* rank) {
  auto fn = Real<HcclResult (*)(HcclComm, uint32_t*)>(real_get_rank, "HcclGetRankId");
  return fn ? fn(comm, rank) : kNotFound;
}
HcclResult GetSize(HcclComm comm, uint32_t* size) {
  auto fn = Real<HcclResult (*)(HcclComm, uint32_t*)>(real_get_size, "HcclGetRankSize");
  return fn ? fn(comm, size) : kNotFound;
}

std::atomic<uint64_t> g_unlisted_seq{0};  // calls on communicators the full table could not hold

// One collective: the record before the call (a rank stuck inside HCCL has it), the event
// after it (the call's work is on the stream then).
class Call {
 public:
  Call(uint16_t op, HcclComm comm, aclrtStream stream, uint64_t count, int data_type, int reduce_op, uint32_t peer) {
    writer_ = Ledger();
    if (writer_ == nullptr) return;
    CallRecord r;
    r.op = op;
    r.count = count;
    r.stream = reinterpret_cast<uintptr_t>(stream);
    r.peer = peer;
    r.data_type = static_cast<uint8_t>(data_type < 0 || data_type > 254 ? 255 : data_type);
    r.reduce_op = static_cast<uint8_t>(reduce_op < 0 || reduce_op > 254 ? 255 : reduce_op);
    if (CommEntry* e = Comms().Find(comm, RealQueries())) {
      r.comm_seq = e->next_seq.fetch_add(1, std::memory_order_relaxed) + 1;
      r.comm = e->Name();
      r.rank = e->rank;
      r.size = e->size;
      if (!e->rank_known) r.flags |= ATR_LEDGER_REC_NO_RANK;
    } else {
      r.comm_seq = g_unlisted_seq.fetch_add(1, std::memory_order_relaxed) + 1;
      r.comm = comm == nullptr ? "(no communicator)" : "(unlisted: the communicator table is full)";
      r.flags |= ATR_LEDGER_REC_NO_RANK;
    }
    slot_ = Completion().Claim();
    if (slot_ >= 0) r.flags |= ATR_LEDGER_REC_COMPLETION;
    seq_ = writer_->Append(r, MonotonicNs(), ThreadId());
  }
  HcclResult Done(HcclResult result, aclrtStream stream) {
    if (slot_ >= 0) Completion().Submit(slot_, stream, seq_, writer_);
    return result;
  }

 private:
  LedgerWriter* writer_ = nullptr;
  int slot_ = -1;
  uint64_t seq_ = 0;
};

constexpr int kNone = 255;

}  // namespace

const CommQueries& RealQueries() {
  static const CommQueries q{GetName, GetRank, GetSize};
  return q;
}

}  // namespace atrace_hccl

using namespace atrace_hccl;

// One wrapper per function: the real one, the record, the call.
#define ATRACE_HCCL_REAL(name, ...)                                                   \
  static std::atomic<void*> real_cache;                                               \
  auto real = Real<HcclResult (*)(__VA_ARGS__)>(real_cache, #name);                   \
  if (real == nullptr) return kNotFound

ATRACE_HCCL_EXPORT HcclResult HcclAllReduce(void* send, void* recv, uint64_t count, HcclDataType dt, HcclReduceOp op,
                                            HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclAllReduce, void*, void*, uint64_t, HcclDataType, HcclReduceOp, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_ALL_REDUCE, comm, stream, count, dt, op, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, recv, count, dt, op, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dt, uint32_t root, HcclComm comm,
                                            aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclBroadcast, void*, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_BROADCAST, comm, stream, count, dt, kNone, root);
  return c.Done(real(buf, count, dt, root, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclReduceScatter(void* send, void* recv, uint64_t recv_count, HcclDataType dt,
                                                HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclReduceScatter, void*, void*, uint64_t, HcclDataType, HcclReduceOp, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_REDUCE_SCATTER, comm, stream, recv_count, dt, op, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, recv, recv_count, dt, op, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclReduceScatterV(void* send, const void* send_counts, const void* send_displs,
                                                 void* recv, uint64_t recv_count, HcclDataType dt, HcclReduceOp op,
                                                 HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclReduceScatterV, void*, const void*, const void*, void*, uint64_t, HcclDataType, HcclReduceOp,
                   HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_REDUCE_SCATTER_V, comm, stream, recv_count, dt, op, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, send_counts, send_displs, recv, recv_count, dt, op, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclScatter(void* send, void* recv, uint64_t recv_count, HcclDataType dt, uint32_t root,
                                          HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclScatter, void*, void*, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_SCATTER, comm, stream, recv_count, dt, kNone, root);
  return c.Done(real(send, recv, recv_count, dt, root, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclAllGather(void* send, void* recv, uint64_t send_count, HcclDataType dt, HcclComm comm,
                                            aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclAllGather, void*, void*, uint64_t, HcclDataType, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_ALL_GATHER, comm, stream, send_count, dt, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, recv, send_count, dt, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclAllGatherV(void* send, uint64_t send_count, void* recv, const void* recv_counts,
                                             const void* recv_displs, HcclDataType dt, HcclComm comm,
                                             aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclAllGatherV, void*, uint64_t, void*, const void*, const void*, HcclDataType, HcclComm,
                   aclrtStream);
  Call c(ATR_LEDGER_OP_ALL_GATHER_V, comm, stream, send_count, dt, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, send_count, recv, recv_counts, recv_displs, dt, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclSend(void* send, uint64_t count, HcclDataType dt, uint32_t dest, HcclComm comm,
                                       aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclSend, void*, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_SEND, comm, stream, count, dt, kNone, dest);
  return c.Done(real(send, count, dt, dest, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclRecv(void* recv, uint64_t count, HcclDataType dt, uint32_t src, HcclComm comm,
                                       aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclRecv, void*, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_RECV, comm, stream, count, dt, kNone, src);
  return c.Done(real(recv, count, dt, src, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclAlltoAllVC(const void* send, const void* send_count_matrix, HcclDataType send_type,
                                             const void* recv, HcclDataType recv_type, HcclComm comm,
                                             aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclAlltoAllVC, const void*, const void*, HcclDataType, const void*, HcclDataType, HcclComm,
                   aclrtStream);
  Call c(ATR_LEDGER_OP_ALL_TO_ALL_VC, comm, stream, 0, send_type, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, send_count_matrix, send_type, recv, recv_type, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclAlltoAllV(const void* send, const void* send_counts, const void* sdispls,
                                            HcclDataType send_type, const void* recv, const void* recv_counts,
                                            const void* rdispls, HcclDataType recv_type, HcclComm comm,
                                            aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclAlltoAllV, const void*, const void*, const void*, HcclDataType, const void*, const void*,
                   const void*, HcclDataType, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_ALL_TO_ALL_V, comm, stream, 0, send_type, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, send_counts, sdispls, send_type, recv, recv_counts, rdispls, recv_type, comm, stream),
                stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclAlltoAll(const void* send, uint64_t send_count, HcclDataType send_type,
                                           const void* recv, uint64_t recv_count, HcclDataType recv_type,
                                           HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclAlltoAll, const void*, uint64_t, HcclDataType, const void*, uint64_t, HcclDataType, HcclComm,
                   aclrtStream);
  Call c(ATR_LEDGER_OP_ALL_TO_ALL, comm, stream, send_count, send_type, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(send, send_count, send_type, recv, recv_count, recv_type, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclReduce(void* send, void* recv, uint64_t count, HcclDataType dt, HcclReduceOp op,
                                         uint32_t root, HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclReduce, void*, void*, uint64_t, HcclDataType, HcclReduceOp, uint32_t, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_REDUCE, comm, stream, count, dt, op, root);
  return c.Done(real(send, recv, count, dt, op, root, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclBatchSendRecv(HcclSendRecvItem* items, uint32_t item_num, HcclComm comm,
                                                aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclBatchSendRecv, HcclSendRecvItem*, uint32_t, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_BATCH_SEND_RECV, comm, stream, item_num, kNone, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(items, item_num, comm, stream), stream);
}

ATRACE_HCCL_EXPORT HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  ATRACE_HCCL_REAL(HcclBarrier, HcclComm, aclrtStream);
  Call c(ATR_LEDGER_OP_BARRIER, comm, stream, 0, kNone, kNone, ATR_LEDGER_NO_PEER);
  return c.Done(real(comm, stream), stream);
}

// A communicator made or destroyed: its handle's sequence starts again, and the acl runtime
// is looked for (a device is set by the time a communicator is made).
ATRACE_HCCL_EXPORT HcclResult HcclCommInitRootInfo(uint32_t n_ranks, const HcclRootInfo* root_info, uint32_t rank,
                                                   HcclComm* comm) {
  ATRACE_HCCL_REAL(HcclCommInitRootInfo, uint32_t, const HcclRootInfo*, uint32_t, HcclComm*);
  const HcclResult r = real(n_ranks, root_info, rank, comm);
  if (r == ATRACE_HCCL_SUCCESS && comm != nullptr) Comms().Forget(*comm);
  ProbeCompletion();
  return r;
}

ATRACE_HCCL_EXPORT HcclResult HcclCommInitRootInfoConfig(uint32_t n_ranks, const HcclRootInfo* root_info,
                                                         uint32_t rank, const void* config, HcclComm* comm) {
  ATRACE_HCCL_REAL(HcclCommInitRootInfoConfig, uint32_t, const HcclRootInfo*, uint32_t, const void*, HcclComm*);
  const HcclResult r = real(n_ranks, root_info, rank, config, comm);
  if (r == ATRACE_HCCL_SUCCESS && comm != nullptr) Comms().Forget(*comm);
  ProbeCompletion();
  return r;
}

ATRACE_HCCL_EXPORT HcclResult HcclCommInitClusterInfo(const char* cluster_info, uint32_t rank, HcclComm* comm) {
  ATRACE_HCCL_REAL(HcclCommInitClusterInfo, const char*, uint32_t, HcclComm*);
  const HcclResult r = real(cluster_info, rank, comm);
  if (r == ATRACE_HCCL_SUCCESS && comm != nullptr) Comms().Forget(*comm);
  ProbeCompletion();
  return r;
}

ATRACE_HCCL_EXPORT HcclResult HcclCommInitClusterInfoConfig(const char* cluster_info, uint32_t rank, void* config,
                                                            HcclComm* comm) {
  ATRACE_HCCL_REAL(HcclCommInitClusterInfoConfig, const char*, uint32_t, void*, HcclComm*);
  const HcclResult r = real(cluster_info, rank, config, comm);
  if (r == ATRACE_HCCL_SUCCESS && comm != nullptr) Comms().Forget(*comm);
  ProbeCompletion();
  return r;
}

ATRACE_HCCL_EXPORT HcclResult HcclCommDestroy(HcclComm comm) {
  ATRACE_HCCL_REAL(HcclCommDestroy, HcclComm);
  const HcclResult r = real(comm);
  Comms().Forget(comm);
  return r;
}
