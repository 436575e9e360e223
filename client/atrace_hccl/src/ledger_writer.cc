#include "ledger_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace atrace_hccl {

uint64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t ThreadId() {
  thread_local uint32_t tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tid;
}

bool LedgerWriter::Create(uint32_t records) {
  if (records == 0 || (records & (records - 1)) != 0 || records > ATR_LEDGER_MAX_RECORDS) {
    errno = EINVAL;
    return false;
  }
  records_ = records;
  const int fd = ::memfd_create("atrace_hccl_ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return false;
  const size_t size = bytes();
  void* map = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
      (map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return false;
  }
  memfd_ = fd;
  base_ = static_cast<uint8_t*>(map);
  atr_ledger_header* h = Header();
  h->magic = ATR_LEDGER_MAGIC;
  h->version = ATR_LEDGER_VERSION;
  h->header_size = ATR_LEDGER_HEADER_SIZE;
  h->record_count = records;
  h->record_size = ATR_LEDGER_RECORD_SIZE;
  timespec rt{};
  ::clock_gettime(CLOCK_REALTIME, &rt);
  h->monotonic_ns = MonotonicNs();
  h->realtime_ns = static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + static_cast<uint64_t>(rt.tv_nsec);
  return true;
}

void LedgerWriter::Close() {
  if (base_ != nullptr) ::munmap(base_, bytes());
  if (memfd_ >= 0) ::close(memfd_);
  base_ = nullptr;
  memfd_ = -1;
}

uint64_t LedgerWriter::Append(const CallRecord& call, uint64_t enqueue_ns, uint32_t tid) {
  const uint64_t k = __atomic_fetch_add(&Header()->write_index, 1, __ATOMIC_RELAXED);
  const uint64_t seq = k + 1;
  atr_ledger_record* r = Slot(k);
  // seq_start first, and no field store may be seen before it (the reader's torn check).
  __atomic_store_n(&r->seq_start, seq, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&r->completion_seq, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&r->completion_ns, 0, __ATOMIC_RELAXED);
  r->enqueue_ns = enqueue_ns;
  r->comm_seq = call.comm_seq;
  r->count = call.count;
  r->stream = call.stream;
  r->rank = call.rank;
  r->size = call.size;
  r->peer = call.peer;
  r->tid = tid;
  r->op = call.op;
  r->data_type = call.data_type;
  r->reduce_op = call.reduce_op;
  const size_t n = std::min<size_t>(call.comm.size(), ATR_LEDGER_COMM_MAX);
  r->comm_len = static_cast<uint8_t>(n);
  r->flags = static_cast<uint8_t>(call.flags | (call.comm.size() > ATR_LEDGER_COMM_MAX ? ATR_LEDGER_REC_NAME_CUT : 0));
  r->reserved = 0;
  std::memcpy(r->comm, call.comm.data(), n);
  __atomic_store_n(&r->seq_done, seq, __ATOMIC_RELEASE);
  return seq;
}

void LedgerWriter::Complete(uint64_t seq, uint64_t completion_ns) {
  atr_ledger_record* r = Slot(seq - 1);
  if (__atomic_load_n(&r->seq_done, __ATOMIC_ACQUIRE) != seq) return;  // reused: the call is out of the ledger
  __atomic_store_n(&r->completion_ns, completion_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&r->completion_seq, seq, __ATOMIC_RELEASE);
}

void LedgerWriter::MarkCompletionTracked() {
  __atomic_fetch_or(&Header()->flags, ATR_LEDGER_FLAG_COMPLETION, __ATOMIC_RELEASE);
}

}  // namespace atrace_hccl
