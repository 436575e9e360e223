// Reads a snapshot of a libascend_trace ring (ring_layout.h) without trusting it.
//
// The ring's owner is an application the daemon does not trust: every header field and
// every slot is checked before it is used, and a corrupt or hostile ring yields the records
// that check out plus a list of what was wrong, never a crash or a read out of bounds.
//
// Two steps, so that the parsing is a pure function a fuzzer and tests can drive:
//   1. CopyRingSnapshot: copy the live mapping (PROT_READ) into private memory, in the
//      order the slot protocol needs (ring_layout.h). This is the only function here that
//      touches shared memory.
//   2. ReadRingSnapshot: validate and decode the copy.
#ifndef ATRACED_PROTO_RING_READER_H_
#define ATRACED_PROTO_RING_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "atraced/proto/ring_layout.h"

namespace atraced::proto {

// Copies `size` bytes of a live ring mapping into `out` (resized to `size`), word by word in
// ascending address order with acquire loads, so a slot's seq_start is read after its
// payload (a plain memcpy may copy in any order and defeat torn-record detection).
// `mapping` must be 8-byte aligned (an mmap address is).
void CopyRingSnapshot(const void* mapping, size_t size, std::vector<uint8_t>* out);

// As CopyRingSnapshot, but reads only what a writer may have touched: the header, then the
// slots below the header's write_index (all of them once it passed msg_num); the rest of
// `out` is zeros, which the reader takes for never-written slots. Reading a page of a memfd
// that nobody wrote makes the kernel allocate it, charged to the reader: a daemon holding
// thousands of mostly empty rings would otherwise pay for every page of each at every save.
// A header that does not describe a ring within `size` is copied alone (the reader rejects
// it). Returns the bytes read from the mapping.
//
// `max_slots` caps the slots read below that: a save planned on the event loop from the
// header (RingSavePlan in the daemon) reserved room for that many records, and records
// written after the plan are not its to save.
size_t CopyRingUsed(const void* mapping, size_t size, std::vector<uint8_t>* out,
                    uint64_t max_slots = UINT64_MAX);

struct RingRecord {
  uint64_t index = 0;         // k: the record's position in the writer's sequence
  uint64_t timestamp_ns = 0;  // CLOCK_MONOTONIC, or counter ticks, at submit, as the writer stored it
  uint8_t buffer_type = 0;
  std::span<const uint8_t> data;  // `length` bytes, views into the snapshot passed in
};

struct RingSnapshot {
  bool header_valid = false;  // false: no records were read; `problems` says why
  uint32_t msg_num = 0;
  uint32_t msg_size = 0;
  uint32_t flags = 0;
  uint64_t realtime_ns = 0;   // clock anchors from the header (see ring_layout.h)
  uint64_t monotonic_ns = 0;
  uint64_t counter_anchor = 0;  // the cycle counter at monotonic_ns (ATR_RING_FLAG_COUNTER)
  uint64_t write_index = 0;
  uint64_t dropped = 0;       // the writers' own count of records refused (busy slot)
  std::vector<RingRecord> records;  // complete, valid records, oldest first
  uint64_t empty = 0;    // slots never written
  uint64_t torn = 0;     // slots being written while the copy was made
  uint64_t invalid = 0;  // slots whose head contradicts the layout (corrupt or hostile)
  std::vector<std::string> problems;  // one line per kind of problem, for the log
};

// What the daemon was told at registration; a header that disagrees is refused.
struct RingExpectation {
  uint32_t msg_num = 0;
  uint32_t msg_size = 0;
  uint32_t flags = 0;
};

// Validates and decodes a byte copy of a ring. Records are sorted by timestamp, then by
// index. Never reads outside `bytes`; at most kMaxRingProblems problem lines are kept.
RingSnapshot ReadRingSnapshot(std::span<const uint8_t> bytes,
                              const std::optional<RingExpectation>& expect = std::nullopt);

// Validates only the header of a live ring mapping `size` bytes long (copied as
// CopyRingSnapshot does): what a registration checks, with no copy of the slots. The
// snapshot has header_valid, the layout fields and the problems, no records.
RingSnapshot ReadRingHeader(const void* mapping, size_t size, const std::optional<RingExpectation>& expect);

// The records view into the bytes passed in: a temporary copy would leave them dangling.
RingSnapshot ReadRingSnapshot(std::vector<uint8_t>&& bytes,
                              const std::optional<RingExpectation>& expect = std::nullopt) = delete;

inline constexpr size_t kMaxRingProblems = 8;

}  // namespace atraced::proto

#endif  // ATRACED_PROTO_RING_READER_H_
