// CRASH (protocol 1.1): a process that caught a fatal signal waits in its handler while the
// daemon looks at it from outside (the CrashInspector seam, on the CrashRunner's thread when
// there is one), then its report and rings go into one stackcore dir. One report per
// process, and a bounded number of unwinds per uid a minute.
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
#include "atraced/service/service_types.h"
#include "client.h"
#include "client_table.h"
#include "later_reply.h"
#include "process_records.h"
#include "refusal.h"
#include "ring_saver.h"

namespace atraced {

class Crashes {
 public:
  // `forget` releases what a client still holds once it is gone for good.
  Crashes(ClientTable& clients, ProcessRecords& records, ProcessTable& processes, RingSaver& saver, Clock& clock,
          Logger& log, ServiceCounters& counters, const ServiceOptions& options, std::function<void(Client&)> forget)
      : clients_(clients), records_(records), processes_(processes), saver_(saver), clock_(clock), log_(log),
        counters_(counters), options_(options), forget_(std::move(forget)) {}

  // CRASH inspected here, on the event loop (no runner: tests and fuzzers).
  // The reply comes through `later` once the stackcore dir is written.
  Reply OnCrash(Client& c, std::span<const uint8_t> payload, LaterReply& later);
  // CRASH with a runner: checks it as OnCrash does and starts the inspection; no refusal
  // means the reply is deferred (it goes through the connection's reply sink).
  Reply StartCrash(ClientId id, Client& c, const proto::FrameHeader& h, std::span<const uint8_t> payload);
  // The rings' holder of a CRASH being inspected closed its connection: its rings stay until
  // the report is written.
  void Park(ClientId id, Client client);
  // The daemon is stopping: parked holders are let go, and a runner's late answer finds nothing.
  void ForgetAll();

 private:
  struct PendingCrash {
    ClientId channel = 0;  // where the reply goes
    ClientId holder = 0;   // whose rings are saved
    int32_t pid = 0;
    uint16_t opcode = 0;
    uint32_t request_id = 0;
    proto::Crash m;
    std::chrono::system_clock::time_point looked{};
  };

  // What OnCrash and StartCrash check before looking: the rings' holder, or a refusal.
  Reply Check(Client& c, std::span<const uint8_t> payload, proto::Crash* m, Client** holder);
  void Finish(uint64_t token, CrashFacts facts);
  // The stackcore dir of a crash: the report (from `facts`) and the rings.
  void WriteReport(int32_t pid, const Client& holder, const proto::Crash& m, const CrashFacts& facts,
                   std::chrono::system_clock::time_point looked, SaveDone done);
  CrashFacts NoUnwindFacts(CrashFacts facts, uint32_t uid) const;
  // Whether uid may have another unwind now (crash_unwinds_per_uid_per_minute); counts it.
  bool TakeUnwind(uint32_t uid);

  ClientTable& clients_;
  ProcessRecords& records_;   // one report per process, whichever of its connections asks
  ProcessTable& processes_;   // is the process still the one that connected?
  RingSaver& saver_;
  Clock& clock_;
  Logger& log_;
  ServiceCounters& counters_;
  const ServiceOptions& options_;
  std::function<void(Client&)> forget_;
  // CRASHes whose inspection runs off the loop, by token; and the rings' holders whose
  // connection closed meanwhile, kept until their report is written.
  std::map<uint64_t, PendingCrash> pending_;
  uint64_t next_token_ = 1;
  std::map<ClientId, Client> parked_;
  std::unordered_map<uint32_t, std::vector<std::chrono::system_clock::time_point>> unwinds_by_uid_;  // the last minute's
};

}  // namespace atraced
