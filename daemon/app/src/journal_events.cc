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
namespace {

// Printable ASCII only, the rest (and '\\') as \xNN, cut at kJournalValueMax (never inside an escape).
std::string Escaped(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    const bool plain = c >= 0x20 && c < 0x7f && c != '\\';
    if (out.size() + (plain ? 1 : 4) > kJournalValueMax) break;
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void Send(std::vector<std::string>& fields) {
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (std::string& f : fields) iov.push_back({f.data(), f.size()});
  (void)::sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

}  // namespace

std::vector<std::string> JournalFields(const ProcessEvent& e) {
  const bool hang = e.kind == ProcessEvent::Kind::kHang;
  const auto seconds = [](std::chrono::milliseconds d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  };
  const std::string who = "pid " + std::to_string(e.pid) + " (" + Escaped(e.program) + ")" +
                          (e.labels.job.empty() ? "" : " job " + e.labels.job) +
                          (e.labels.rank.empty() ? "" : " rank " + e.labels.rank);
  std::string message;
  if (!hang) {
    message = "start: " + who + (e.hang_timeout.count() > 0 ? ", watched for hangs of " + seconds(e.hang_timeout) + " s" : "");
  } else {
    message = "hang: " + who + " " + e.state + ", no record for " + seconds(e.stalled_for) + " s" +
              (e.stalled_pid != e.pid ? " (dumped with its job: pid " + std::to_string(e.stalled_pid) + " stalled)" : "") +
              (e.dir.empty() ? "; not dumped: " + Escaped(e.refused) : "; dumped to " + Escaped(e.dir));
  }
  std::vector<std::string> fields{
      "MESSAGE_ID=" + std::string(hang ? kJournalMessageIdHang : kJournalMessageIdStart),
      "MESSAGE=" + message,
      std::string("PRIORITY=") + (hang ? "4" : "6"),
      "SYSLOG_IDENTIFIER=atraced",
      std::string("ATRACE_EVENT=") + (hang ? "hang" : "start"),
      "ATRACE_PID=" + std::to_string(e.pid),
      "ATRACE_UID=" + std::to_string(e.uid),
      "ATRACE_COMM=" + Escaped(e.program),
  };
  // The labels were checked at LABELS (short, printable, no space).
  if (!e.labels.job.empty()) fields.push_back("ATRACE_JOB=" + e.labels.job);
  if (!e.labels.rank.empty()) fields.push_back("ATRACE_RANK=" + e.labels.rank);
  if (!e.labels.world_size.empty()) fields.push_back("ATRACE_WORLD_SIZE=" + e.labels.world_size);
  fields.push_back("ATRACE_HANG_TIMEOUT_S=" + seconds(e.hang_timeout));
  if (!hang) return fields;
  fields.push_back("ATRACE_STALL_S=" + seconds(e.stalled_for));
  fields.push_back("ATRACE_STATE=" + e.state);
  fields.push_back("ATRACE_STALLED_PID=" + std::to_string(e.stalled_pid));
  fields.push_back(e.dir.empty() ? "ATRACE_REFUSED=" + Escaped(e.refused) : "ATRACE_PATH=" + Escaped(e.dir));
  for (size_t i = 0; i < e.top_frames.size() && i < 8; ++i) {
    fields.push_back("ATRACE_FRAME_" + std::to_string(i) + "=" + Escaped(e.top_frames[i]));
  }
  for (size_t i = 0; i < e.last_records.size() && i < 16; ++i) {
    fields.push_back("ATRACE_LAST_RECORD_" + std::to_string(i) + "=" +
                     Escaped(e.last_records[i].first + ": " + e.last_records[i].second));
  }
  // Printable ASCII already, bounded by proto::kCommJournalValueMax (ledger_summary.h).
  for (size_t i = 0; i < e.communicators.size() && i < proto::kMaxJournalCommunicators; ++i) {
    fields.push_back("ATRACE_COLL_" + std::to_string(i) + "=" +
                     proto::CommunicatorJournalValue(e.communicators[i], e.completion_tracked));
  }
  return fields;
}

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
  if (created) return fields;
  // Why it went; and of a dump, whose and whether a bundle held it: `hang --journal` names a
  // rank whose dump this was as aged, not missing (docs/FLEET.md).
  fields.push_back("ATRACE_REASON=" + event.reason);
  if (event.dump != DumpKind::kNone) {
    fields.push_back(std::string("ATRACE_DUMP=") + (event.dump == DumpKind::kHang ? "hang" : "dump"));
    fields.push_back(std::string("ATRACE_EXPORTED=") + (event.exported ? "1" : "0"));
  }
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
  Send(fields);
}

void JournalEventSink::OnProcessEvent(const ProcessEvent& event) {
  std::vector<std::string> fields = JournalFields(event);
  Send(fields);
}

}  // namespace atraced
