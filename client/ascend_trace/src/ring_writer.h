// One tracer object's ring: creating its sealed memfd, and the submit hot path.
//
// The layout and the slot protocol are defined in proto/ring_layout.h. Submit makes no
// system call (the stamp is the cycle counter, or the vDSO's clock where the counter cannot
// be trusted: docs/TIMESTAMPS.md) and takes no lock: a locked ring (CANN noLock = 0)
// claims a slot with one fetch-add (a batch of slots while writers contend: ThreadClaim)
// and takes it with one compare-and-swap, a noLock ring with plain stores. The payload is copied 16 bytes a move: a concurrent snapshot (this process's, or
// the daemon's) reads the slot between checks of seq_start and seq_done and drops what a
// writer tore, as a seqlock's reader does. Under ThreadSanitizer every store is an atomic
// word instead, so that TSan checks those reads.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "atrace_types.h"
#include "atraced/proto/ring_layout.h"
#include "atraced/base/cycle_counter.h"
#include "atraced/base/unique_fd.h"

#if defined(__SANITIZE_THREAD__)
#define ATRACE_RING_VECTOR_COPY 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ATRACE_RING_VECTOR_COPY 0
#endif
#endif
#ifndef ATRACE_RING_VECTOR_COPY
#define ATRACE_RING_VECTOR_COPY 1
#endif

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the slot head is stored as little-endian words");

