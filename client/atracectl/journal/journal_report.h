// A job's report from the journal alone (hang --journal): its hang entries as RankClaims for
// the classification bundles use (fleet_report.h), and what only the journal gives: the host
// and pid of each rank as atraced saw them, its stall (busy or blocked, for how long), the
// file:line of its frames, and the dump atraced took. The culprit lines say where each culprit
// parts from the others and the command to run next.
//
// Last records carry no time the hosts agree on, so they are compared only within a host:
// per host, the ranks that stopped recording first (the entry's time less its stall, both
// that host's clock).
//
// What is printed is escaped (escape.h) and bounded: kMaxReportText bytes of text per job,
// past which the per-rank details are cut with a note; rank lists are ranges.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/fleet_report.h"
#include "journal/journal_reader.h"

namespace atracectl::journal {

inline constexpr size_t kMaxReportText = 16u << 20;

// The job's report, text or one JSON object (a line), from `entries`; `book` gives the counts
// of what was ignored.
std::string JobReportText(const std::string& job, const JobEntries& entries, const JournalBook& book);
std::string JobReportJson(const std::string& job, const JobEntries& entries, const JournalBook& book);

// The job's hosts, sorted, with an entry (hang or start); names a shell or a hosts file could
// misread ([^A-Za-z0-9._-], longer than 253 bytes) are left out and counted in `unsafe`.
std::vector<std::string> JobHosts(const JobEntries& entries, size_t* unsafe);

// "ssh HOST atracectl info PID" (its dump), or "... dump PID" when atraced could not dump it.
std::string NextCommand(const HangEntry& e);

}  // namespace atracectl::journal
