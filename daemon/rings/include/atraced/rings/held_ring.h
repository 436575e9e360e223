// A ring of a libascend_trace client, held by the daemon (protocol 1.1, ATR_FEATURE_MEMFD), or
// the process's collective ledger (ATR_FEATURE_LEDGER), held and saved the same way.
//
// The client passes a sealed memfd. The daemon checks it is what it claims to be — a memfd
// (it answers F_GET_SEALS), sealed against shrinking (so a mapping can never fault with
// SIGBUS under us), exactly the registered size, with a header that matches the
// registration — then maps it PROT_READ and closes the descriptor: the mapping alone keeps
// the memory alive, so a held ring costs the daemon no descriptor, one mapping of at most
// ATR_RING_MAX_BYTES of address space, and no private memory until it is saved.
//
// Saving copies what writers used of the live mapping (proto::CopyRingUsed: the header and
// the slots below write_index, so the never-written pages of a mostly idle ring are never
// faulted in), validates the copy
// (proto::ReadRingSnapshot: nothing in the ring is trusted) and formats CANN's file
// (ring_format.h). A corrupt or hostile ring gives the records that check out and a list
// of problems for the log, never a crash.
//
// A save is split in two (docs/IO_WORKERS.md): PlanSave, on the event loop, reads the
// header alone and says how many records the save covers and how many bytes it can take at
// most (what the loop reserves against the budgets); RingSavePlan::Format, on an I/O
// worker, copies and formats. The plan holds the mapping: a client that releases the ring
// or disconnects while its save runs unmaps nothing under the worker.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/store/names.h"
#include "atraced/base/status.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/ledger_reader.h"
#include "atraced/rings/unmapper.h"

namespace atraced {

namespace core {
class CounterClock;
}
struct RingMapping;  // the registration and its read-only mapping, unmapped with the last holder

// One ring's part of a save, decided on the loop; formatted on any one thread.
class RingSavePlan {
 public:
  const TraceFileName& file_name() const { return file_name_; }
  // The most bytes Format can return: CANN's format of `slots` records of this geometry
  // (.txt: one line of at most 28 + msg_size bytes each, and the lost-records line; .bin:
  // its heads, the struct segment and 16 + msg_size bytes each).
  uint64_t max_bytes() const { return max_bytes_; }
  uint64_t slots() const { return slots_; }
  // Copies at most `slots` used slots, validates them and formats CANN's file; "" when no
  // record checks out. `problems` receives what was wrong with the ring.
  std::string Format(std::vector<std::string>* problems) const;

 private:
  // A collective ledger's part: the ledger as laid out (ledger_layout.h), "" when no record
  // of it checks out.
  std::string FormatLedger(std::vector<uint8_t>& copy, std::vector<std::string>* problems) const;
  friend class HeldRing;
  RingSavePlan(std::shared_ptr<const RingMapping> ring, TraceFileName name, uint64_t slots, uint64_t max_bytes)
      : ring_(std::move(ring)), file_name_(std::move(name)), slots_(slots), max_bytes_(max_bytes) {}

  std::shared_ptr<const RingMapping> ring_;
  TraceFileName file_name_;
  uint64_t slots_ = 0;
  uint64_t max_bytes_ = 0;
};

class HeldRing {
 public:
  // Checks and maps `memfd` for registration `m`; the descriptor is closed either way. The
  // mapping goes to `unmapper` when its last holder (this ring, a save in flight) lets go.
  // `clock`, when not null, places a counter ring's records through the daemon's clock
  // snapshots (counter_clock.h); null places them by the save's sample alone.
  static Result<HeldRing> Map(UniqueFd memfd, const proto::RingRegister& m,
                              Unmapper& unmapper = InlineUnmapper::Instance(), core::CounterClock* clock = nullptr);

  // The most memory holding ring `m` can cost the daemon: every page of its mapping (a
  // hostile write_index makes a save read them all) and its decoded struct entries. Charged
  // to the owner's uid before the ring is mapped (issue 21).
  static uint64_t MemoryCost(const proto::RingRegister& m);

  uint32_t object_id() const;
  const std::string& name() const;
  bool exit_save() const;
  bool binary() const;
  // The process's collective ledger (ATR_RING_LEDGER), saved as hccl_tracer_ledger.bin with
  // every save of its connection's rings.
  bool ledger() const;
  // A ledger's records now, copied and checked as a save is (the process wrote them: the
  // reader trusts nothing, ledger_reader.h); nullopt for a tracer ring. The hang watch's
  // last sequence number of each communicator.
  std::optional<proto::LedgerSnapshot> LedgerNow() const;
  size_t bytes() const;
  // The header's write_index now (records claimed so far), one load from the mapping, no
  // copy and no check: the hang watch's measure of progress (progress_watch.h). The process
  // can make it say anything, which changes only how that process itself is judged.
  uint64_t write_index() const;
  // The newest complete record now (copied and checked as a save is), its bytes up to the
  // first NUL and at most `max_bytes`, raw: the caller escapes them. nullopt: no record
  // checks out. The hang watch's "each tracer's last record".
  struct Record {
    uint64_t index = 0;  // its position in the writer's sequence
    std::string bytes;
  };
  std::optional<Record> LastRecord(size_t max_bytes) const;

  struct File {
    TraceFileName name;
    std::string bytes;  // text or binary, as the file holds it
  };
  // What saving the ring now takes, from its header alone: nullopt when no record was ever
  // written (CANN writes no file then) or the header is no longer valid (`problems` says why).
  std::optional<RingSavePlan> PlanSave(std::vector<std::string>* problems) const;
  // The object's file as CANN would write it now (PlanSave and Format on this thread), or
  // nullopt when the ring holds no record.
  std::optional<File> Save(std::vector<std::string>* problems) const;

 private:
  explicit HeldRing(std::shared_ptr<const RingMapping> ring) : ring_(std::move(ring)) {}

  std::shared_ptr<const RingMapping> ring_;
};

}  // namespace atraced
