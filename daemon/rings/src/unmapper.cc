#include "atraced/rings/unmapper.h"

#include <signal.h>
#include <sys/mman.h>

namespace atraced {

void InlineUnmapper::Unmap(const void* addr, size_t size) { ::munmap(const_cast<void*>(addr), size); }

InlineUnmapper& InlineUnmapper::Instance() {
  static InlineUnmapper inline_unmapper;
  return inline_unmapper;
}

BackgroundUnmapper::BackgroundUnmapper() {
  // No signal for this thread: SIGTERM and SIGHUP belong to the event loop's (as the I/O
  // workers'); the thread inherits the mask it is created with.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this] { Loop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

BackgroundUnmapper::~BackgroundUnmapper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();  // Loop returns with the queue empty: nothing stays mapped
}

void BackgroundUnmapper::Unmap(const void* addr, size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(addr, size);
    queued_bytes_ += size;
  }
  wake_.notify_one();
}

void BackgroundUnmapper::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && in_hand_ == 0; });
}

std::pair<size_t, size_t> BackgroundUnmapper::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {queue_.size() + in_hand_, queued_bytes_ + in_hand_bytes_};
}

void BackgroundUnmapper::Loop() {
  std::vector<std::pair<const void*, size_t>> batch;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    batch.swap(queue_);
    in_hand_ = batch.size();
    in_hand_bytes_ = queued_bytes_;
    queued_bytes_ = 0;
    lock.unlock();
    for (const auto& [addr, size] : batch) ::munmap(const_cast<void*>(addr), size);
    batch.clear();
    lock.lock();
    in_hand_ = 0;
    in_hand_bytes_ = 0;
    idle_.notify_all();
  }
}

}  // namespace atraced
