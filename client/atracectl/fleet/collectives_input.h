// A process's collective ledger (proto/ledger_reader.h) as collectives.h takes it: per
// communicator name, the latest instance's last call entered, last completed and newest calls.
#pragma once

#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "atraced/proto/ledger_summary.h"
#include "fleet/collectives.h"

namespace atracectl {

inline constexpr size_t kRecentCalls = 16;  // per communicator: what mismatches are looked for in

// At most kMaxCommunicators (ledger_summary.h) communicators, in order of first appearance.
std::vector<CommLedger> CommLedgersOf(const atraced::proto::LedgerSnapshot& snap);

// One communicator's summary alone (what a hang journal entry carries, ATRACE_COLL_<n>): its
// recent calls are its last call entered.
CommLedger CommLedgerOf(const atraced::proto::CommunicatorSummary& s, bool completion_tracked);

}  // namespace atracectl
