#include "ring_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

namespace ascend_trace {

namespace {

uint32_t RoundUpToPowerOfTwo(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

bool ShapeFromAttr(uint16_t msg_num, uint16_t msg_size, uint8_t no_lock, RingShape* out) {
  if (msg_num != 0 && msg_num > ATR_RING_MAX_MSG_NUM) return false;
  if (msg_size != 0 && (msg_size < ATR_RING_MIN_MSG_SIZE || msg_size > ATR_RING_MAX_MSG_SIZE)) return false;
  const uint32_t num = RoundUpToPowerOfTwo(msg_num == 0 ? DEFAULT_ATRACE_MSG_NUM : msg_num);
  const uint32_t size = msg_size == 0 ? DEFAULT_ATRACE_MSG_SIZE : msg_size;
  // CANN checks the space after rounding, with its own 16-byte slot head.
  if (static_cast<uint64_t>(size + ATR_RING_CANN_SLOT_HEAD) * num > ATR_RING_MAX_SPACE) return false;
  out->msg_num = num;
  out->msg_size = size;
  out->no_lock = no_lock == TRACE_LOCK_FREE;
  return true;
}

int CreateRing(const RingShape& shape, const char* name, void* at, atraced::UniqueFd* fd, uint64_t* mapped_bytes) {
  const std::string label = std::string("atrace:") + name;
  atraced::UniqueFd memfd(::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!memfd.valid()) return -errno;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t bytes = (shape.bytes() + page - 1) / page * page;
  if (::ftruncate(memfd.get(), static_cast<off_t>(bytes)) != 0) return -errno;
  // Sized once and for all: the daemon maps it and must never see it shrink (SIGBUS).
  if (::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return -errno;
  void* p = ::mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd.get(), 0);
  if (p == MAP_FAILED) return -errno;
  atr_ring_header h{};
  h.magic = ATR_RING_MAGIC;
  h.version = ATR_RING_VERSION;
  h.header_size = ATR_RING_HEADER_SIZE;
  h.msg_num = shape.msg_num;
  h.msg_size = shape.msg_size;
  h.slot_size = ATR_RING_SLOT_SIZE(shape.msg_size);
  h.flags = (shape.no_lock ? ATR_RING_FLAG_NO_LOCK : 0) | (shape.counter ? ATR_RING_FLAG_COUNTER : 0);
  // CANN's anchoring, bracketed (each clock between two reads of the next), as the daemon
  // takes its own sample at save.
  const atraced::ClockSample anchor = atraced::SampleClocks(shape.counter);
  h.realtime_ns = static_cast<uint64_t>(anchor.realtime_ns);
  h.monotonic_ns = static_cast<uint64_t>(anchor.monotonic_ns);
  h.counter_anchor = anchor.counter;
  // Not yet published: the handle is handed out after this, with a release store.
  std::memcpy(p, &h, sizeof h);
  *fd = std::move(memfd);
  *mapped_bytes = bytes;
  return 0;
}

thread_local constinit ThreadClaim t_claim __attribute__((tls_model("initial-exec")));
std::atomic<uint64_t> g_claim_lifetime{kClaimLifetime};

TraStatus WriteRecordShared(uint64_t now, uint8_t* base, uint64_t mask, uint32_t slot_size, uint8_t buffer_type,
                            const void* buffer, uint32_t length) {
  auto* write_index = reinterpret_cast<uint64_t*>(base + ATR_RING_OFF_WRITE_INDEX);
  ThreadClaim& c = t_claim;
  uint64_t k;
  bool from_batch = false;
  if (c.left != 0 && now - c.since < g_claim_lifetime.load(std::memory_order_relaxed)) {
    k = c.next - c.left--;
    from_batch = true;
  } else if (c.calm) {
    // A whole batch went by with no other writer claiming: one slot a record again.
    c.shared = false;
    c.calm = false;
    k = __atomic_fetch_add(write_index, 1, __ATOMIC_RELAXED);
    c.next = k + 1;
    c.left = 0;
  } else {
    k = __atomic_fetch_add(write_index, kClaimBatch, __ATOMIC_RELAXED);
    c.calm = k == c.next;
    c.next = k + kClaimBatch;
    c.left = kClaimBatch - 1;
    c.since = now;
  }
  uint8_t* slot = SlotAt(base, mask, slot_size, k);
  Take take = TakeSlot(slot, slot_size, k);
  if (take == Take::kLapped && from_batch) {
    // Other writers lapped what is left of the batch: give it up and claim one slot afresh.
    c.left = 0;
    k = __atomic_fetch_add(write_index, 1, __ATOMIC_RELAXED);
    c.next = k + 1;
    slot = SlotAt(base, mask, slot_size, k);
    take = TakeSlot(slot, slot_size, k);
  }
  if (take != Take::kTaken) return Dropped(base);
  return FillSlot(slot, k, now, buffer_type, buffer, length);
}

TraStatus WriteRecordMonotonic(uint8_t* base, uint64_t mask, uint32_t msg_size, bool no_lock, uint64_t claim_key,
                               uint8_t buffer_type, const void* buffer, uint32_t length) {
  return WriteRecordAt(MonotonicNs(), base, mask, msg_size, no_lock, claim_key, buffer_type, buffer, length);
}

}  // namespace ascend_trace
