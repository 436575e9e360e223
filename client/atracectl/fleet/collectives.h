// Where the ranks of a job are in their collectives, from each rank's collective ledger
// (proto/ledger_reader.h, summarized per communicator by collectives_input.h): what `hang`
// leads with. Pure: no I/O, no escaping (collectives_text.h shows it).
//
// Per communicator (by HCCL's name):
//   - classes: its ranks grouped by the last sequence number they entered and the last they
//     completed, smallest class first (ties: the class behind first);
//   - missing: the ranks of the communicator (its own rank numbers, 0..size-1) that no
//     ledger names;
//   - mismatches: calls with the same sequence number whose op, count, dtype, reduce op or
//     root differ between ranks (what HCCL's inconsistent_check finds);
// and over the job: the stuck communicator (the smallest communicator whose ranks are not all
// at the same call), the ranks behind in it, and the communicators whose ranks wait on it.
//
// A rank without a ledger whose saved rings hold HCCL's own records (hccl_records.h) is read
// from them: its numbers are HCCL's record index, so classes, "behind" and mismatches compare
// ranks of one source only (ledger with ledger, HCCL's records with HCCL's records).
//
// A ledger is its process's word. So:
//   - a job rank claimed by two or more processes is a conflict, never merged: the claimant
//     whose uid is the job's (the uid most ranks claimed by one process alone share) is
//     used; when that does not pick exactly one, the rank is left out and said;
//   - a ledger written by another uid than the rank's other evidence (its stacks) is not
//     used for that rank, and said;
//   - sizes and sequence numbers are data: a size larger than the job and every rank seen is
//     bounded by what the ledgers show, and every list held is bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "atraced/proto/ledger_reader.h"

namespace atracectl {

// One process's view of one communicator (its latest instance in the ledger).
struct CommLedger {
  std::string name;  // raw bytes: escape to show
  bool name_cut = false;
  bool rank_known = false;  // rank and size as HCCL told them
  uint32_t rank = 0;        // in the communicator
  uint32_t size = 0;
  atraced::proto::LedgerRecord last_entered;  // the highest comm_seq
  std::optional<uint64_t> last_completed;     // nullopt: none known to have completed
  bool completion_tracked = false;            // false: the ledger records enqueues only
  std::vector<atraced::proto::LedgerRecord> recent;  // its newest calls, by comm_seq
  // From HCCL's own atrace records (hccl_records.h), not a ledger: comm_seq is HCCL's record
  // index, compared only with other ranks' HCCL records.
  bool from_hccl_records = false;
  bool rank_only = false;  // HCCL's records told `rank` (localRank), not the size
};

// One process that says it is a rank, with what its ledger says.
struct RankLedger {
  int64_t rank = 0;  // the job's rank (RANK_ID)
  std::string host;
  int32_t pid = 0;
  std::optional<uint32_t> uid;           // of the directory the ledger came from (nullopt: not said)
  std::optional<uint32_t> evidence_uid;  // of the rank's other evidence (its stacks' directory)
  enum class Ledger { kNone, kUnreadable, kRead } ledger = Ledger::kNone;
  std::string problem;  // why unreadable (raw)
  std::vector<CommLedger> comms;
  bool from_hccl_records = false;  // no ledger: `comms` come from HCCL's own records (hccl_records.h)
  uint64_t hccl_records_skipped = 0;  // of those, records that did not read
};

struct CommClass {
  std::vector<int64_t> ranks;  // job ranks, sorted
  uint64_t last_enqueued = 0;
  std::optional<uint64_t> last_completed;
  atraced::proto::LedgerRecord call;  // the call entered last (of the class's first rank)
  bool from_hccl_records = false;     // its numbers are HCCL's record index (CommLedger)
};

struct CommMismatch {
  uint64_t seq = 0;
  bool from_hccl_records = false;      // seq is HCCL's record index
  std::string field;                   // "op", "count", "dtype", "reduce", "root"
  std::vector<int64_t> ranks;          // the ranks not holding the most common value
  struct Value {
    std::string value;                 // as shown ("AllReduce", "4096", "fp16", "3", "none")
    std::vector<int64_t> ranks;
  };
  std::vector<Value> values;           // the most common first
};

struct CommReport {
  std::string name;  // raw
  bool name_cut = false;
  uint32_t size = 0;              // the size most of its ranks claim
  bool size_bounded = false;      // that size was implausible: `size` is what the ledgers show
  uint32_t size_claimed = 0;      // before bounding
  bool sizes_disagree = false;    // its ranks claim different sizes
  std::vector<CommClass> classes;        // smallest first
  std::vector<std::pair<uint64_t, uint64_t>> missing;  // ranges of its own rank numbers
  uint64_t missing_count = 0;
  std::vector<uint32_t> rank_conflicts;  // its rank numbers claimed by two job ranks
  std::vector<CommMismatch> mismatches;  // by seq, at most kMaxMismatches
  size_t mismatches_more = 0;
  bool behind = false;  // its ranks are not all at the same call (among those of one source)
  bool behind_from_hccl_records = false;  // the ranks behind are told by HCCL's records, not ledgers
  bool completion_tracked = false;  // every rank's ledger tracks completion
};

struct RankNote {
  int64_t rank = 0;
  std::string what;  // no untrusted bytes but `host`, which the printer escapes
  std::string host;
  int32_t pid = 0;
};

struct CollectivesReport {
  std::vector<CommReport> comms;   // the stuck one, those waiting on it, then by name
  size_t comms_more = 0;           // communicators left out (bound)
  std::optional<size_t> stuck;     // index in comms
  std::vector<size_t> waiting;     // indices: communicators whose ranks behind are in the stuck one
  std::vector<int64_t> culprits;   // the ranks behind in the stuck communicator
  std::vector<int64_t> no_ledger;  // ranks used with no ledger
  std::vector<int64_t> unreadable;
  std::vector<int64_t> from_hccl_records;  // ranks without a ledger read from HCCL's own records
  uint64_t hccl_records_skipped = 0;       // their records that did not read, in all
  std::vector<RankNote> notes;     // conflicts where a claimant has a ledger, refused ledgers
  size_t refused = 0;              // ledgers not used (another uid than the rank's stacks)
  std::optional<uint32_t> job_uid;
  bool any_ledger = false;
};

inline constexpr size_t kMaxReportedComms = 256;
inline constexpr size_t kMaxMismatches = 16;
inline constexpr uint64_t kMaxCommSize = 1u << 20;  // past it a size is bounded by the ledgers

// Whether class `k` of `c` is of the source whose ranks are behind (ledger or HCCL's records):
// the classes its "behind" compares.
bool OfBehindSource(const CommReport& c, const CommClass& k);

// `world_size`: the job's, when labelled (a communicator claiming more is bounded).
CollectivesReport AnalyzeCollectives(const std::vector<RankLedger>& ranks, std::optional<int64_t> world_size);

}  // namespace atracectl
