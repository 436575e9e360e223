// The job's uid: the one most ranks claimed by a single process share. Both reports that take
// one claimant per rank (stacks, fleet_report.cc; ledgers, collectives.cc) decide by it, so a
// rank another user's process also claims is resolved the same way in both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace atracectl {

// `Claim` has `std::optional<uint32_t> uid`. nullopt when no rank says, or on a tie.
template <class Claim>
std::optional<uint32_t> JobUid(const std::map<int64_t, std::vector<const Claim*>>& by_rank) {
  std::map<uint32_t, size_t> votes;
  for (const auto& [rank, claims] : by_rank) {
    if (claims.size() == 1 && claims.front()->uid) ++votes[*claims.front()->uid];
  }
  std::optional<uint32_t> best;
  size_t best_votes = 0;
  bool tie = false;
  for (const auto& [uid, n] : votes) {
    if (n > best_votes) {
      best = uid, best_votes = n, tie = false;
    } else if (n == best_votes) {
      tie = true;
    }
  }
  return tie ? std::nullopt : best;
}

}  // namespace atracectl
