// EVENT_BEGIN, FILE_OPEN, FILE_APPEND, FILE_GET_FD, FILE_CLOSE and EVENT_END: a client's
// events and the files in them, and a forwarder's claim to write for another process.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "admission.h"
#include "atraced/base/unique_fd.h"
#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/processes/process_table.h"
#include "atraced/proto/codec.h"
#include "atraced/store/trace_store.h"
#include "client.h"
#include "device_reports.h"
#include "file_accounting.h"
#include "process_records.h"
#include "service_context.h"
#include "atraced/base/status.h"

namespace atraced {

class EventFiles {
 public:
  EventFiles(const ServiceContext& ctx, ProcessRecords& records, Admission& admission, FileAccounting& accounting,
             DeviceReports& devices)
      : store_(*ctx.deps.store), processes_(*ctx.deps.processes), records_(records), admission_(admission),
        accounting_(accounting), devices_(devices), clock_(*ctx.deps.clock), log_(*ctx.deps.log),
        counters_(ctx.counters), limits_(ctx.limits) {}

  Status OnEventBegin(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Status OnFileOpen(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Status OnFileAppend(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Status OnFileGetFd(Client& c, std::span<const uint8_t> payload, UniqueFd* passed, FdCharge* charge);
  Status OnFileClose(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Status OnEventEnd(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  // The connection is gone: closes its files and ends its events, keeping what was written.
  void EndAll(Client& c);

 private:
  // Encodes a PathReply of the concatenated parts into `body`, reusing path_reply_'s buffer.
  void EncodePath(std::initializer_list<std::string_view> parts, std::vector<uint8_t>& body);

  TraceStore& store_;
  ProcessTable& processes_;
  ProcessRecords& records_;
  Admission& admission_;
  FileAccounting& accounting_;
  DeviceReports& devices_;
  Clock& clock_;
  Logger& log_;
  ServiceCounters& counters_;
  const ServiceLimits& limits_;
  // The absolute path of EVENT_BEGIN's and FILE_OPEN's replies, built in place (EncodePath).
  proto::PathReply path_reply_;
};

}  // namespace atraced
