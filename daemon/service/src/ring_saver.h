// Writes a client's rings (and, for a crash or a death, the report first) into one new event
// directory. Which rings a save takes is decided here too: every live one for a schedule
// save, one per object name at a death.
//
// A save is decided on the event loop and written by an I/O worker (docs/IO_WORKERS.md):
// the loop reads each ring's header (HeldRing::PlanSave), reserves the most the files can
// take against max-bytes-per-client, the store's byte limits and the uid's share of queued
// save bytes (one SaveReservation), makes the directory and opens the files; the worker
// copies, formats and writes; back on the loop the completion settles the reservation (the
// rest goes back), counts what was written, ends the event (which may age its class) and gives the reply.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "admission.h"
#include "atraced/admission/uid_share.h"
#include "atraced/common/log.h"
#include "atraced/io/job_runner.h"
#include "atraced/rings/held_ring.h"
#include "atraced/service/service_types.h"
#include "atraced/store/trace_store.h"
#include "client.h"
#include "save_reservation.h"
#include "service_context.h"
#include "atraced/base/status.h"

namespace atraced {

// What the caller of a save does with its reply, on the loop.
using SaveDone = std::function<void(Status)>;

class RingSaver {
 public:
  // `queued` is the pool of save bytes in flight, shared per uid (uid-queued-share).
  RingSaver(const ServiceContext& ctx, Admission& admission, UidShare& queued)
      : store_(*ctx.deps.store), admission_(admission), log_(*ctx.deps.log), counters_(ctx.counters), queued_(queued),
        deps_(ctx.deps) {}
  ~RingSaver();
  RingSaver(const RingSaver&) = delete;
  RingSaver& operator=(const RingSaver&) = delete;

  // Writes the chosen rings of `c` into one new event directory of `kind` (none is made
  // when no ring holds a record). `reports`, if any, are written first and make the
  // directory even without records. Every byte counts against the process's
  // max-bytes-per-client; a save that could pass it is refused whole (-EBUSY), as is a
  // schedule save past the uid's share of queued save bytes (-EAGAIN: exit and stackcore
  // saves are charged to the share, never refused by it). Calls `done` once with the reply:
  // before returning when the save is refused or has nothing to write, else on the loop once
  // the I/O runner wrote the files.
  // `made_dir`, if given, gets the directory's absolute path when it is made (before Save
  // returns).
  void Save(const Client& c, EventKind kind, const std::vector<const HeldRing*>& rings,
            std::vector<HeldRing::File> reports, SaveDone done, std::string* made_dir = nullptr) {
    Save(c, c, kind, rings, std::move(reports), std::move(done), made_dir);
  }
  // The same, for the process of `owner` (its directory, name and uid) but counted against
  // `payer`'s process (max-bytes-per-client) and uid (queued save bytes): PROCESS_DUMP, where
  // whoever asks pays; `dump` marks the directory as a dump and whose (order_log.h's 'o').
  void Save(const Client& owner, const Client& payer, EventKind kind, const std::vector<const HeldRing*>& rings,
            std::vector<HeldRing::File> reports, SaveDone done, std::string* made_dir = nullptr,
            DumpKind dump = DumpKind::kNone);

  // Saves whose completion has not run yet.
  size_t in_flight() const { return jobs_.size(); }

  // Shutdown (docs/IO_WORKERS.md). Answers every save no worker has started with
  // -ESHUTDOWN, now; a worker that reaches one later skips it. Returns how many.
  size_t DropQueued();
  // Shutdown, past the last deadline: answers the saves still being written with
  // -ESHUTDOWN, now; what their worker finishes later is not counted. Returns how many.
  size_t AbandonRunning();

  // The process's collective ledger (HeldRing::ledger) is saved with every save of its
  // connection, whatever the rings chosen: the lists below never hold it, Save adds it.
  // `rings` and c's ledger, if it holds one (what a save of a stand-in for c needs).
  static std::vector<const HeldRing*> WithLedger(const Client& c, std::vector<const HeldRing*> rings);
  // The rings RING_SAVE_ALL and DUMP save: every live one (destroyed exitSave ones wait for exit).
  static std::vector<const HeldRing*> Unreleased(const Client& c);
  // The rings GOODBYE saves: the exitSave objects, live or destroyed, one per name, chosen
  // as CANN chooses at exit (tracer_mgr_operate.c, its exit list): a live object over a
  // destroyed one of that name, of live ones the newest, of destroyed ones the last
  // destroyed. (CANN takes, of live ones, the highest table slot; ours is the newest,
  // which its slot order gives too unless an older object was destroyed in between.)
  static std::vector<const HeldRing*> AtExit(const Client& c);
  // The rings a death or a crash saves: every live object and the destroyed exitSave ones,
  // one per object name by the same rule. `names` lists them for the report.
  static std::vector<const HeldRing*> AtDeath(const Client& c, std::string* names);

 private:
  struct Job;
  void Complete(Job& job);
  // The loop's end of a save its worker did not finish: the reservations go back, the
  // directory stays incomplete, and `done` gets -ESHUTDOWN. `parts_idle`: no worker will
  // touch the job's files (their problems may be read and empty files removed).
  void Answer(Job& job, bool parts_idle);

  TraceStore& store_;
  Admission& admission_;
  Logger& log_;
  ServiceCounters& counters_;
  UidShare& queued_;
  const ServiceDependencies& deps_;
  std::unordered_map<Job*, std::shared_ptr<Job>> jobs_;  // submitted, not yet answered
};

}  // namespace atraced
