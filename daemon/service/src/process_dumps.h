// PROCESS_DUMP (protocol 1.1, ATR_FEATURE_PROCESS_DUMP; `atracectl dump`): live processes
// whose rings the daemon holds, saved from outside with no help from them. For each process
// chosen, one after another: the checks (it exists, its rings are held here, the asker is
// root or its uid, it is still the process that connected), the asker's rate limit, a copy
// of its live rings (so that a process exiting meanwhile still gets them saved), its stacks
// read by the CrashInspector in live mode (CrashTarget::live: one thread at a time) on the
// CrashRunner, then one schedule dir with the rings and the stack report, charged to the
// asker's bytes. The reply lists every process: its directory, or why not.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <span>
#include <vector>

#include "admission.h"
#include "atraced/base/status.h"
#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/processes/process_table.h"
#include "atraced/proto/codec.h"
#include "atraced/service/deferred_reply.h"
#include "atraced/service/service_types.h"
#include "client.h"
#include "client_table.h"
#include "inspection.h"
#include "ring_saver.h"
#include "service_context.h"

namespace atraced {

class ProcessDumps {
 public:
  ProcessDumps(const ServiceContext& ctx, ClientTable& clients, RingSaver& saver, Admission& admission,
               Inspection& inspection)
      : clients_(clients), processes_(*ctx.deps.processes), saver_(saver), admission_(admission),
        inspection_(inspection), clock_(*ctx.deps.clock), log_(*ctx.deps.log) {}

  // PROCESS_DUMP from `c` (granted ATR_FEATURE_PROCESS_DUMP: opcode_rules.h). `reply` is
  // answered once every process's directory is written (or refused), with the entries as
  // its body.
  void Dump(Client& c, std::span<const uint8_t> payload, DeferredReply reply);

  // The daemon's own dump (the hang watch, through DumpForHang in hang_dump_path.h): each
  // target dumped as a PROCESS_DUMP would, one after another, each as its own process's
  // user (its uid and its process pay, as if it had asked), its directory marked as the
  // hang watch's (DumpKind::kHang) and its report saying why (`note`, one line).
  struct OwnTarget {
    ClientId holder = 0;
    std::string note;
  };
  struct OwnResult {
    proto::ProcessDumpEntry entry;  // its directory (text) or its refusal
    std::string backtrace;          // the stacks read (CrashFacts::backtrace), "" when refused
  };
  using OwnDone = std::function<void(std::vector<OwnResult>)>;
  void DumpOnOwn(std::vector<OwnTarget> targets, OwnDone done);

 private:
  // One request: its processes, dumped one after another.
  struct Request {
    DeferredReply reply;
    Client payer;  // a stand-in of the asker: its bytes and uid pay for the saves, even once it left
    std::vector<int32_t> pids;
    std::vector<ClientId> holders;  // 0: refused already (entry filled)
    std::vector<proto::ProcessDumpEntry> entries;
    size_t next = 0;
    uint32_t omitted = 0;
    // The daemon's own (DumpOnOwn): each process pays for itself; `done` instead of `reply`.
    OwnDone own;
    std::vector<std::string> notes, backtraces;
  };
  // One process's turn: what is kept of it while its stacks are read.
  struct Turn {
    Client owner;                 // a stand-in of the holder: its directory, name and identity
    std::vector<HeldRing> rings;  // the live rings, held: the process may exit meanwhile
    std::string ring_names;
  };

  // The processes a request names or selects, each with its holder or its refusal.
  Status Choose(const Client& c, const proto::ProcessDump& m, Request* r);
  // The refusal for pid `pid` that no connection holds rings for: -ESRCH, -EPERM or -ENOENT.
  proto::ProcessDumpEntry Unheld(const Client& c, int32_t pid);
  void Step(uint64_t token);
  void Looked(uint64_t token, std::shared_ptr<Turn> turn, CrashFacts facts);
  void Finish(uint64_t token);

  ClientTable& clients_;
  ProcessTable& processes_;
  RingSaver& saver_;
  Admission& admission_;
  Inspection& inspection_;  // the look from outside, and the asker's unwind budget
  Clock& clock_;
  Logger& log_;
  std::map<uint64_t, Request> pending_;
  uint64_t next_token_ = 1;
};

}  // namespace atraced
