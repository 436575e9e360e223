// Wall-clock source, injected so tests fix the times that appear in directory names.
// Aging never reads a clock: its order is the creation sequence (see trace_store.h).
#pragma once

#include <chrono>

namespace atraced {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() override { return std::chrono::system_clock::now(); }
};

}  // namespace atraced
