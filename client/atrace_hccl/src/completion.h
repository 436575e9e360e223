// Completion times from the acl runtime, where the process has one: after a collective is
// enqueued, an event is recorded on its stream, and one thread of this library polls the
// events and stores each completion in the ledger (as the PyTorch Flight Recorder does with
// CUDA events). The runtime is looked up in the process (dlsym of the default scope), never
// loaded by us: without it the ledger records enqueues only and its header says so.
#pragma once

#include <atomic>
#include <cstdint>

#include "hccl_types.h"
#include "ledger_writer.h"

namespace atrace_hccl {

class CompletionTracker {
 public:
  static constexpr uint32_t kSlots = 256;  // calls in flight whose completion is awaited

  // Looks for aclrtCreateEvent, aclrtRecordEvent and aclrtQueryEventStatus in the process
  // (once found, found for good). True when completion can be tracked.
  bool Probe();
  bool available() const { return available_.load(std::memory_order_acquire); }

  // Before the call: a free slot, or -1 (none free, or no runtime): the record then says
  // completion is not tracked. Makes the slot's event, in the caller's thread (its device
  // context), the first time the slot is used.
  int Claim();
  // After the call was enqueued on `stream`: records the slot's event there and hands it to
  // the polling thread, which completes ledger record `seq` of `writer`. A failed record
  // frees the slot (the record stays "tracked, not completed").
  void Submit(int slot, aclrtStream stream, uint64_t seq, LedgerWriter* writer);

  // After fork(): the child has no polling thread and its parent's events are not its own.
  void AfterForkChild();

 private:
  enum : uint32_t { kFree = 0, kClaimed = 1, kPending = 2 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    aclrtEvent event = nullptr;
    uint64_t seq = 0;
    LedgerWriter* writer = nullptr;
  };
  void StartPoller();
  void Poll();

  std::atomic<bool> available_{false};
  std::atomic<bool> poller_started_{false};
  std::atomic<uint32_t> cursor_{0};
  aclError (*create_)(aclrtEvent*) = nullptr;
  aclError (*record_)(aclrtEvent, aclrtStream) = nullptr;
  aclError (*query_)(aclrtEvent, int*) = nullptr;
  Slot slots_[kSlots];
};

}  // namespace atrace_hccl
