// The trace root's bytes as the byte limits (retention.h) see them: what the counted
// directories use, per class; what jobs in flight reserved; what descriptors passed to
// clients hold, per uid; and the file system's free space, estimated between fstatvfs
// samples. TraceStore decides what to age; this decides how many bytes it must free.
//
// Cost model: every figure is a running sum, so asking whether a write fits is O(1) and no
// system call. The free-space estimate is the last sample, minus what was written since,
// plus what was aged since; the store takes a new sample on its tick and when the estimate
// says a limit binds (WantsSample), never per append.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "atraced/store/aging.h"
#include "atraced/store/byte_budget.h"
#include "atraced/store/retention.h"

namespace atraced {

class SpaceAccount {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  // While free space stays short, fstatvfs is asked again at most this often (sooner once a
  // delete finished).
  static constexpr auto kResampleInterval = std::chrono::milliseconds(100);

  // The limits, resolved against the file system's size, and a first free-space sample.
  // Until then nothing is counted against them (NeedFor asks for nothing).
  void Resolve(const ByteLimits& limits, uint64_t available, TimePoint now);
  bool resolved() const { return resolved_; }
  const ByteLimits& limits() const { return limits_; }

  // Use of the counted directories.
  void AddUse(AgeClass c, uint64_t bytes);
  void SubUse(AgeClass c, uint64_t bytes);
  void ForgetUse();  // recovery counts every directory again
  uint64_t used() const { return used_total_; }
  uint64_t used(AgeClass c) const { return used_[static_cast<size_t>(c)]; }

  // The free-space estimate. `still_freeing`: bytes of deletes under way, not yet in the
  // sample. A failed sample only restarts the interval (the last figure is kept).
  void Sample(uint64_t available, uint64_t still_freeing, TimePoint now);
  void SampleFailed(TimePoint now);
  bool WantsSample(TimePoint now) const { return deletes_done_ || now - sampled_at_ >= kResampleInterval; }
  void DeletesDone() { deletes_done_ = true; }
  void Wrote(uint64_t allocated) { written_since_ += allocated; }
  void Freed(uint64_t bytes) { freed_since_ += bytes; }
  void NotFreed(uint64_t bytes) { freed_since_ -= std::min(freed_since_, bytes); }  // a delete failed
  uint64_t free_bytes() const;

  // Bytes a job on the I/O workers may still write: counted as written, so the budget
  // holds while they are in flight (docs/IO_WORKERS.md).
  void Reserve(uint64_t bytes) { reserved_ += bytes; }
  void Unreserve(uint64_t bytes) { reserved_ -= std::min(reserved_, bytes); }
  uint64_t reserved() const { return reserved_; }

  // Bytes written through a descriptor passed to a client of `uid`: its own until the last
  // descriptor closes. `listed`: they lie in a counted directory (part of used()).
  void Hold(uint32_t uid, uint64_t bytes, bool listed);
  // The holder closed them: returns how many it held (at most `bytes`).
  uint64_t Release(uint32_t uid, uint64_t bytes);
  // Held bytes that leave the counted directories (their directory was aged, or released).
  void Unlist(uint64_t bytes) { held_listed_ -= std::min(held_listed_, bytes); }
  uint64_t held() const { return held_total_; }
  uint64_t held_by(uint32_t uid) const;
  bool anyone_holds() const { return !held_by_uid_.empty(); }

  // What must be freed before `incoming` more bytes fit, every uid's held bytes left out
  // (no aging frees them).
  ByteNeed NeedFor(uint64_t incoming) const;
  // The same as `uid` sees it: its own held bytes counted in.
  ByteNeed NeedForHolder(uint64_t incoming, uint32_t uid) const;
  // "use X of budget Y bytes, Z free (keep-free W)"
  std::string UseLine() const;

 private:
  ByteLimits limits_;
  bool resolved_ = false;
  std::array<uint64_t, kAgeClassCount> used_{};
  uint64_t used_total_ = 0;
  uint64_t reserved_ = 0;
  std::unordered_map<uint32_t, uint64_t> held_by_uid_;
  uint64_t held_total_ = 0;
  uint64_t held_listed_ = 0;  // the part of held_total_ inside counted directories
  uint64_t free_sample_ = 0;
  uint64_t written_since_ = 0;
  uint64_t freed_since_ = 0;
  TimePoint sampled_at_{};
  bool deletes_done_ = false;
};

}  // namespace atraced
