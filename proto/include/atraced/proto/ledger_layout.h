/* Layout of the collective ledger: one record per collective call a process made through
 * HCCL's C API, written by libatrace_hccl into a sealed memfd that the daemon holds like a
 * tracer ring (RING_REGISTER with ATR_RING_LEDGER), and saved as hccl_tracer_ledger.bin,
 * byte for byte this layout (PROTOCOL.md, "The collective ledger"). C99 and C++.
 *
 *   offset 0                          struct atr_ledger_header (128 bytes)
 *   offset 128 + i * record_size      record i, 0 <= i < record_count
 *
 * Little-endian host order. Record k (the k-th call, k = 0, 1, ...) goes to slot
 * k & (record_count - 1) with sequence k + 1 (0: never written). The writer claims k with
 * one fetch-and-add on write_index, stores seq_start = k + 1, clears the completion pair,
 * writes the fields, and stores seq_done = k + 1 last (release). seq_done is the first word
 * of a record and seq_start the last: a reader copying in ascending address order (as the
 * daemon copies rings, ring_reader.h) sees seq_done != seq_start whenever a writer started
 * the slot while the copy was made, so a torn record is never taken for a complete one.
 *
 * Completion: where the process runs an acl runtime, the library records an event on the
 * call's stream and one thread of it polls the event; when it completes it stores
 * completion_ns, then completion_seq = k + 1 (release). A reader takes a completion only
 * when completion_seq equals the record's sequence and completion_ns is not before the
 * enqueue: a slot reused meanwhile never inherits another call's completion.
 */
#ifndef ATRACED_PROTO_LEDGER_LAYOUT_H_
#define ATRACED_PROTO_LEDGER_LAYOUT_H_

#include <stdint.h>

#include "atraced/proto/wire.h" /* ATR_STATIC_ASSERT */

#define ATR_LEDGER_MAGIC 0x4744454cu /* the bytes "LEDG" */
#define ATR_LEDGER_VERSION 1u
#define ATR_LEDGER_HEADER_SIZE 128u
#define ATR_LEDGER_RECORD_SIZE 192u
#define ATR_LEDGER_MAX_RECORDS 1024u /* a power of two, 1..1024 */
#define ATR_LEDGER_BYTES(records) ((uint64_t)ATR_LEDGER_HEADER_SIZE + (uint64_t)(records) * ATR_LEDGER_RECORD_SIZE)
/* HCCL's communicator names are up to 127 bytes (ROOTINFO identifiers); longer ones are cut
 * here and the record says so (ATR_LEDGER_REC_NAME_CUT). */
#define ATR_LEDGER_COMM_MAX 104u

/* atr_ledger_header.flags */
/* An acl runtime was found: records made since carry ATR_LEDGER_REC_COMPLETION when an event
 * was recorded for them. Without it the ledger holds enqueue times only. */
#define ATR_LEDGER_FLAG_COMPLETION 0x1u
#define ATR_LEDGER_KNOWN_FLAGS 0x1u

/* atr_ledger_record.flags */
#define ATR_LEDGER_REC_COMPLETION 0x01u /* an event was recorded after the call: completion is tracked */
#define ATR_LEDGER_REC_NAME_CUT 0x02u   /* the communicator's name was longer than ATR_LEDGER_COMM_MAX */
#define ATR_LEDGER_REC_NO_RANK 0x04u    /* HCCL did not tell the rank and size: both are 0 */
#define ATR_LEDGER_REC_KNOWN 0x07u

/* atr_ledger_record.peer when the op has no root or peer. */
#define ATR_LEDGER_NO_PEER 0xffffffffu

