// A clock the test sets by hand; it can go backwards.
#pragma once

#include "atraced/common/clock.h"

namespace atraced::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::chrono::system_clock::time_point t = std::chrono::system_clock::time_point(
                         std::chrono::seconds(1'780'000'000)))
      : now_(t) {}
  std::chrono::system_clock::time_point Now() override { return now_; }
  void Advance(std::chrono::microseconds d) { now_ += d; }
  void Set(std::chrono::system_clock::time_point t) { now_ = t; }

 private:
  std::chrono::system_clock::time_point now_;
};

}  // namespace atraced::testing
