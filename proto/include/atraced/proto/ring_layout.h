/* Layout of a libascend_trace ring: one tracer object's records in a sealed memfd.
 *
 * Defined once, here, for the three parties that touch it: the library writes it
 * (client/ascend_trace), the daemon reads snapshots of it (proto/ring_reader.h), and the
 * protocol (RING_REGISTER in PROTOCOL.md) refers to its sizes. C99 and C++.
 *
 * The memfd holds, little-endian host order (it never leaves the machine):
 *
 *   offset 0                  struct atr_ring_header (128 bytes)
 *   offset 128 + i*slot_size  slot i, 0 <= i < msg_num, slot_size = ATR_RING_SLOT_SIZE(msg_size)
 *
 * and is at least ATR_RING_BYTES(msg_num, msg_size) long (page-rounded by the library).
 *
 * A slot is   [u64 seq_done][u64 timestamp_ns][u32 length][u8 buffer_type][u8 reserved[3]]
 *             [payload: ATR_RING_PAYLOAD(msg_size) bytes][u64 seq_start]
 *
 * Record k (written into the k-th claimed slot, k = 0, 1, ...) goes to slot k & (msg_num - 1)
 * with sequence k + 1 (0 means "never written"). Writers that share a ring may claim several
 * slots at once (the library's ThreadClaim), so a slot below write_index may be unwritten,
 * or still hold a record of the lap before; records are ordered by timestamp, not slot. A writer stores seq_start = k + 1, then the
 * head and payload, then seq_done = k + 1 (release). A reader copies the slot in ascending
 * address order (seq_done first, seq_start last, see AtrRingCopy in ring_reader.h) and
 * accepts it only if seq_done == seq_start != 0: a writer that started while the copy was
 * made has changed seq_start before touching any payload byte, so a torn copy never looks
 * complete. seq_start is at the end of the slot for exactly that reason.
 */
#ifndef ATRACED_PROTO_RING_LAYOUT_H_
#define ATRACED_PROTO_RING_LAYOUT_H_

#include <stdint.h>

#include "atraced/proto/wire.h" /* ATR_STATIC_ASSERT */

#define ATR_RING_MAGIC 0x474e5241u /* the bytes "ARNG" */
#define ATR_RING_VERSION 1u
#define ATR_RING_HEADER_SIZE 128u

/* CANN's limits (trace_rb_log.c): msgNum 1..1024 rounded up to a power of two, msgSize
 * 64..1024 payload bytes, and (msgSize + 16) * msgNum <= 128 KiB, 16 being CANN's slot head. */
#define ATR_RING_MAX_MSG_NUM 1024u
#define ATR_RING_MIN_MSG_SIZE 64u
#define ATR_RING_MAX_MSG_SIZE 1024u
#define ATR_RING_CANN_SLOT_HEAD 16u
#define ATR_RING_MAX_SPACE 131072u

/* Our slot: 24-byte head, payload rounded up to 8 bytes (writers store whole words), 8-byte
 * seq_start at the end. */
#define ATR_RING_SLOT_HEAD_SIZE 24u
#define ATR_RING_PAYLOAD(msg_size) ((((uint32_t)(msg_size)) + 7u) & ~7u)
#define ATR_RING_SLOT_SIZE(msg_size) (ATR_RING_SLOT_HEAD_SIZE + ATR_RING_PAYLOAD(msg_size) + 8u)
#define ATR_RING_BYTES(msg_num, msg_size) \
  ((uint64_t)ATR_RING_HEADER_SIZE + (uint64_t)(msg_num) * ATR_RING_SLOT_SIZE(msg_size))
/* An upper bound on any ring the limits allow: n * (msg_size + 16) <= 128 KiB and our slot is
 * at most 23 bytes longer than CANN's, so a ring is under 128 KiB + 1024 * 23 + 128 bytes.
 * The library reserves this much address space per object. */
