// CRASH (protocol 1.1): a process that caught a fatal signal waits in its handler while the
// daemon looks at it from outside (the CrashInspector seam, on the CrashRunner's thread),
// then its report and rings go into one stackcore dir. One report per
// process, and a bounded number of unwinds per uid a minute.
// STACK_DUMP (CANN's on-demand stack dump, asys collect -r=stacktrace) is the same look at a
// process that runs on: its stackcore dir holds the stack report as CANN's .bin (which
// AtraceStackcoreParse reads) and as the .txt, and its live rings. It may come again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/processes/crash_inspector.h"
#include "atraced/processes/process_table.h"
#include "atraced/proto/codec.h"
#include "atraced/service/deferred_reply.h"
#include "atraced/service/service_types.h"
#include "admission.h"
#include "client.h"
#include "client_table.h"
#include "inspection.h"
#include "service_context.h"
#include "process_records.h"
#include "atraced/base/status.h"
#include "ring_saver.h"

namespace atraced {

class Crashes {
 public:
  // `forget` releases what a client still holds once it is gone for good.
  Crashes(const ServiceContext& ctx, ClientTable& clients, ProcessRecords& records, RingSaver& saver,
          Admission& admission, Inspection& inspection, std::function<void(Client&)> forget)
      : clients_(clients), records_(records), processes_(*ctx.deps.processes), saver_(saver), admission_(admission),
        inspection_(inspection), clock_(*ctx.deps.clock), log_(*ctx.deps.log), counters_(ctx.counters),
        forget_(std::move(forget)) {}

  // CRASH or STACK_DUMP (`opcode`) on connection `id`: checked here, then inspected on the
  // crash runner's thread. `reply` is answered with a refusal at once, or once the stackcore
  // dir is written.
  void Look(ClientId id, Client& c, uint16_t opcode, std::span<const uint8_t> payload, DeferredReply reply);
  // The rings' holder of a CRASH being inspected closed its connection: its rings stay until
  // the report is written.
  void Park(ClientId id, Client client);
  // The daemon is stopping: parked holders are let go, and a runner's late answer finds nothing.
  void ForgetAll();

 private:
  // What asked for the look: a fatal signal, or CANN's stack dump.
  struct Ask {
    uint16_t opcode = 0;  // ATR_OP_CRASH or ATR_OP_STACK_DUMP
    proto::Crash crash;
    proto::StackDump dump;
    bool stack_dump() const { return opcode == ATR_OP_STACK_DUMP; }
    int32_t tid() const { return stack_dump() ? dump.tid : crash.tid; }
  };
  struct PendingCrash {
    ClientId holder = 0;   // whose rings are saved
    int32_t pid = 0;
    Ask ask;
    std::chrono::system_clock::time_point looked{};
    DeferredReply reply;  // to the connection that asked
  };

  // What Look checks before looking: the rings' holder, or a refusal.
  Status Check(Client& c, uint16_t opcode, std::span<const uint8_t> payload, Ask* ask, Client** holder);
  CrashTarget TargetOf(const Client& c, const Ask& ask) const;
  void Finish(uint64_t token, CrashFacts facts);
  // The stackcore dir of a crash or a stack dump: the report (from `facts`) and the rings.
  // `done` gets the reply and the report's absolute path ("" when none was written).
  using ReportDone = std::function<void(Status, const std::string& report)>;
  void WriteReport(int32_t pid, const Client& holder, const Ask& ask, const CrashFacts& facts,
                   std::chrono::system_clock::time_point looked, ReportDone done);

  ClientTable& clients_;
  ProcessRecords& records_;   // one report per process, whichever of its connections asks
  ProcessTable& processes_;   // is the process still the one that connected?
  RingSaver& saver_;
  Admission& admission_;  // a stack dump is an event like DUMP: the process's rate limit holds
  Inspection& inspection_;  // the look from outside, and the crashing uid's unwind budget
  Clock& clock_;
  Logger& log_;
  ServiceCounters& counters_;
  std::function<void(Client&)> forget_;
  // CRASHes being inspected, by token; and the rings' holders whose
  // connection closed meanwhile, kept until their report is written.
  std::map<uint64_t, PendingCrash> pending_;
  uint64_t next_token_ = 1;
  std::map<ClientId, Client> parked_;
};

}  // namespace atraced
