// What the clients' open files hold, added to the store's byte counters (and to each
// process's max-bytes-per-client count) as it grows. A file whose descriptor was passed is
// measured with fstat: its holder may write anywhere in it without telling the daemon.
//
// Such a file's bytes asked no limit first, and aging cannot free them while a descriptor
// keeps the file open, so they are held bytes (TraceStore::AddHeldBytes): charged to the uid
// the descriptor went to, refused to that uid alone, never paid for with another user's
// directories. After the daemon's own copy closes (FILE_CLOSE, a disconnect) the file is
// watched through a read-only open of its own (FileWatch), which goes on measuring it after
// its directory is aged, until no one has it open for writing; then its bytes are released
// to the store and the watch closes.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "atraced/store/trace_store.h"
#include "client.h"
#include "client_table.h"
#include "process_records.h"

namespace atraced {

class FileAccounting {
 public:
  FileAccounting(TraceStore& store, ProcessRecords& records) : store_(store), records_(records) {}

  // Adds what the file holds beyond what was counted already. Growth only: a file its holder
  // shrank keeps being charged for its peak, which errs on the side of the budget.
  void Account(const Client& c, OpenFile& f);
  // Accounts every open file whose descriptor was passed, so STATUS and LIST report what the
  // disk holds now, not at the files' close. One fstat per such file.
  void AccountPassedFiles(ClientTable& clients);
  // The tick's work: measures up to kRemeasurePerCall watched files (a slice per call, so a
  // tick costs a bounded number of fstats however many there are) and lets go of those no
  // one writes any more.
  void RemeasureWatched();
  // Closes the file and accounts what was written to it; returns its final length. A
  // passed file stays watched: FILE_CLOSE ends the daemon's descriptor, not the client's,
  // which may go on writing (issue 21), also after its directory is aged (issue 37).
  uint64_t CloseFile(const Client& c, OpenFile& f);

  static constexpr size_t kRemeasurePerCall = 256;
  size_t watched() const { return watched_.size(); }

 private:
  // Who wrote into a watched file, for max-bytes-per-client and the held bytes.
  struct Writer {
    int32_t pid = 0;
    uint64_t start_ticks = 0;
    uint32_t uid = 0;
  };
  struct Watched {
    uint64_t seq = 0;
    Writer writer;
    std::unique_ptr<FileWatch> watch;
    DiskUsage accounted;  // as OpenFile::accounted
  };
  void ChargeWriter(const Writer& w, uint64_t allocated);
  // Adds what `now` holds beyond `accounted` to `seq`, charged to `w`: as held bytes of its
  // uid when the file's descriptor was passed.
  void Grew(const Writer& w, uint64_t seq, DiskUsage now, DiskUsage& accounted, bool held);

  TraceStore& store_;
  ProcessRecords& records_;
  std::deque<Watched> watched_;  // passed files the daemon closed, next to measure first
};

}  // namespace atraced
