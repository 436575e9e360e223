// One device's receive thread: the long link to the device's trace server, its messages
// turned into device-class events (device_sink.h), reconnects, and the stop rules of CANN's
// trace client (../shared/reference/device-channel.md §1.3-1.4).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "device/hal_driver.h"

namespace ascend_trace::device {

class DeviceSink;

class DeviceReceiver {
 public:
  // flush_timeout_ms: ASCEND_LOG_DEVICE_FLUSH_TIMEOUT, what the device is told to keep
  // forwarding after the stop and what bounds the stop.
  DeviceReceiver(const HalDriver& driver, uint32_t device, int flush_timeout_ms);
  ~DeviceReceiver();  // stops without draining if still running, and joins

  void Start();
  // AtraceReportStop: the device was sent [end]; drain what it still forwards (the end chunk
  // of a TS event may come after it) until it closes the link or sends its end, three quiet
  // receives pass, or CANN's bound (flush timeout + 2 s) is reached. Then join.
  void StopAndJoin();
  // Process exit: no [end] (the driver may be going away); take what has already arrived,
  // briefly, and end. RequestExit does not wait, so several devices end together.
  void RequestExit();
  void Join();
  void ExitAndJoin() {
    RequestExit();
    Join();
  }

 private:
  enum class Mode { kRun, kDrain, kExit };
  void Run();
  void RunLinks(DeviceSink& sink);
  // Sleeps, waking early on a stop. False when stopping.
  bool Backoff(std::chrono::milliseconds d);
  Mode mode();

  const HalDriver& driver_;
  const uint32_t device_;
  const int flush_timeout_ms_;
  std::mutex mu_;
  std::condition_variable wake_;
  Mode mode_ = Mode::kRun;
  std::chrono::steady_clock::time_point deadline_{};
  std::thread thread_;
};

}  // namespace ascend_trace::device
