// The journal fields `atracectl hang --journal` reads: the names atraced's hang watch writes
// (daemon/app/src/journal_events.cc, JournalFields of a ProcessEvent) and the trusted fields
// journald adds itself. One place, so that the daemon's names and the collector's are
// compared in one look (docs/FLEET.md lists them for journalctl users).
#pragma once

#include <cstddef>
#include <string_view>

namespace atracectl::journal {

// Written by atraced (any local process can write them too: see the trusted fields below).
inline constexpr std::string_view kEvent = "ATRACE_EVENT";          // "hang" | "start" | "aged" | ...
inline constexpr std::string_view kEventHang = "hang";
inline constexpr std::string_view kEventStart = "start";
// An event directory aging removed (daemon/app/src/journal_events.cc, JournalFields of a
// StoreEvent): a dump's carries ATRACE_DUMP, and its rank's dump is then aged, not missing.
inline constexpr std::string_view kEventAged = "aged";
inline constexpr std::string_view kReason = "ATRACE_REASON";        // count, bytes, keep-free, age, vacuum
inline constexpr std::string_view kDump = "ATRACE_DUMP";            // "dump" | "hang": a dump's directory
inline constexpr std::string_view kExported = "ATRACE_EXPORTED";    // "1": a bundle held it first
inline constexpr std::string_view kJob = "ATRACE_JOB";
inline constexpr std::string_view kRank = "ATRACE_RANK";
inline constexpr std::string_view kWorldSize = "ATRACE_WORLD_SIZE";
inline constexpr std::string_view kPid = "ATRACE_PID";              // the process the entry is about
inline constexpr std::string_view kUid = "ATRACE_UID";              // its uid
inline constexpr std::string_view kComm = "ATRACE_COMM";            // its program
inline constexpr std::string_view kStallSeconds = "ATRACE_STALL_S"; // since its rings last moved
inline constexpr std::string_view kState = "ATRACE_STATE";          // "busy" | "blocked" | "running"
inline constexpr std::string_view kStalledPid = "ATRACE_STALLED_PID";  // whose stall set the dump off
inline constexpr std::string_view kPath = "ATRACE_PATH";            // its dump's directory (aged: the one removed)
inline constexpr std::string_view kRefused = "ATRACE_REFUSED";      // why it was not dumped
// ATRACE_FRAME_0.. : the main thread's frames, innermost first, each a backtrace line
// "#k 0xPC 0xBASE MODULE[ SYMBOL+0xOFF][ at FILE:LINE]" (the [stack] section's form).
inline constexpr std::string_view kFramePrefix = "ATRACE_FRAME_";
// ATRACE_LAST_RECORD_0.. : "TRACER: RECORD", each tracer's newest record.
inline constexpr std::string_view kLastRecordPrefix = "ATRACE_LAST_RECORD_";
// ATRACE_COLL_0.. : each communicator of the process's collective ledger, its last call
// entered and last completed (proto::CommunicatorJournalValue, atraced/proto/ledger_summary.h).
inline constexpr std::string_view kCommunicatorPrefix = "ATRACE_COLL_";

// Trusted fields: journald sets them from the sender's credentials (a process cannot), and
// systemd-journal-remote keeps them as the sending host's journald wrote them.
inline constexpr std::string_view kTrustedUid = "_UID";
inline constexpr std::string_view kTrustedComm = "_COMM";
inline constexpr std::string_view kTrustedUnit = "_SYSTEMD_UNIT";
inline constexpr std::string_view kTrustedHostname = "_HOSTNAME";
inline constexpr std::string_view kDaemonUnit = "atraced.service";
inline constexpr std::string_view kDaemonComm = "atraced";

// What one entry may hold, as read (sd_journal_set_data_threshold and the parser): a field
// value past kMaxValue bytes is cut there; at most kMaxFrames frames, kMaxLastRecords last
// records and proto::kMaxJournalCommunicators communicators are kept, the rest of the entry's
// numbered fields are ignored.
inline constexpr size_t kMaxValue = 1024;
inline constexpr size_t kMaxFrames = 32;
inline constexpr size_t kMaxLastRecords = 32;
// What one run holds: at most kMaxEntries hang entries (the latest of each process only is
// kept; past this bound later processes are counted, not kept) and kMaxFieldsPerEntry fields
// read of any one entry.
inline constexpr size_t kMaxEntries = 1u << 17;
inline constexpr size_t kMaxFieldsPerEntry = 256;

}  // namespace atracectl::journal
