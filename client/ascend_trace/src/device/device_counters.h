// What each device's receiver did, for status and metrics: counted in the application's
// process (the receiver lives there) and reported to atraced (device_sink.h).
#pragma once

#include <atomic>
#include <cstdint>

namespace ascend_trace::device {

inline constexpr uint32_t kMaxDevices = 1024;  // CANN's HOST_MAX_DEV_NUM: devId is in [0, 1024)

struct DeviceCounters {
  std::atomic<uint64_t> received{0};         // event messages that passed every check
  std::atomic<uint64_t> saved{0};            // of those, written through atraced
  std::atomic<uint64_t> dropped_invalid{0};  // refused: the device's bytes failed a check
  std::atomic<uint64_t> dropped_daemon{0};   // atraced away, or it refused (-EAGAIN, -ENOSPC, ...)
  std::atomic<uint64_t> reconnects{0};       // long links opened again after the device closed one
};

// The counters of `device` (< kMaxDevices), for the life of the process.
DeviceCounters& CountersOf(uint32_t device);

}  // namespace ascend_trace::device
