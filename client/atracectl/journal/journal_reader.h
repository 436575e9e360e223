// Reading atraced's hang, start and aged (of a dump) entries from a journal directory (what
// systemd-journal-remote writes on a collector) with sd-journal, into a book of jobs.
//
// The directory is opened with sd_journal_open_directory and matched on ATRACE_EVENT=hang
// or =start, or =aged with ATRACE_DUMP (a dump's directory; the aged entries of other
// directories, most of them, are never read), each and ATRACE_JOB=J with a job. For each
// entry the trusted fields are read first (hang_entry.h): an entry that atraced did not write is counted as forged and nothing else of
// it is read. The rest of a trusted entry is read with sd_journal_set_data_threshold at
// kMaxValue, at most kMaxFieldsPerEntry fields. The book keeps the latest entry of each
// process (job, host, pid), at most kMaxEntries of them (hang_journal_fields.h): what is held
// is bounded whatever the directory holds.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "journal/hang_entry.h"

typedef struct sd_journal sd_journal;

namespace atracectl::journal {

// A job's entries: the latest hang, start and aged entry of each process.
struct JobEntries {
  std::map<std::pair<std::string, int32_t>, HangEntry> hangs;   // by (host, pid)
  std::map<std::pair<std::string, int32_t>, HangEntry> starts;  // by (host, pid)
  std::map<std::pair<std::string, int32_t>, HangEntry> aged;    // by (host, pid): its dump atraced aged
  std::chrono::steady_clock::time_point last_hang{};            // when a hang entry was last added
};

struct JournalBook {
  std::map<std::string, JobEntries> jobs;
  size_t entries_kept = 0;     // processes held (hang and start), at most kMaxEntries
  size_t forged = 0;           // ATRACE_EVENT=hang|start|aged (of a dump) not written by atraced: ignored
  size_t malformed = 0;        // atraced's, with a field that fails its check: ignored
  std::string first_problem;   // of the first malformed entry (a field's name and why)
  size_t past_bound = 0;       // processes past kMaxEntries: counted, not kept
};

class HangJournal {
 public:
  ~HangJournal();
  HangJournal(HangJournal&&) noexcept;
  HangJournal& operator=(HangJournal&&) = delete;

  // Opens `dir` (nothing is read yet); nullopt with `error` set when it cannot be.
  static std::optional<HangJournal> Open(const std::string& dir, const std::string& job, std::string* error);

  // Reads the entries after the last one read (the first call: all of them) into `book`.
  // Returns the number of entries looked at; an error leaves `error` set.
  size_t ReadNew(JournalBook* book, std::string* error);

  // Waits for the journal to change, at most `timeout`. False on an error (`error` set).
  bool Wait(std::chrono::milliseconds timeout, std::string* error);

 private:
  explicit HangJournal(sd_journal* j) : j_(j) {}
  sd_journal* j_ = nullptr;
};

}  // namespace atracectl::journal
