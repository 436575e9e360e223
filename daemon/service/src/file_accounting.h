// What the clients' open files hold, added to the store's byte counters (and to each
// process's max-bytes-per-client count) as it grows. A file whose descriptor was passed is
// measured with fstat: its holder may write anywhere in it without telling the daemon.
#pragma once

#include <cstdint>
#include <map>

#include "atraced/store/trace_store.h"
#include "client.h"
#include "client_table.h"
#include "process_records.h"

namespace atraced {

class FileAccounting {
 public:
  FileAccounting(TraceStore& store, ProcessRecords& records) : store_(store), records_(records) {}

  // Adds what the file holds beyond what was counted already. Growth only: a file its holder
  // shrank keeps being charged for its peak until its directory is aged, which errs on the
  // side of the budget.
  void Account(const Client& c, OpenFile& f);
  // Accounts every open file whose descriptor was passed, so STATUS and LIST report what the
  // disk holds now, not at the files' close. One fstat per such file.
  void AccountPassedFiles(ClientTable& clients);
  // The tick's work: re-measures up to kRemeasurePerCall directories of passed files already
  // closed (a slice per call, so a tick costs a bounded walk however many there are), and
  // forgets the aged ones.
  void RemeasureWatched();
  // Closes the file and accounts what was written to it; returns its final length. A
  // passed file's directory stays watched until it is aged: FILE_CLOSE ends the daemon's
  // descriptor, not the client's, which may go on writing (issue 21).
  uint64_t CloseFile(const Client& c, OpenFile& f);

  static constexpr size_t kRemeasurePerCall = 256;
  size_t watched() const { return watched_.size(); }

 private:
  // Who wrote into a watched directory, for max-bytes-per-client.
  struct Writer {
    int32_t pid = 0;
    uint64_t start_ticks = 0;
  };
  void ChargeWriter(const Writer& w, uint64_t allocated);

  TraceStore& store_;
  ProcessRecords& records_;
  std::map<uint64_t, Writer> watched_;  // directories with a closed passed file, by sequence
  uint64_t next_ = 0;                   // where the next slice starts
};

}  // namespace atraced