#define ATR_RING_MAX_BYTES (256u * 1024u)

/* atr_ring_header.flags */
#define ATR_RING_FLAG_NO_LOCK 0x1u /* single writer (CANN noLock = 1): no CAS, no busy drops */
/* Records are stamped with the machine's cycle counter (atraced/base/cycle_counter.h), not
 * CLOCK_MONOTONIC; counter_anchor is the counter's value at the monotonic anchor. Set only
 * where the daemon granted ATR_FEATURE_RING_COUNTER (or none was reached yet). */
#define ATR_RING_FLAG_COUNTER 0x2u
#define ATR_RING_KNOWN_FLAGS 0x3u

struct atr_ring_header {
  uint32_t magic;        /* ATR_RING_MAGIC */
  uint16_t version;      /* ATR_RING_VERSION */
  uint16_t header_size;  /* ATR_RING_HEADER_SIZE */
  uint32_t msg_num;      /* slots: a power of two, 1..ATR_RING_MAX_MSG_NUM */
  uint32_t msg_size;     /* payload bytes a record may hold (CANN msgSize) */
  uint32_t slot_size;    /* ATR_RING_SLOT_SIZE(msg_size) */
  uint32_t flags;        /* ATR_RING_FLAG_* */
  /* The clocks sampled together when the ring was created: a record's wall time is
   * realtime_ns + (timestamp_ns - monotonic_ns). With ATR_RING_FLAG_COUNTER the stamps are
   * counter ticks and the daemon measures the tick rate itself, from counter_anchor to its
   * own sample at save (docs/TIMESTAMPS.md). */
  uint64_t realtime_ns;    /* CLOCK_REALTIME, ns since the epoch */
  uint64_t monotonic_ns;   /* CLOCK_MONOTONIC, ns */
  uint64_t counter_anchor; /* the cycle counter at monotonic_ns; 0 without ATR_RING_FLAG_COUNTER */
  uint8_t reserved0[16];
  /* Written by submitters; on their own cache line, away from the read-only fields. */
  uint64_t write_index; /* slots claimed so far (the next claim's k) */
  uint64_t dropped;     /* records refused because their slot was still being written */
  uint8_t reserved1[48];
};
ATR_STATIC_ASSERT(sizeof(struct atr_ring_header) == ATR_RING_HEADER_SIZE, "atr_ring_header is 128 bytes");

struct atr_ring_slot_head {
  uint64_t seq_done;     /* k + 1 once record k is complete; 0 = never written */
  uint64_t timestamp_ns; /* CLOCK_MONOTONIC when submitted, or the counter (ATR_RING_FLAG_COUNTER) */
  uint32_t length;       /* payload bytes, <= msg_size (longer records were truncated) */
  uint8_t buffer_type;   /* AtraceSubmitByType's bufferType: selects the struct entry */
  uint8_t reserved[3];
};
ATR_STATIC_ASSERT(sizeof(struct atr_ring_slot_head) == ATR_RING_SLOT_HEAD_SIZE, "slot head is 24 bytes");

/* Byte offsets of the header fields (for code that reads a byte copy field by field). */
#define ATR_RING_OFF_MAGIC 0u
#define ATR_RING_OFF_VERSION 4u
#define ATR_RING_OFF_HEADER_SIZE 6u
#define ATR_RING_OFF_MSG_NUM 8u
#define ATR_RING_OFF_MSG_SIZE 12u
#define ATR_RING_OFF_SLOT_SIZE 16u
#define ATR_RING_OFF_FLAGS 20u
#define ATR_RING_OFF_REALTIME 24u
#define ATR_RING_OFF_MONOTONIC 32u
#define ATR_RING_OFF_COUNTER_ANCHOR 40u
#define ATR_RING_OFF_WRITE_INDEX 64u
#define ATR_RING_OFF_DROPPED 72u

#endif /* ATRACED_PROTO_RING_LAYOUT_H_ */
