// A process's collective ledger (proto/ledger_reader.h) as collectives.h takes it: per
// communicator name, the latest instance's last call entered, last completed and newest calls.
#pragma once

#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "fleet/collectives.h"

namespace atracectl {

inline constexpr size_t kRecentCalls = 16;  // per communicator: what mismatches are looked for in

// At most kMaxCommunicators (ledger_text.h) communicators, in order of first appearance.
std::vector<CommLedger> CommLedgersOf(const atraced::proto::LedgerSnapshot& snap);

}  // namespace atracectl
