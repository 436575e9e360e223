// RING_REGISTER, RING_RELEASE, RING_REPORT, RING_SAVE_ALL, GOODBYE and DUMP (protocol 1.1):
// the rings a process shares in sealed memfds, their bounds, and the saves a live process
// asks for (schedule dirs) or makes at a clean exit (exit dirs).
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "admission.h"
#include "atraced/admission/uid_share.h"
#include "atraced/base/unique_fd.h"
#include "atraced/common/log.h"
#include "atraced/service/deferred_reply.h"
#include "atraced/service/service_types.h"
#include "client.h"
#include "client_table.h"
#include "service_context.h"
#include "process_records.h"
#include "atraced/base/status.h"
#include "ring_saver.h"

namespace atraced {

class Rings {
 public:
  // `slots` and `memory` are the uids' shares of rings and of their memory; they outlive
  // every client that holds a charge of them.
  Rings(const ServiceContext& ctx, ClientTable& clients, ProcessRecords& records, UidShare& slots, UidShare& memory,
        RingSaver& saver, Admission& admission)
      : clients_(clients),
        records_(records),
        saver_(saver),
        admission_(admission),
        log_(*ctx.deps.log),
        counters_(ctx.counters),
        deps_(ctx.deps),
        limits_(ctx.limits),
        slots_(slots),
        memory_(memory) {}

  Status OnRingRegister(Client& c, std::span<const uint8_t> payload, UniqueFd memfd);
  Status OnRingRelease(Client& c, std::span<const uint8_t> payload);
  // The saves: `reply` is answered once the files are written (ring_saver.h), or at once
  // with a refusal.
  void OnRingReport(Client& c, std::span<const uint8_t> payload, DeferredReply reply);
  void OnRingSaveAll(Client& c, std::span<const uint8_t> payload, DeferredReply reply);
  void OnGoodbye(Client& c, std::span<const uint8_t> payload, DeferredReply reply);
  // The on-demand dump signal: RING_SAVE_ALL for the process's ring-holding connection.
  void OnDump(Client& c, std::span<const uint8_t> payload, DeferredReply reply);

  // Unmaps every ring the client holds (it is gone for good, or said GOODBYE).
  void ReleaseAll(Client& c);
  size_t total() const { return slots_.total(); }
  // The uids' shares of rings and of ring memory (for STATUS).
  const UidShare& slots() const { return slots_; }
  const UidShare& memory() const { return memory_; }

 private:
  void DropRing(Client& c, std::map<uint32_t, ClientRing>::iterator it);
  // Keeps the process's ring_holders in step with whether `c` holds rings now.
  void CountHolder(Client& c);

  ClientTable& clients_;  // DUMP comes on the crash connection; the rings are another's
  ProcessRecords& records_;
  RingSaver& saver_;
  Admission& admission_;
  Logger& log_;
  ServiceCounters& counters_;
  const ServiceDependencies& deps_;
  const ServiceLimits& limits_;
  UidShare& slots_;   // rings held, against max_rings_total
  UidShare& memory_;  // their HeldRing::MemoryCost, against max_ring_memory
};

}  // namespace atraced
