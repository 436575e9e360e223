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

#include "atraced/store/store_events.h"

namespace atraced {

// Generated once with `systemd-id128 new`; they never change (docs/SYSTEMD.md).
inline constexpr std::string_view kJournalMessageIdCreated = "c815a1e2915e4675836e4aa7612355ce";
inline constexpr std::string_view kJournalMessageIdAged = "d8234ea857a84a909bf52db6751fe3c8";

// The fields of the journal entry for `event`, each "NAME=value", in this order:
// MESSAGE_ID, MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, ATRACE_EVENT, ATRACE_PATH, ATRACE_PID,
// ATRACE_UID, ATRACE_CLASS, ATRACE_SEQ, ATRACE_BYTES.
std::vector<std::string> JournalFields(const StoreEvent& event);

// True if `journal_stream` (the JOURNAL_STREAM value, "DEV:INO" in decimal) names the
// file open on `fd`. False for null, malformed values or a closed fd.
bool JournalStreamMatches(const char* journal_stream, int fd);

// JournalStreamMatches(getenv("JOURNAL_STREAM"), STDERR_FILENO).
bool StderrIsJournal();

// Sends each event to the journal with sd_journal_sendv. Failures are ignored: the text
// log line for the same event has already been written.
class JournalEventSink : public StoreEventSink {
 public:
  void OnStoreEvent(const StoreEvent& event) override;
};

}  // namespace atraced
