// The culprit line of `hang`, in both forms (bundles and the journal): for each likely
// culprit (fleet_report.h), the frame where its main thread parts from the largest class it
// is not in (function and file:line), and the command to run next. What an operator acts on:
// "Culprit: job J1, rank 5, host n2, pid 1005 (blocked 30 s): parts from ranks 0-4,6-7 at
// load_next_batch (loader.c:88)", then "next: ssh n2 atracectl info 1005".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleet/fleet_report.h"

namespace atracectl {

struct CulpritPlace {
  int64_t rank = 0;
  const RankClaim* claim = nullptr;
  std::string parts_from;        // the ranks of the class it is compared with, as ranges; "" if none
  std::string function, source;  // the frame where its stack parts from theirs; source "" if unknown
};

// Each of r.culprits, in rank order, placed.
std::vector<CulpritPlace> PlaceCulprits(const FleetReport& r);

// "ssh HOST atracectl info PID" where atraced dumped the process, else "... dump PID"; the
// host as it is when it is a plain host name, else quoted for the shell ("HOST" when unknown).
std::string NextCommand(const std::string& host, int32_t pid, bool dumped);

// "Culprit: job J, rank R, host H, pid P (STATE): parts from ranks X at F (SOURCE)\n", escaped
// for a terminal; " (STATE)" only when `state` is given.
std::string CulpritLine(const CulpritPlace& c, const std::string& state);

// The members the JSON object of a culprit shares in both forms: "job", "rank", "host", "pid",
// "function", "source", "parts_from" (no braces, no trailing comma).
std::string CulpritJsonMembers(const CulpritPlace& c);

}  // namespace atracectl
