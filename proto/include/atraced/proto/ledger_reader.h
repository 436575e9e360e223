// Reads a collective ledger (ledger_layout.h) without trusting it: a byte copy of a live
// ledger memfd (the daemon's save) or a saved hccl_tracer_ledger.bin (atracectl show, info,
// and whatever groups ranks by sequence number).
//
// The ledger is written by the process it describes, which may be hostile or broken: every
// header field and record is checked before use, and a bad ledger yields the records that
// check out and a list of what was wrong, never a crash or a read out of bounds. Its text
// (the communicator's name) is returned as raw bytes: whoever shows it escapes it.
#ifndef ATRACED_PROTO_LEDGER_READER_H_
#define ATRACED_PROTO_LEDGER_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/proto/ledger_layout.h"

namespace atraced::proto {

inline constexpr std::string_view kLedgerFileName = "hccl_tracer_ledger.bin";

struct LedgerRecord {
  uint64_t index = 0;       // k: the call's position in the process's sequence of calls
  uint64_t enqueue_ns = 0;  // CLOCK_MONOTONIC of the process, at entry
  bool completion_tracked = false;        // an event was recorded for the call
  std::optional<uint64_t> completion_ns;  // when that event completed, if it has
  uint64_t comm_seq = 0;
  uint64_t count = 0;
  uint64_t stream = 0;
  bool rank_known = false;  // rank and size as HCCL told them
  uint32_t rank = 0;
  uint32_t size = 0;
  std::optional<uint32_t> peer;  // root or peer
  uint32_t tid = 0;
  uint16_t op = 0;
  uint8_t data_type = 0;
  uint8_t reduce_op = 0;
  std::string comm;  // raw bytes, at most ATR_LEDGER_COMM_MAX
  bool comm_cut = false;
};

struct LedgerSnapshot {
  bool header_valid = false;  // false: no records were read; `problems` says why
  uint32_t record_count = 0;
  uint32_t flags = 0;
  uint64_t realtime_ns = 0;  // clock anchors: wall time = realtime_ns + (t - monotonic_ns)
  uint64_t monotonic_ns = 0;
  uint64_t write_index = 0;  // calls claimed (the writer's own count)
  std::vector<LedgerRecord> records;  // complete, valid records, by index
  uint64_t empty = 0;    // slots never written
  uint64_t torn = 0;     // slots being written while the copy was made
  uint64_t invalid = 0;  // slots that contradict the layout
  std::vector<std::string> problems;  // one line per kind of problem, at most kMaxLedgerProblems

  bool completion_tracked() const { return (flags & ATR_LEDGER_FLAG_COMPLETION) != 0; }
};

inline constexpr size_t kMaxLedgerProblems = 8;
// The largest ledger a reader accepts: the layout's bound.
inline constexpr uint64_t kMaxLedgerBytes = ATR_LEDGER_BYTES(ATR_LEDGER_MAX_RECORDS);

// Validates and decodes a byte copy of a ledger. `expect_records`, when given, is what the
// registration said; a header that disagrees is refused. Bytes after the last record are
// ignored (a memfd may be page-rounded).
LedgerSnapshot ReadLedger(std::span<const uint8_t> bytes, std::optional<uint32_t> expect_records = std::nullopt);

// Copies a live ledger mapping into `out`: the header, then the slots a writer may have
// touched (below write_index, all of them once it passed record_count), in ascending
// address order with acquire loads (ring_reader.h's CopyRingSnapshot); the rest is zeros.
// Returns the bytes read from the mapping.
size_t CopyLedgerUsed(const void* mapping, size_t size, std::vector<uint8_t>* out);

// Validates only the header of a live ledger mapping `size` bytes long: what a registration
// and a save's plan check. The snapshot has header_valid, the header's fields and the
// problems, no records.
LedgerSnapshot ReadLedgerHeader(const void* mapping, size_t size, std::optional<uint32_t> expect_records);

// Reads and decodes a saved ledger file (at most kMaxLedgerBytes are read). False with `why`
// when it cannot be read; a file that reads but does not check out gives header_valid false.
bool ReadLedgerFile(const std::string& path, LedgerSnapshot* out, std::string* why);

// Names for display: HCCL's names without the prefix ("AllReduce", "fp16", "sum"), or
// "op 77" / "dtype 99" / "reduce 9" for a value HCCL does not define.
std::string LedgerOpName(uint16_t op);
std::string HcclDataTypeName(uint8_t data_type);
std::string HcclReduceOpName(uint8_t reduce_op);
// Whether the op has a data type, a reduce op, a root or a peer (what a display shows).
bool LedgerOpHasReduce(uint16_t op);

}  // namespace atraced::proto

#endif  // ATRACED_PROTO_LEDGER_READER_H_