namespace ascend_trace {

// A ring's shape after CANN's defaults and rounding.
struct RingShape {
  uint32_t msg_num = 0;   // power of two
  uint32_t msg_size = 0;  // payload bytes per record
  bool no_lock = false;
  bool counter = false;  // stamped with the cycle counter (ATR_RING_FLAG_COUNTER)
  uint64_t bytes() const { return ATR_RING_BYTES(msg_num, msg_size); }
};

// CANN's rules (trace_rb_log.c): 0 means the default, msgNum 1..1024 is rounded up to a power
// of two, msgSize 64..1024, and (msgSize + 16) * msgNum <= 128 KiB. False if out of range.
bool ShapeFromAttr(uint16_t msg_num, uint16_t msg_size, uint8_t no_lock, RingShape* out);

// Creates the memfd ("atrace:<name>", close-on-exec, sealable), sizes it to a whole number of
// pages, writes the header (clock anchors sampled now), seals it against shrinking, growing
// and further sealing, and maps it shared at `at` (MAP_FIXED: the caller owns that range).
// Returns 0 or -errno; on error nothing is mapped and *fd is untouched.
int CreateRing(const RingShape& shape, const char* name, void* at, atraced::UniqueFd* fd, uint64_t* mapped_bytes);

inline uint64_t MonotonicNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no system call
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Slots a writer claims at once on a ring it shares with other writers, and how long (in
// the ring's stamp units: counter ticks or ns) its unused claims stay its own.
inline constexpr uint64_t kClaimBatch = 8;
inline constexpr uint64_t kClaimLifetime = uint64_t{1} << 20;
// kClaimLifetime, unless a test set another (ring_claims_test.cc: turns that a busy machine
// stretches past it). Read on the shared path only.
extern std::atomic<uint64_t> g_claim_lifetime;

// This thread's claims on the locked ring it last wrote. Writers that share a ring move the
// line of its write_index between cores on every record. A writer that finds that another
// claimed a slot since its own last claim goes over to claiming kClaimBatch slots with one
// fetch-add, and back to one at a time once a whole batch went by with nobody else
// claiming. A lone writer therefore claims one slot a record, and write_index stays the
// count of its records (the hang watch reads that as progress). Claims unused after
// kClaimLifetime are given up: they stay empty, or keep the record of a lap before, so a
// shared ring's write_index runs at most 7 slots a writer ahead of its records, for at
// most that long.
struct ThreadClaim {
  uint64_t ring = 0;    // the ring's key (WriteRecord's claim_key); 0: none yet
  uint64_t next = 0;    // one past this thread's last claimed slot
  uint64_t left = 0;    // claimed slots not yet written: next - left is the first
  uint64_t since = 0;   // the stamp when the batch was claimed
  bool shared = false;  // claiming in batches
  bool calm = false;    // nobody else claimed while the current batch was claimed
};
// Initial-exec, as alt_stack.h's flag: read on every record of a locked ring.
extern thread_local constinit ThreadClaim t_claim __attribute__((tls_model("initial-exec")));

// Takes slot k: compare-and-swap of its seq_start from a complete older record to k + 1.
// kBusy: another writer is between its seq_start and seq_done. kLapped: it already holds a
// record as new as ours (we were preempted for a whole lap).
enum class Take { kTaken, kBusy, kLapped };
[[gnu::always_inline]] inline Take TakeSlot(uint8_t* slot, uint32_t slot_size, uint64_t k) {
  auto* seq_start = reinterpret_cast<uint64_t*>(slot + slot_size - 8);
  const auto* seq_done = reinterpret_cast<const uint64_t*>(slot);
  uint64_t cur = __atomic_load_n(seq_start, __ATOMIC_ACQUIRE);
  for (;;) {
    if (cur >= k + 1) return Take::kLapped;
    if (cur != __atomic_load_n(seq_done, __ATOMIC_ACQUIRE)) return Take::kBusy;
    if (__atomic_compare_exchange_n(seq_start, &cur, k + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      return Take::kTaken;
    }
  }
}

[[gnu::always_inline]] inline uint8_t* SlotAt(uint8_t* base, uint64_t mask, uint32_t slot_size, uint64_t k) {
  return base + ATR_RING_HEADER_SIZE + (k & mask) * slot_size;
}

[[gnu::always_inline]] inline TraStatus Dropped(uint8_t* base) {
  __atomic_fetch_add(reinterpret_cast<uint64_t*>(base + ATR_RING_OFF_DROPPED), 1, __ATOMIC_RELAXED);
  return TRACE_FAILURE;
}

// Fills taken slot k: head, payload, then seq_done.
[[gnu::always_inline]] inline TraStatus FillSlot(uint8_t* slot, uint64_t k, uint64_t now, uint8_t buffer_type,
                                                 const void* buffer, uint32_t length) {
  // seq_start must be visible before any byte of the record (ring_layout.h).
  __atomic_thread_fence(__ATOMIC_RELEASE);
  auto* words = reinterpret_cast<uint64_t*>(slot);
  __atomic_store_n(words + 1, now, __ATOMIC_RELAXED);
  __atomic_store_n(words + 2, static_cast<uint64_t>(length) | (static_cast<uint64_t>(buffer_type) << 32),
                   __ATOMIC_RELAXED);
  uint64_t* payload = words + ATR_RING_SLOT_HEAD_SIZE / 8;
  const auto* src = static_cast<const uint8_t*>(buffer);
  const uint32_t full = length / 8;
  uint32_t i = 0;
#if ATRACE_RING_VECTOR_COPY
  // 16 bytes a move. These are plain stores racing an in-process snapshot's reads of the
  // same slot; the snapshot checks seq_start and seq_done around its copy and drops a torn
  // record, as a seqlock's reader does (ring_layout.h). The TSan build copies word by word.
  typedef uint64_t Pair __attribute__((vector_size(16)));
#pragma GCC unroll 4
  for (; i + 2 <= full; i += 2) {
    Pair v;
    std::memcpy(&v, src + i * 8, 16);
    std::memcpy(payload + i, &v, 16);
  }
#endif
  // Word by word with atomic stores (plain moves on x86-64 and aarch64).
  for (; i < full; ++i) {
    uint64_t w;
    std::memcpy(&w, src + i * 8, 8);
    __atomic_store_n(payload + i, w, __ATOMIC_RELAXED);
  }
  if (const uint32_t rest = length % 8; rest != 0) {
    uint64_t w = 0;
    std::memcpy(&w, src + full * 8, rest);
    __atomic_store_n(payload + full, w, __ATOMIC_RELAXED);
  }
  __atomic_store_n(reinterpret_cast<uint64_t*>(slot), k + 1, __ATOMIC_RELEASE);  // seq_done: complete
  return TRACE_SUCCESS;
}

// A locked ring this thread writes in batches (ThreadClaim::shared). Out of line: it runs
// only while writers contend, where a call costs little beside the line they share.
[[gnu::noinline]] TraStatus WriteRecordShared(uint64_t now, uint8_t* base, uint64_t mask, uint32_t slot_size,
                                              uint8_t buffer_type, const void* buffer, uint32_t length);

// Writes one record stamped `now`: WriteRecord's body.
[[gnu::always_inline]] inline TraStatus WriteRecordAt(uint64_t now, uint8_t* base, uint64_t mask, uint32_t msg_size,
                                                      bool no_lock, uint64_t claim_key, uint8_t buffer_type,
                                                      const void* buffer, uint32_t length) {
  if (length > msg_size) length = msg_size;  // CANN truncates too
  auto* write_index = reinterpret_cast<uint64_t*>(base + ATR_RING_OFF_WRITE_INDEX);
  const uint32_t slot_size = ATR_RING_SLOT_SIZE(msg_size);
  if (no_lock) {
    // The caller promised a single writer: no read-modify-write needed.
    const uint64_t k = __atomic_load_n(write_index, __ATOMIC_RELAXED);
    __atomic_store_n(write_index, k + 1, __ATOMIC_RELAXED);
    uint8_t* slot = SlotAt(base, mask, slot_size, k);
    __atomic_store_n(reinterpret_cast<uint64_t*>(slot + slot_size - 8), k + 1, __ATOMIC_RELAXED);
    return FillSlot(slot, k, now, buffer_type, buffer, length);
  }
  ThreadClaim& c = t_claim;
  const bool mine = claim_key != 0 && __builtin_expect(c.ring == claim_key, 1);
  if (mine && __builtin_expect(c.shared, 0)) {
    return WriteRecordShared(now, base, mask, slot_size, buffer_type, buffer, length);
  }
  // One slot: a lone writer's path.
  const uint64_t k = __atomic_fetch_add(write_index, 1, __ATOMIC_RELAXED);
  if (mine) {
    if (__builtin_expect(k != c.next, 0)) c.shared = true;  // another writer claimed since our last claim
    c.next = k + 1;
  } else if (claim_key != 0) {
    c = ThreadClaim{.ring = claim_key, .next = k + 1};
  }
  uint8_t* slot = SlotAt(base, mask, slot_size, k);
  if (TakeSlot(slot, slot_size, k) != Take::kTaken) return Dropped(base);
  return FillSlot(slot, k, now, buffer_type, buffer, length);
}

// A ring stamped with CLOCK_MONOTONIC (the daemon refused the counter). Out of line: the
// vDSO call would otherwise make every record's path save and restore six registers.
[[gnu::noinline]] TraStatus WriteRecordMonotonic(uint8_t* base, uint64_t mask, uint32_t msg_size, bool no_lock,
                                                 uint64_t claim_key, uint8_t buffer_type, const void* buffer,
                                                 uint32_t length);

// Writes one record. `base` is the ring's mapping, `mask` msg_num - 1, `counter` the ring's
// stamp (RingShape::counter). Returns TRACE_SUCCESS, or TRACE_FAILURE when the slot is still
// being written by another thread (CANN drops the record then too; it is counted in the
// header's `dropped`). On the counter's path it calls nothing: two registers saved, not six.
// `claim_key` names the ring for this thread's ThreadClaim, unique over the process's life
// (the object's handle); 0 claims one slot a record whatever the sharing.
[[gnu::always_inline]] inline TraStatus WriteRecord(uint8_t* base, uint64_t mask, uint32_t msg_size, bool no_lock,
                                                    bool counter, uint64_t claim_key, uint8_t buffer_type,
                                                    const void* buffer, uint32_t length) {
  if (__builtin_expect(!counter, 0)) {
    return WriteRecordMonotonic(base, mask, msg_size, no_lock, claim_key, buffer_type, buffer, length);
  }
  return WriteRecordAt(atraced::ReadCycleCounter(), base, mask, msg_size, no_lock, claim_key, buffer_type, buffer,
                       length);
}

}  // namespace ascend_trace
