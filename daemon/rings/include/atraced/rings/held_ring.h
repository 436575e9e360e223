// A ring of a libascend_trace client, held by the daemon (protocol 1.1, ATR_FEATURE_MEMFD).
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
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/store/names.h"
#include "atraced/common/status.h"
#include "atraced/proto/codec.h"

namespace atraced {

class HeldRing {
 public:
  // Checks and maps `memfd` for registration `m`; the descriptor is closed either way.
  static Result<HeldRing> Map(UniqueFd memfd, const proto::RingRegister& m);

  HeldRing(HeldRing&& other) noexcept;
  HeldRing& operator=(HeldRing&& other) noexcept;
  HeldRing(const HeldRing&) = delete;
  HeldRing& operator=(const HeldRing&) = delete;
  ~HeldRing();

  // The most memory holding ring `m` can cost the daemon: every page of its mapping (a
  // hostile write_index makes a save read them all) and its decoded struct entries. Charged
  // to the owner's uid before the ring is mapped (issue 21).
  static uint64_t MemoryCost(const proto::RingRegister& m);

  uint32_t object_id() const { return reg_.object_id; }
  const std::string& name() const { return reg_.name; }
  bool exit_save() const { return (reg_.flags & ATR_RING_EXIT_SAVE) != 0; }
  bool binary() const { return !reg_.structs.empty(); }
  size_t bytes() const { return size_; }

  // The object's file as CANN would write it now, or nullopt when the ring holds no record
  // (CANN writes no file then). `problems` receives what was wrong with the ring, if anything.
  struct File {
    TraceFileName name;
    std::string bytes;  // text or binary, as the file holds it
  };
  std::optional<File> Save(std::vector<std::string>* problems) const;

 private:
  HeldRing(proto::RingRegister reg, const void* map, size_t size) : reg_(std::move(reg)), map_(map), size_(size) {}

  proto::RingRegister reg_;
  const void* map_ = nullptr;
  size_t size_ = 0;
};

}  // namespace atraced
