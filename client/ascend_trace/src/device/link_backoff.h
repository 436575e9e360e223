// When a device's receiver reopens its long link after the device closed it, and what it
// says about that: waits from 100 ms doubling to 2 s, which start again from 100 ms only
// once a link has proved healthy by staying open 2 s; one stderr line when an outage starts
// and one when a healthy link ends it. A device that closes every link at once thus costs a
// reconnect every 2 s and one line, not ten reconnects and twenty lines a second.
#pragma once

#include <chrono>
#include <cstdint>

namespace ascend_trace::device {

class LinkBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirst{100};
  static constexpr std::chrono::milliseconds kMax{2000};
  static constexpr std::chrono::milliseconds kHealthyAfter{2000};

  explicit LinkBackoff(uint32_t device) : device_(device) {}

  // A link is open.
  void Opened(Clock::time_point now);
  // Called while a link is open: once it has been open kHealthyAfter, the waits start again
  // from kFirst and an outage in progress is over (said once).
  void Check(Clock::time_point now);
  // The device closed the open link: how long to wait before the next open. The first close
  // of an outage is said.
  std::chrono::milliseconds Closed(Clock::time_point now);
  // An open failed: how long to wait before the next one.
  std::chrono::milliseconds OpenFailed();

 private:
  std::chrono::milliseconds Next();

  const uint32_t device_;
  std::chrono::milliseconds wait_ = kFirst;
  Clock::time_point opened_at_{};
  bool open_ = false;
  bool proved_ = false;  // the open link has stayed open kHealthyAfter
  bool outage_ = false;  // a link was lost and no link has proved healthy since
};

}  // namespace ascend_trace::device
