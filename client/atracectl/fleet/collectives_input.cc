#include "fleet/collectives_input.h"

#include <algorithm>

#include "files/ledger_text.h"

namespace atracectl {

std::vector<CommLedger> CommLedgersOf(const atraced::proto::LedgerSnapshot& snap) {
  std::vector<CommLedger> out;
  // SummarizeLedger keeps each instance (name, rank, size) apart; a communicator made again
  // under the same name counts from 1 again: the instance called last is the one in use.
  for (const CommunicatorSummary& s : SummarizeLedger(snap)) {
    auto same = std::find_if(out.begin(), out.end(), [&](const CommLedger& c) { return c.name == s.name; });
    if (same != out.end() && same->last_entered.index > s.last_entered.index) continue;
    CommLedger c;
    c.name = s.name;
    c.name_cut = s.last_entered.comm_cut;
    c.rank_known = s.rank_known;
    c.rank = s.rank;
    c.size = s.size;
    c.last_entered = s.last_entered;
    c.last_completed = s.last_completed;
    c.completion_tracked = snap.completion_tracked();
    for (const atraced::proto::LedgerRecord& r : snap.records) {
      if (r.comm == s.name && r.rank_known == s.rank_known && r.rank == s.rank && r.size == s.size) c.recent.push_back(r);
    }
    std::stable_sort(c.recent.begin(), c.recent.end(),
                     [](const auto& a, const auto& b) { return a.comm_seq < b.comm_seq; });
    if (c.recent.size() > kRecentCalls) c.recent.erase(c.recent.begin(), c.recent.end() - kRecentCalls);
    if (same != out.end()) {
      *same = std::move(c);
    } else {
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace atracectl
