// Writes a device's trace messages through atraced, as device-class events of this process.
//
// The receive thread's own connection (libatrace_client's, linked in privately): no lock of
// the library's State is taken, so a receiver waiting on HDC or on the daemon never stalls
// AtraceSubmit or a report, and a report never stalls a device.
#pragma once

#include <chrono>
#include <cstdint>

#include "atraced/proto/hdc_trace.h"

struct atrace_client;

namespace ascend_trace::device {

class DeviceSink {
 public:
  explicit DeviceSink(uint32_t device) : device_(device) {}
  ~DeviceSink();
  DeviceSink(const DeviceSink&) = delete;
  DeviceSink& operator=(const DeviceSink&) = delete;

  // One message, one begin/open/append/close/end, as CANN's per-message open-append-close:
  // chunks with the same name and time land in one directory and one file, in order.
  // 0 once on disk; otherwise -errno, the event is dropped and counted, and the first drop
  // of an outage is said on stderr (with its end).
  int Write(const atraced::proto::hdc::DeviceEvent& event);

  // Tells atraced what this device's counters gained since the last report it answered
  // (DEVICE_STATS), at most once a second unless `now`; the receiver calls it after each
  // message and, with now, when it ends. Best effort: a daemon away keeps the gain for later.
  void ReportCounts(bool now);

 private:
  int EnsureConnected();
  void NoteDrop(int err);
  void NoteSaved();

  uint32_t device_;
  atrace_client* client_ = nullptr;
  bool outage_ = false;
  // What the daemon has been told (DeviceCounters' values at the last answered report).
  uint64_t told_[5] = {};
  std::chrono::steady_clock::time_point next_report_{};
};

}  // namespace ascend_trace::device
