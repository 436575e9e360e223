#include "completion.h"

#include <dlfcn.h>
#include <time.h>

#include <thread>

namespace atrace_hccl {

bool CompletionTracker::Probe() {
  if (available()) return true;
  auto create = reinterpret_cast<aclError (*)(aclrtEvent*)>(::dlsym(RTLD_DEFAULT, "aclrtCreateEvent"));
  auto record = reinterpret_cast<aclError (*)(aclrtEvent, aclrtStream)>(::dlsym(RTLD_DEFAULT, "aclrtRecordEvent"));
  auto query = reinterpret_cast<aclError (*)(aclrtEvent, int*)>(::dlsym(RTLD_DEFAULT, "aclrtQueryEventStatus"));
  if (create == nullptr || record == nullptr || query == nullptr) return false;
  create_ = create;
  record_ = record;
  query_ = query;
  available_.store(true, std::memory_order_release);
  return true;
}

int CompletionTracker::Claim() {
  if (!available()) return -1;
  // A few tries from a moving start: a call never waits for a slot.
  for (int tries = 0; tries < 8; ++tries) {
    const uint32_t i = cursor_.fetch_add(1, std::memory_order_relaxed) & (kSlots - 1);
    uint32_t expected = kFree;
    if (!slots_[i].state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) continue;
    if (slots_[i].event == nullptr && create_(&slots_[i].event) != 0) {
      slots_[i].event = nullptr;
      slots_[i].state.store(kFree, std::memory_order_release);
      return -1;
    }
    return static_cast<int>(i);
  }
  return -1;
}

void CompletionTracker::Submit(int slot, aclrtStream stream, uint64_t seq, LedgerWriter* writer) {
  Slot& s = slots_[slot];
  if (record_(s.event, stream) != 0) {
    s.state.store(kFree, std::memory_order_release);
    return;
  }
  s.seq = seq;
  s.writer = writer;
  s.state.store(kPending, std::memory_order_release);
  if (!poller_started_.load(std::memory_order_acquire)) StartPoller();
}

void CompletionTracker::StartPoller() {
  bool expected = false;
  if (!poller_started_.compare_exchange_strong(expected, true)) return;
  std::thread([this] {
    for (;;) {
      Poll();
      const timespec pause{0, 1000000};  // 1 ms: completions are told to the millisecond
      ::nanosleep(&pause, nullptr);
    }
  }).detach();
}

void CompletionTracker::Poll() {
  for (Slot& s : slots_) {
    if (s.state.load(std::memory_order_acquire) != kPending) continue;
    int status = ATRACE_ACL_EVENT_NOT_READY;
    if (query_(s.event, &status) != 0) {
      s.state.store(kFree, std::memory_order_release);  // the runtime lost it: tracked, never completed
      continue;
    }
    if (status != ATRACE_ACL_EVENT_COMPLETE) continue;
    s.writer->Complete(s.seq, MonotonicNs());
    s.state.store(kFree, std::memory_order_release);
  }
}

void CompletionTracker::AfterForkChild() {
  poller_started_.store(false, std::memory_order_relaxed);
  for (Slot& s : slots_) {
    s.state.store(kFree, std::memory_order_relaxed);
    s.event = nullptr;  // the parent's device context's, not ours
  }
}

}  // namespace atrace_hccl
