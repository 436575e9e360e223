// Structured journal entries for the store's events: "event directory created" and
// "event directory aged", each with a fixed MESSAGE_ID and ATRACE_* fields, so log
// shippers can select them (`journalctl MESSAGE_ID=...`) without parsing text.
//
// daemon_main installs JournalEventSink only when stderr is a journal stream
// (JOURNAL_STREAM names stderr's device:inode), so terminals and tests never see it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "atraced/service/service_types.h"
#include "atraced/store/store_events.h"

namespace atraced {

// Generated once with `systemd-id128 new`; they never change (docs/SYSTEMD.md).
inline constexpr std::string_view kJournalMessageIdCreated = "c815a1e2915e4675836e4aa7612355ce";
inline constexpr std::string_view kJournalMessageIdAged = "d8234ea857a84a909bf52db6751fe3c8";
inline constexpr std::string_view kJournalMessageIdStart = "5b0e8d9f2c3a4e61a7d4c2b18f6e9a03";
inline constexpr std::string_view kJournalMessageIdHang = "e3f1a2c47b9d4d0e8a65f0c3b2d71e94";

// The most bytes of one escaped value from a process (a frame, a record, a program name).
inline constexpr size_t kJournalValueMax = 256;

// The fields of the journal entry for `event`, each "NAME=value", in this order:
// MESSAGE_ID, MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, ATRACE_EVENT, ATRACE_PATH, ATRACE_PID,
// ATRACE_UID, ATRACE_CLASS, ATRACE_SEQ, ATRACE_BYTES, then the labels its process sent
// (ATRACE_JOB, ATRACE_RANK, ATRACE_WORLD_SIZE); an aged one adds ATRACE_REASON (count, bytes,
// keep-free, age or vacuum) and, for a dump's directory, ATRACE_DUMP (dump or hang) and
// ATRACE_EXPORTED (1 when a bundle held it first).
std::vector<std::string> JournalFields(const StoreEvent& event);

// The fields of the journal entry for a live process's `event` (docs/FLEET.md): MESSAGE_ID,
// MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, ATRACE_EVENT (start or hang), ATRACE_PID, ATRACE_UID,
// ATRACE_COMM, the labels it sent (ATRACE_JOB, ATRACE_RANK, ATRACE_WORLD_SIZE) and
// ATRACE_HANG_TIMEOUT_S; a hang adds ATRACE_STALL_S, ATRACE_STATE (busy, blocked or running),
// ATRACE_STALLED_PID, ATRACE_PATH or ATRACE_REFUSED, ATRACE_FRAME_0.. (the main thread's, at
// most 8), ATRACE_LAST_RECORD_0.. ("tracer: record", at most 16) and ATRACE_COLL_0.. (each
// communicator of its collective ledger, at most proto::kMaxJournalCommunicators, in the form of
// proto::CommunicatorJournalValue). What came from the process is escaped to printable ASCII
// (\xNN) and each value cut at kJournalValueMax (a communicator's at kCommJournalValueMax).
std::vector<std::string> JournalFields(const ProcessEvent& event);

// True if `journal_stream` (the JOURNAL_STREAM value, "DEV:INO" in decimal) names the
// file open on `fd`. False for null, malformed values or a closed fd.
bool JournalStreamMatches(const char* journal_stream, int fd);

// JournalStreamMatches(getenv("JOURNAL_STREAM"), STDERR_FILENO).
bool StderrIsJournal();

// Sends each event to the journal with sd_journal_sendv. Failures are ignored: the text
// log line for the same event has already been written.
class JournalEventSink : public StoreEventSink, public ProcessEventSink {
 public:
  void OnStoreEvent(const StoreEvent& event) override;
  void OnProcessEvent(const ProcessEvent& event) override;
};

}  // namespace atraced
