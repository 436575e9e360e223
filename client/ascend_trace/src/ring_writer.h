// One tracer object's ring: creating its sealed memfd, and the submit hot path.
//
// The layout and the slot protocol are defined in proto/ring_layout.h. Submit makes no
// system call (the stamp is the cycle counter, or the vDSO's clock where the counter cannot
// be trusted: docs/TIMESTAMPS.md) and takes no lock: a locked ring (CANN noLock = 0)
// claims a slot with one fetch-add and one compare-and-swap, a noLock ring with plain
// stores. Every store into the shared mapping is an atomic one, so a concurrent snapshot is
// free of data races (and TSan can check that).
#pragma once

#include <time.h>

#include <cstdint>
#include <cstring>

#include "atrace_types.h"
#include "atraced/proto/ring_layout.h"
#include "atraced/base/cycle_counter.h"
#include "atraced/base/unique_fd.h"

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

// Writes one record. `base` is the ring's mapping, `mask` msg_num - 1, `counter` the ring's
// stamp (RingShape::counter). Returns TRACE_SUCCESS, or TRACE_FAILURE when the slot is still
// being written by another thread (CANN drops the record then too; it is counted in the
// header's `dropped`).
[[gnu::always_inline]] inline TraStatus WriteRecord(uint8_t* base, uint64_t mask, uint32_t msg_size, bool no_lock,
                                                    bool counter, uint8_t buffer_type, const void* buffer,
                                                    uint32_t length) {
  if (length > msg_size) length = msg_size;  // CANN truncates too
  const uint64_t now = counter ? atraced::ReadCycleCounter() : MonotonicNs();
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
  // Word by word with atomic stores (plain moves on x86-64 and aarch64), so that an
  // in-process snapshot racing a writer is free of data races. Measured against one
  // memcpy call: the call costs more than it saves at CANN's 112-byte default.
  const auto* src = static_cast<const uint8_t*>(buffer);
  const uint32_t full = length / 8;
  for (uint32_t i = 0; i < full; ++i) {
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

}  // namespace ascend_trace
