// Who gives a ring's mapping back to the kernel once its last holder lets go (held_ring.h).
//
// Why not always the holder's own thread: munmap of a mapping the daemon's other threads may
// have touched ends with a TLB shootdown, an inter-processor interrupt to every CPU running
// one of the daemon's threads and a wait for each to answer. On the event loop that wait is
// paid by every client queued behind it: in a report storm (64 processes saving and leaving
// at once, docs/BENCHMARKS.md) the GOODBYEs' unmaps were a third of the loop's time on CPU.
// BackgroundUnmapper takes that wait off the loop; the decision (the ring is released, its
// charge given back) stays where it was.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace atraced {

class Unmapper {
 public:
  virtual ~Unmapper() = default;
  // Takes over the mapping [addr, addr + size): nobody touches it again. Any thread.
  virtual void Unmap(const void* addr, size_t size) = 0;
};

// munmap at once, on the calling thread (the default; tests and tools).
class InlineUnmapper final : public Unmapper {
 public:
  void Unmap(const void* addr, size_t size) override;
  static InlineUnmapper& Instance();
};

// munmap on a thread of its own, in the order handed over. The destructor unmaps whatever is
// still queued before it returns, so it must outlive every holder that may hand it one (the
// daemon builds it before the service and destroys it after).
class BackgroundUnmapper final : public Unmapper {
 public:
  BackgroundUnmapper();
  ~BackgroundUnmapper() override;
  BackgroundUnmapper(const BackgroundUnmapper&) = delete;
  BackgroundUnmapper& operator=(const BackgroundUnmapper&) = delete;

  void Unmap(const void* addr, size_t size) override;
  // Returns once everything handed over before the call is unmapped (tests).
  void Drain();
  // Mappings handed over and not unmapped yet, with their bytes (a moment's figure).
  std::pair<size_t, size_t> pending() const;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable wake_;  // work queued, or stopping
  std::condition_variable idle_;  // a batch finished
  std::vector<std::pair<const void*, size_t>> queue_;
  size_t queued_bytes_ = 0;
  size_t in_hand_ = 0, in_hand_bytes_ = 0;  // the batch being unmapped now
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace atraced
