// HCCL's own atrace records (docs/HCCL_LEDGER.md, "HCCL's own records"), read as a second
// source of where a rank is in its communicators when it has no ledger (libatrace_hccl was
// not preloaded): hang takes them from the rank's saved rings.
//
// HCCL opens one schedule tracer per communicator, named "HCCL_<tid>_<device>", and writes
// each record as "<tid>_<index>_<text>" cut into pieces of 111 bytes, one atrace record each;
// <index> counts the records of that communicator (an entry and a success record per call).
// An entry record reads
//   "<tid>_<index>_Entry-HcclAllReduceInner: tag[AllReduce_<comm>], sendBuf[..], recvBuf[..],
//    count[4096], dataType[float16], op[sum], localRank[3], streamId[..], ..."
// What is taken of each entry: its communicator (the tag after the op's prefix), the index
// (as the call's number: HCCL's, not the ledger's), the op, count, data type, reduce op,
// root or peer, and the thread.
//
// The records are the process's own bytes: every field is checked, a record is at most
// kMaxHcclRecordBytes joined, the communicators held per process are bounded, and a record
// that does not read is skipped and counted. Names are raw: whoever shows them escapes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "fleet/collectives.h"

namespace atracectl {

inline constexpr size_t kHcclPieceBytes = 111;      // hccl_trace_info.cc's TRACE_MAX_MSG_SIZE
inline constexpr size_t kMaxHcclRecordBytes = 2048;  // joined pieces; HCCL's lines are < 700

// "HCCL_<tid>_<device>": the object of a ring HCCL opened.
bool IsHcclObject(std::string_view object);

enum class HcclRecordKind { kEntry, kOther, kMalformed };

// One joined record read: an entry (`call` set), another record of HCCL's (a success record,
// an algorithm's choice), or one that does not read.
struct HcclRecordRead {
  HcclRecordKind kind = HcclRecordKind::kMalformed;
  atraced::proto::LedgerRecord call;  // for an entry: comm_seq is HCCL's index, rank_known false
  bool local_rank = false;            // call.rank is the entry's localRank
};
HcclRecordRead ReadHcclRecord(std::string_view record);

// The records of one process's HCCL rings, fed ring by ring in ring order.
class HcclRecords {
 public:
  // Starts a ring (a trace file): pieces are joined within one ring only.
  void BeginRing();
  void Piece(std::string_view text);
  void EndRing();

  // Per communicator (at most kMaxCommunicators, first seen first): the entry with the
  // highest index and the newest entries (kRecentCalls), as collectives.h takes them.
  std::vector<CommLedger> Comms() const;
  uint64_t entries() const { return entries_; }
  uint64_t skipped() const { return skipped_; }  // malformed records, and entries past the bound
  bool any() const { return entries_ != 0; }

 private:
  void Finish();
  std::string pending_;
  bool joining_ = false;  // the last piece was full: the next may continue it
  bool over_ = false;     // the record being joined passed kMaxHcclRecordBytes
  uint64_t entries_ = 0;
  uint64_t skipped_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, std::map<uint64_t, atraced::proto::LedgerRecord>> by_comm_;  // index -> entry
  std::map<std::string, uint32_t> local_ranks_;  // the latest entry's localRank, per communicator
};

}  // namespace atracectl
