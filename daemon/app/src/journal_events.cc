#include "atraced/app/journal_events.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace atraced {

std::vector<std::string> JournalFields(const StoreEvent& event) {
  const bool created = event.kind == StoreEvent::Kind::kCreated;
  std::string message = std::string(created ? "created" : "aged") + " event dir " + event.path + " (class=" +
                        event.cls + ", seq=" + std::to_string(event.seq);
  if (!created) message += ", " + std::to_string(event.bytes) + " bytes freed";
  message += ")";
  std::vector<std::string> fields{
      "MESSAGE_ID=" + std::string(created ? kJournalMessageIdCreated : kJournalMessageIdAged),
      "MESSAGE=" + message,
      "PRIORITY=6",
      "SYSLOG_IDENTIFIER=atraced",
      std::string("ATRACE_EVENT=") + (created ? "created" : "aged"),
      "ATRACE_PATH=" + event.path,
      "ATRACE_PID=" + std::to_string(event.pid),
      "ATRACE_UID=" + std::to_string(event.uid),
      "ATRACE_CLASS=" + event.cls,
      "ATRACE_SEQ=" + std::to_string(event.seq),
      "ATRACE_BYTES=" + std::to_string(event.bytes),
  };
  // The labels the process sent (checked at LABELS: short, no control bytes), only those it
  // sent: `journalctl ATRACE_JOB=J` finds a job's directories on every host that forwards.
  if (!event.labels.job.empty()) fields.push_back("ATRACE_JOB=" + event.labels.job);
  if (!event.labels.rank.empty()) fields.push_back("ATRACE_RANK=" + event.labels.rank);
  if (!event.labels.world_size.empty()) fields.push_back("ATRACE_WORLD_SIZE=" + event.labels.world_size);
  return fields;
}

bool JournalStreamMatches(const char* journal_stream, int fd) {
  if (journal_stream == nullptr) return false;
  // Exactly "DEV:INO", both decimal, nothing else (from_chars takes no sign or blanks).
  const char* end = journal_stream + std::strlen(journal_stream);
  uintmax_t dev = 0, ino = 0;
  auto [colon, dev_err] = std::from_chars(journal_stream, end, dev);
  if (dev_err != std::errc() || colon == journal_stream || colon == end || *colon != ':') return false;
  auto [last, ino_err] = std::from_chars(colon + 1, end, ino);
  if (ino_err != std::errc() || last == colon + 1 || last != end) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  return static_cast<uintmax_t>(st.st_dev) == dev && static_cast<uintmax_t>(st.st_ino) == ino;
}

bool StderrIsJournal() { return JournalStreamMatches(std::getenv("JOURNAL_STREAM"), STDERR_FILENO); }

void JournalEventSink::OnStoreEvent(const StoreEvent& event) {
  std::vector<std::string> fields = JournalFields(event);
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (std::string& f : fields) iov.push_back({f.data(), f.size()});
  (void)::sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

}  // namespace atraced
