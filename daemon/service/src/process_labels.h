// LABELS (ATR_FEATURE_LABELS): the job, rank and world size a process read from its
// environment, kept on its ProcessRecord and on each of its connections, so that every
// directory made for it afterwards is labelled with them (order log, LIST, journal).
// They are the process's word: nothing is granted or refused by them.
#pragma once

#include <cstdint>
#include <span>

#include "atraced/base/status.h"
#include "atraced/common/log.h"
#include "client.h"
#include "client_table.h"
#include "process_records.h"

namespace atraced {

class ProcessLabels {
 public:
  ProcessLabels(ClientTable& clients, ProcessRecords& records, Logger& log)
      : clients_(clients), records_(records), log_(log) {}

  // Checks the labels (proto::CheckLabel: a bad one refuses them all, named in the error)
  // and applies them to c's process: its record and every connection it has now.
  Status OnLabels(Client& c, std::span<const uint8_t> payload);

 private:
  ClientTable& clients_;
  ProcessRecords& records_;
  Logger& log_;
};

}  // namespace atraced
