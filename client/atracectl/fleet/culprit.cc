#include "fleet/culprit.h"

#include <algorithm>

#include "common/escape.h"
#include "common/shell_words.h"
#include "fleet/fleet_groups.h"

namespace atracectl {
namespace {

// The largest class that does not hold `rank` (classes are smallest first); nullptr if none.
const StackClass* LargestOther(const FleetReport& r, int64_t rank) {
  for (auto it = r.classes.rbegin(); it != r.classes.rend(); ++it) {
    if (!std::binary_search(it->ranks.begin(), it->ranks.end(), rank)) return &*it;
  }
  return nullptr;
}

}  // namespace

std::vector<CulpritPlace> PlaceCulprits(const FleetReport& r) {
  std::vector<CulpritPlace> out;
  for (int64_t rank : r.culprits) {
    const RankClaim* claim = r.ranks.at(rank);
    CulpritPlace c{rank, claim, "", "", ""};
    const StackClass* other = LargestOther(r, rank);
    if (other != nullptr && !claim->stacks.empty()) {
      const ThreadFrames& main = MainThread(*claim);
      const std::vector<std::string>& mine = main.frames;
      // Frames are innermost first: count the outermost ones both share, and take the frame
      // just inside them, where this rank went another way.
      size_t shared = 0;
      while (shared < mine.size() && shared < other->stack.size() &&
             mine[mine.size() - 1 - shared] == other->stack[other->stack.size() - 1 - shared]) {
        ++shared;
      }
      if (!mine.empty()) {
        const size_t at = shared < mine.size() ? mine.size() - 1 - shared : 0;
        c.function = mine[at];
        c.source = at < main.sources.size() ? main.sources[at] : "";
      }
      c.parts_from = RankRanges(other->ranks);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string NextCommand(const std::string& host, int32_t pid, bool dumped) {
  const std::string where = host.empty() || host == "?" ? "HOST" : SafeHostName(host) ? host : ShellQuote(host);
  return "ssh " + where + " atracectl " + (dumped ? "info " : "dump ") + std::to_string(pid);
}

std::string CulpritLine(const CulpritPlace& c, const std::string& state) {
  const RankClaim& who = *c.claim;
  std::string o = "Culprit: job " + (who.job.empty() ? std::string("?") : TerminalLine(who.job)) + ", rank " +
                  std::to_string(c.rank) + ", host " + TerminalLine(who.host) + ", pid " + std::to_string(who.pid);
  if (!state.empty()) o += " (" + TerminalLine(state) + ")";
  if (!c.function.empty()) {
    o += ": parts from ranks " + c.parts_from + " at " + TerminalLine(c.function) +
         (c.source.empty() ? std::string(" (no source line)") : " (" + TerminalLine(c.source) + ")");
  }
  return o + "\n";
}

std::string CulpritJsonMembers(const CulpritPlace& c) {
  const RankClaim& who = *c.claim;
  return "\"job\":" + JsonString(who.job) + ",\"rank\":" + std::to_string(c.rank) + ",\"host\":" + JsonString(who.host) +
         ",\"pid\":" + std::to_string(who.pid) + ",\"function\":" + JsonString(c.function) +
         ",\"source\":" + JsonString(c.source) + ",\"parts_from\":" + JsonString(c.parts_from);
}

}  // namespace atracectl
