// What the clients' open files hold, added to the store's byte counters (and to each
// process's max-bytes-per-client count) as it grows. A file whose descriptor was passed is
// measured with fstat: its holder may write anywhere in it without telling the daemon.
#pragma once

#include <cstdint>

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
  // Closes the file and accounts what was written to it; returns its final length.
  uint64_t CloseFile(const Client& c, OpenFile& f);

 private:
  TraceStore& store_;
  ProcessRecords& records_;
};

}  // namespace atraced
