// A collective ledger (ledger_reader.h) per communicator: the last call each entered and the
// last known to have completed. What `atracectl info` shows, what `hang` groups ranks by, and
// what the daemon's hang journal entry carries (docs/FLEET.md, ATRACE_COLL_<n>), so that the
// journal and a bundle say the same of one ledger.
//
// The records are the process's word (checked by ReadLedger, not believed): names stay raw
// bytes here, every list is bounded, and the journal value is escaped to printable ASCII and
// parsed back without trusting it (the parser is fuzzed through tests/fuzz/hang_entry_fuzzer.cc).
#ifndef ATRACED_PROTO_LEDGER_SUMMARY_H_
#define ATRACED_PROTO_LEDGER_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/proto/ledger_reader.h"

namespace atraced::proto {

struct CommunicatorSummary {
  std::string name;  // raw: escape to show
  bool rank_known = false;
  uint32_t rank = 0;
  uint32_t size = 0;
  uint64_t calls = 0;                      // records of it in the ledger
  LedgerRecord last_entered;               // the highest comm_seq
  std::optional<uint64_t> last_completed;  // the highest comm_seq whose completion is known
};

inline constexpr size_t kMaxCommunicators = 64;

// Per communicator (by name, rank and size), in order of first appearance; at most
// kMaxCommunicators (a hostile ledger may name a thousand), `*more` counting the records of
// the communicators left out.
std::vector<CommunicatorSummary> SummarizeLedger(const LedgerSnapshot& snap, size_t* more = nullptr);

// One per name: a communicator made again under the same name counts from 1 again, so the
// instance whose last call came last in the process (the highest index) is the one in use.
// In order of the names' first appearance.
std::vector<CommunicatorSummary> LatestPerName(const std::vector<CommunicatorSummary>& summaries);

// One communicator as a journal field's value (ATRACE_COLL_<n>), printable ASCII, at most
// kCommJournalValueMax bytes:
//   "rank=R size=S seq=N op=O count=C dtype=D reduce=X peer=P completed=M tracked=T cut=K name=NAME"
// R and S are "?" when HCCL did not tell them; O, D and X the ledger's codes (ledger_layout.h);
// P "-" without a root or peer; M the last completed seq, "-" when none is known to have
// completed; T 1 when the ledger tracks completions (0: enqueues only); K 1 when the ledger cut
// the name (0 else); NAME the name's bytes with every byte outside 0x21..0x7e and '\\' written
// as \xNN.
inline constexpr size_t kCommJournalValueMax = 640;
// The most communicators of one process a hang entry carries (ATRACE_COLL_0..15).
inline constexpr size_t kMaxJournalCommunicators = 16;
std::string CommunicatorJournalValue(const CommunicatorSummary& c, bool completion_tracked);

struct CommunicatorJournal {
  CommunicatorSummary summary;  // calls is 0: the value does not say; last_entered.index is 0
  bool completion_tracked = false;
};
// The value back, or nullopt when it is not exactly that form (a field out of range, a bad
// escape, a name longer than ATR_LEDGER_COMM_MAX bytes, trailing bytes).
std::optional<CommunicatorJournal> ParseCommunicatorJournalValue(std::string_view value);

}  // namespace atraced::proto

#endif  // ATRACED_PROTO_LEDGER_SUMMARY_H_
