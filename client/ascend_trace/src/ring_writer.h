// One tracer object's ring: creating its sealed memfd, and the submit hot path.
//
// The layout and the slot protocol are defined in proto/ring_layout.h. Submit makes no
// system call (the stamp is the cycle counter, or the vDSO's clock where the counter cannot
// be trusted: docs/TIMESTAMPS.md) and takes no lock: a locked ring (CANN noLock = 0)
// claims a slot with one fetch-add and one compare-and-swap, a noLock ring with plain
// stores. The payload is copied 16 bytes a move: a concurrent snapshot (this process's, or
// the daemon's) reads the slot between checks of seq_start and seq_done and drops what a
// writer tore, as a seqlock's reader does. Under ThreadSanitizer every store is an atomic
// word instead, so that TSan checks those reads.
#pragma once

#include <time.h>

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

// Writes one record stamped `now`: WriteRecord's body.
[[gnu::always_inline]] inline TraStatus WriteRecordAt(uint64_t now, uint8_t* base, uint64_t mask, uint32_t msg_size,
                                                      bool no_lock, uint8_t buffer_type, const void* buffer,
                                                      uint32_t length) {
  if (length > msg_size) length = msg_size;  // CANN truncates too
  auto* write_index = reinterpret_cast<uint64_t*>(base + ATR_RING_OFF_WRITE_INDEX);
  const uint32_t slot_size = ATR_RING_SLOT_SIZE(msg_size);
  uint64_t k;
  uint8_t* slot;
  uint64_t* seq_start;
  if (no_lock) {
    // The caller promised a single writer: no read-modify-write needed.
    k = __atomic_load_n(write_index, __ATOMIC_RELAXED);
    __atomic_store_n(write_index, k + 1, __ATOMIC_RELAXED);
    slot = base + ATR_RING_HEADER_SIZE + (k & mask) * slot_size;
    seq_start = reinterpret_cast<uint64_t*>(slot + slot_size - 8);
    __atomic_store_n(seq_start, k + 1, __ATOMIC_RELAXED);
  } else {
    k = __atomic_fetch_add(write_index, 1, __ATOMIC_RELAXED);
    slot = base + ATR_RING_HEADER_SIZE + (k & mask) * slot_size;
    seq_start = reinterpret_cast<uint64_t*>(slot + slot_size - 8);
    const auto* seq_done = reinterpret_cast<const uint64_t*>(slot);
    uint64_t cur = __atomic_load_n(seq_start, __ATOMIC_ACQUIRE);
    for (;;) {
      // Busy (another writer between its seq_start and seq_done) or already holding a newer
      // record (we were preempted for a whole lap): drop ours rather than tear or regress.
      if (cur != __atomic_load_n(seq_done, __ATOMIC_ACQUIRE) || cur >= k + 1) {
        __atomic_fetch_add(reinterpret_cast<uint64_t*>(base + ATR_RING_OFF_DROPPED), 1, __ATOMIC_RELAXED);
        return TRACE_FAILURE;
      }
      if (__atomic_compare_exchange_n(seq_start, &cur, k + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
    }
  }
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
  __atomic_store_n(words, k + 1, __ATOMIC_RELEASE);  // seq_done: the record is complete
  return TRACE_SUCCESS;
}

// A ring stamped with CLOCK_MONOTONIC (the daemon refused the counter). Out of line: the
// vDSO call would otherwise make every record's path save and restore six registers.
[[gnu::noinline]] TraStatus WriteRecordMonotonic(uint8_t* base, uint64_t mask, uint32_t msg_size, bool no_lock,
                                                 uint8_t buffer_type, const void* buffer, uint32_t length);

// Writes one record. `base` is the ring's mapping, `mask` msg_num - 1, `counter` the ring's
// stamp (RingShape::counter). Returns TRACE_SUCCESS, or TRACE_FAILURE when the slot is still
// being written by another thread (CANN drops the record then too; it is counted in the
// header's `dropped`). On the counter's path it calls nothing: two registers saved, not six.
[[gnu::always_inline]] inline TraStatus WriteRecord(uint8_t* base, uint64_t mask, uint32_t msg_size, bool no_lock,
                                                    bool counter, uint8_t buffer_type, const void* buffer,
                                                    uint32_t length) {
  if (__builtin_expect(!counter, 0)) {
    return WriteRecordMonotonic(base, mask, msg_size, no_lock, buffer_type, buffer, length);
  }
  return WriteRecordAt(atraced::ReadCycleCounter(), base, mask, msg_size, no_lock, buffer_type, buffer, length);
}

}  // namespace ascend_trace
