// The communicators a process has used: per communicator, its name, this rank, its size and
// the sequence number its next call takes. A fixed open-addressing table keyed by the
// HcclComm handle, so that a collective finds its entry with no lock and no allocation; an
// entry is filled once, by the first call that sees the handle (or by the init that made it).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "hccl_types.h"

namespace atrace_hccl {

inline constexpr uint32_t kNeedsFill = 0, kReady = 1, kFilling = 2;

struct CommEntry {
  std::atomic<uintptr_t> key{0};    // the HcclComm; 0 = free
  std::atomic<uint32_t> ready{0};   // kNeedsFill, kFilling, kReady (name, rank and size filled)
  std::atomic<uint64_t> next_seq{0};
  uint32_t rank = 0;
  uint32_t size = 0;
  bool rank_known = false;
  uint16_t name_len = 0;  // bytes of name, up to ATRACE_HCCL_COMM_NAME_MAX
  char name[ATRACE_HCCL_COMM_NAME_MAX];

  std::string_view Name() const { return {name, name_len}; }
};

// What the table asks HCCL about a communicator it has not seen (the real functions).
struct CommQueries {
  HcclResult (*get_name)(HcclComm, char*) = nullptr;
  HcclResult (*get_rank)(HcclComm, uint32_t*) = nullptr;
  HcclResult (*get_size)(HcclComm, uint32_t*) = nullptr;
};

class CommTable {
 public:
  static constexpr uint32_t kEntries = 1024;  // a power of two

  // The entry of `comm`, filled through `q` the first time; nullptr when the table is full.
  CommEntry* Find(HcclComm comm, const CommQueries& q);
  // A new communicator at `comm` (an init returned it, or a destroy freed the handle): its
  // sequence starts again and its facts are asked again at its next call.
  void Forget(HcclComm comm);
  // After fork(): the child starts with no communicator (HCCL's do not cross a fork).
  void Clear();

 private:
  static void Fill(CommEntry& e, HcclComm comm, const CommQueries& q);
  CommEntry entries_[kEntries];
};

}  // namespace atrace_hccl
