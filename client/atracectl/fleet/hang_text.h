// The parts of hang's report that every input prints the same (bundles: verbs/cmd_hang.cc;
// the journal: journal/journal_report.h), so the two forms say the same things in the same
// words and keys. Text is escaped (common/escape.h) and rank lists are ranges, cut near
// kRanksShown characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleet/fleet_report.h"

namespace atracectl {

inline constexpr size_t kRanksShown = 4096;  // characters of a rank list in text

// "Ranks seen", the world sizes labelled, the conflicts, the aged ranks (a line per host and
// reason: when the daemon removed their dumps, why, and what to change) and the missing ranks;
// `where_missing` ends the missing line with what "missing" means for the input.
std::string SeenText(const FleetReport& r, const std::string& where_missing);
// "Classes by the main thread's stack, smallest first", the likely culprits, and the stack
// reports ignored as unverified (a process's own, fleet_report.h), with what was used instead.
std::string ClassesText(const FleetReport& r);
// The shared keys, without braces: ranks_expected, world_size, world_size_claims, job_uid,
// ranks_seen, missing, missing_count, aged ([{rank, host, reason, at_us, at, exported, uid,
// dir}]), conflicts, classes, outliers, no_stacks, unverified_stacks.
std::string SharedJson(const FleetReport& r);
std::string JsonInts(const std::vector<int64_t>& v);

// Per host, the ranks that stopped recording first by that host's own clock, in both forms of
// hang: the text block (its heading, then a line a host while `out` stays under `max_text`,
// each rank list within `max_rank_chars`), and the JSON object {"host":[ranks],...}.
void AppendFirstStoppedText(const std::map<std::string, std::vector<int64_t>>& per_host, size_t max_rank_chars,
                            size_t max_text, std::string* out);
std::string FirstStoppedJson(const std::map<std::string, std::vector<int64_t>>& per_host);

}  // namespace atracectl
