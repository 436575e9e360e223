#include "fleet/collectives_input.h"

#include <algorithm>

namespace atracectl {

CommLedger CommLedgerOf(const atraced::proto::CommunicatorSummary& s, bool completion_tracked) {
  CommLedger c;
  c.name = s.name;
  c.name_cut = s.last_entered.comm_cut;
  c.rank_known = s.rank_known;
  c.rank = s.rank;
  c.size = s.size;
  c.last_entered = s.last_entered;
  c.last_completed = s.last_completed;
  c.completion_tracked = completion_tracked;
  c.recent.push_back(s.last_entered);
  return c;
}

std::vector<CommLedger> CommLedgersOf(const atraced::proto::LedgerSnapshot& snap) {
  std::vector<CommLedger> out;
  // A communicator made again under the same name counts from 1 again: the instance called
  // last is the one in use (LatestPerName).
  for (const atraced::proto::CommunicatorSummary& s : LatestPerName(SummarizeLedger(snap))) {
    CommLedger c = CommLedgerOf(s, snap.completion_tracked());
    c.recent.clear();
    for (const atraced::proto::LedgerRecord& r : snap.records) {
      if (r.comm == s.name && r.rank_known == s.rank_known && r.rank == s.rank && r.size == s.size) c.recent.push_back(r);
    }
    std::stable_sort(c.recent.begin(), c.recent.end(),
                     [](const auto& a, const auto& b) { return a.comm_seq < b.comm_seq; });
    if (c.recent.size() > kRecentCalls) c.recent.erase(c.recent.begin(), c.recent.end() - kRecentCalls);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace atracectl