/* atr_ledger_record.op: HCCL's collectives, numbered here (HCCL has no public op enum). */
enum atr_ledger_op {
  ATR_LEDGER_OP_ALL_REDUCE = 1,
  ATR_LEDGER_OP_BROADCAST = 2,
  ATR_LEDGER_OP_ALL_GATHER = 3,
  ATR_LEDGER_OP_ALL_GATHER_V = 4,
  ATR_LEDGER_OP_REDUCE_SCATTER = 5,
  ATR_LEDGER_OP_REDUCE_SCATTER_V = 6,
  ATR_LEDGER_OP_ALL_TO_ALL = 7,
  ATR_LEDGER_OP_ALL_TO_ALL_V = 8,
  ATR_LEDGER_OP_ALL_TO_ALL_VC = 9,
  ATR_LEDGER_OP_REDUCE = 10,
  ATR_LEDGER_OP_SCATTER = 11,
  ATR_LEDGER_OP_SEND = 12,
  ATR_LEDGER_OP_RECV = 13,
  ATR_LEDGER_OP_BATCH_SEND_RECV = 14,
  ATR_LEDGER_OP_BARRIER = 15
};
#define ATR_LEDGER_OP_MAX 15u

struct atr_ledger_header {
  uint32_t magic;        /* ATR_LEDGER_MAGIC */
  uint16_t version;      /* ATR_LEDGER_VERSION */
  uint16_t header_size;  /* ATR_LEDGER_HEADER_SIZE */
  uint32_t record_count; /* slots: a power of two, 1..ATR_LEDGER_MAX_RECORDS */
  uint32_t record_size;  /* ATR_LEDGER_RECORD_SIZE */
  uint32_t flags;        /* ATR_LEDGER_FLAG_*; may gain bits while the process runs */
  uint32_t reserved0;
  /* The clocks sampled together when the ledger was made: a time t (CLOCK_MONOTONIC) in a
   * record is at realtime_ns + (t - monotonic_ns) of the wall clock. */
  uint64_t realtime_ns;
  uint64_t monotonic_ns;
  uint8_t reserved1[24];
  uint64_t write_index; /* calls claimed so far (the next call's k); on its own cache line */
  uint8_t reserved2[56];
};
ATR_STATIC_ASSERT(sizeof(struct atr_ledger_header) == ATR_LEDGER_HEADER_SIZE, "atr_ledger_header is 128 bytes");

struct atr_ledger_record {
  uint64_t seq_done;   /* k + 1 once the record is complete; 0 = never written */
  uint64_t enqueue_ns; /* CLOCK_MONOTONIC when the call was entered */
  uint64_t comm_seq;   /* the call's number in its communicator, from 1, as this process counts */
  uint64_t count;      /* elements (HCCL's count, sendCount or recvCount); items for BatchSendRecv */
  uint64_t stream;     /* the aclrtStream handle, an opaque number */
  uint32_t rank;       /* this process's rank in the communicator */
  uint32_t size;       /* the communicator's rank count */
  uint32_t peer;       /* root (Broadcast, Reduce, Scatter), peer (Send, Recv) or ATR_LEDGER_NO_PEER */
  uint32_t tid;        /* the calling thread */
  uint16_t op;         /* enum atr_ledger_op */
  uint8_t data_type;   /* HcclDataType (its value; 255 when the op has none) */
  uint8_t reduce_op;   /* HcclReduceOp (its value; 255 when the op has none) */
  uint8_t comm_len;    /* bytes of comm used, <= ATR_LEDGER_COMM_MAX */
  uint8_t flags;       /* ATR_LEDGER_REC_* */
  uint16_t reserved;
  char comm[ATR_LEDGER_COMM_MAX]; /* HcclGetCommName's name, not NUL-terminated */
  uint64_t completion_ns;  /* CLOCK_MONOTONIC when the call's event completed; 0: not (yet) */
  uint64_t completion_seq; /* k + 1 of the record completion_ns belongs to */
  uint64_t seq_start;      /* k + 1, stored first: see above */
};
ATR_STATIC_ASSERT(sizeof(struct atr_ledger_record) == ATR_LEDGER_RECORD_SIZE, "atr_ledger_record is 192 bytes");

/* Byte offsets, for code that reads a byte copy field by field. */
#define ATR_LEDGER_OFF_RECORD_COUNT 8u
#define ATR_LEDGER_OFF_RECORD_SIZE 12u
#define ATR_LEDGER_OFF_FLAGS 16u
#define ATR_LEDGER_OFF_REALTIME 24u
#define ATR_LEDGER_OFF_MONOTONIC 32u
#define ATR_LEDGER_OFF_WRITE_INDEX 64u

#endif /* ATRACED_PROTO_LEDGER_LAYOUT_H_ */
