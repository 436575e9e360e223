// A point in time a call must not outlive. Every wait in the library goes through poll()
// with the time left, so a stuck or absent daemon can only cost the caller this bound.
#pragma once

#include <chrono>

namespace atrace_client_internal {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  static Deadline In(int ms) { return Deadline(Clock::now() + std::chrono::milliseconds(ms)); }
  // Milliseconds left, rounded up so a poll never returns just before the deadline; 0 when
  // expired.
  int RemainingMs() const {
    auto left = at_ - Clock::now();
    if (left <= Clock::duration::zero()) return 0;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return ms > 0x7fffffff ? 0x7fffffff : static_cast<int>(ms);
  }
  bool Expired() const { return Clock::now() >= at_; }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

}  // namespace atrace_client_internal
