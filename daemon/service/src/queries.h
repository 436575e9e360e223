// STATUS, LIST, VACUUM, VACUUM_BY, DUMPS_EXPORTED and AGED_DUMPS: what the store holds and what it aged,
// for atracectl and monitoring. Read-only but for VACUUM, which applies the limits now,
// VACUUM_BY, which applies journalctl's verbs once (root and the daemon's uid only, but a dry
// run), and DUMPS_EXPORTED, which releases exported dumps from dump-keep.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "atraced/service/service_types.h"
#include "atraced/store/trace_store.h"
#include "client.h"
#include "client_table.h"
#include "service_context.h"
#include "file_accounting.h"
#include "atraced/base/status.h"

namespace atraced {

class Queries {
 public:
  // `ring_slots` and `ring_memory` are the rings' pools (Rings), `queued_saves` the save
  // bytes queued for the I/O workers (RingSaver), reported with the connections and
  // descriptors of the daemon (ServiceDependencies).
  Queries(const ServiceContext& ctx, ClientTable& clients, FileAccounting& accounting, const UidShare& ring_slots,
          const UidShare& ring_memory, const UidShare& queued_saves)
      : store_(*ctx.deps.store),
        clients_(clients),
        accounting_(accounting),
        counters_(ctx.counters),
        deps_(ctx.deps),
        limits_(ctx.limits),
        ring_slots_(ring_slots),
        ring_memory_(ring_memory),
        queued_saves_(queued_saves),
        log_(*ctx.deps.log) {}

  Status OnStatus(std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  // LIST: every entry for a client that reads every user's traces (Client::reads_all); for
  // anyone else their own, and each other user's as a bare ATR_LIST_HIDDEN entry (its seq,
  // for paging; no uid, pid, program, labels or path), as `atracectl show` would refuse them.
  Status OnList(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Status OnVacuum(std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  // VACUUM_BY: a dry run lists the paths of the asker's own directories only (unless it
  // reads all), counting the others in `omitted`.
  Status OnVacuumBy(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  // DUMPS_EXPORTED: releases from dump-keep the dumps named that the client may read, as LIST
  // decides (its own uid's, or every one's for a client that reads all); the others, and
  // paths of no dump, are skipped alike, so the reply tells nothing of another user's.
  Status OnDumpsExported(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  // AGED_DUMPS: the dumps aging removed (TraceStore::aged_dumps), of the job asked for, that the
  // client may see as LIST decides; the others are left out uncounted, so the reply tells
  // nothing of another user's.
  Status OnAgedDumps(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);

 private:
  TraceStore& store_;
  ClientTable& clients_;  // counted, and their passed files measured, for STATUS and LIST
  FileAccounting& accounting_;
  const ServiceCounters& counters_;
  const ServiceDependencies& deps_;
  const ServiceLimits& limits_;
  const UidShare& ring_slots_;
  const UidShare& ring_memory_;
  const UidShare& queued_saves_;
  Logger& log_;
};

}  // namespace atraced
