// AtraceReportStart / AtraceReportStop: CANN's argument rules and return codes
// (../shared/reference/device-channel.md §1.2, §1.4), one receive thread per device.
//
// The table has its own mutex: nothing here takes State::mu, and no HDC wait happens with
// the table locked, so a slow device stalls neither the rest of the library nor the other
// devices' start and stop.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "device/device_counters.h"
#include "device/device_receiver.h"
#include "device/hal_driver.h"
#include "device/report_api.h"
#include "device/trace_link.h"
#include "outage_line.h"

namespace ascend_trace::device {

namespace {

constexpr int32_t kHostAiDevice = 64;  // CANN's HOST_AI_DEVID: nothing to start, success

// The receivers, one slot per device, under their own mutex.
struct ReceiverTable {
  std::mutex mu;
  std::unique_ptr<DeviceReceiver> receivers[kMaxDevices];
};

// Never destroyed: the library's exit work (AtExit, process.cc) stops the receivers, and when
// the library was loaded with dlopen, as Python loads CANN's libraries, the static
// destructors of this object file run before it. A static table was destroyed first, and
// the exit work freed every receiver a second time.
ReceiverTable& Table() {
  static ReceiverTable* table = new ReceiverTable;
  return *table;
}

int FlushTimeout() {
  static const int ms = [] {
    bool invalid = false;
    const int v = FlushTimeoutFromEnvironment(&invalid);
    if (invalid && !QuietOutages()) {
      std::fprintf(stderr,
                   "libascend_trace: ASCEND_LOG_DEVICE_FLUSH_TIMEOUT=%s is not an integer in [0, 180000]; using 0, "
                   "as CANN does\n",
                   std::getenv("ASCEND_LOG_DEVICE_FLUSH_TIMEOUT"));
    }
    return v;
  }();
  return ms;
}

}  // namespace

void LockForFork() { Table().mu.lock(); }
void UnlockAfterForkParent() { Table().mu.unlock(); }
// The child has none of the parent's threads: forget their receivers without joining them
// (the memory is leaked in the child, which is harmless), so that it can start its own.
void ForgetAfterForkChild() {
  for (auto& r : Table().receivers) (void)r.release();
  Table().mu.unlock();
}

void ExitAllReceivers() {
  std::unique_ptr<DeviceReceiver> all[kMaxDevices];
  {
    std::lock_guard lock(Table().mu);
    for (uint32_t i = 0; i < kMaxDevices; ++i) all[i] = std::move(Table().receivers[i]);
  }
  // Each is stopped first and joined next, so the bound is one exit bound, not one per device.
  for (auto& r : all) {
    if (r) r->RequestExit();
  }
  for (auto& r : all) {
    if (r) r->Join();
  }
}

}  // namespace ascend_trace::device

using namespace ascend_trace;
using namespace ascend_trace::device;

extern "C" {

TRACE_EXPORT TraStatus AtraceReportStart(int32_t devId) {
  std::string why;
  const HalDriver* driver = LoadHalDriver(&why);
  if (driver == nullptr) return TRACE_UNSUPPORTED;
  if (devId < 0 || devId >= static_cast<int32_t>(kMaxDevices)) return TRACE_INVALID_PARAM;
  if (devId == kHostAiDevice) return TRACE_SUCCESS;
  const auto device = static_cast<uint32_t>(devId);
  {
    std::lock_guard lock(Table().mu);
    if (Table().receivers[device]) return TRACE_SUCCESS;  // one thread per device
  }
  std::string note;
  const int rc = SayHello(*driver, device, &note);
  if (rc != 0) {
    if (!QuietOutages()) {
      std::fprintf(stderr, "libascend_trace: device %u: no trace server answered (%d); its traces are not collected\n",
                   device, rc);
    }
    return TRACE_UNSUPPORTED;
  }
  if (!note.empty() && !QuietOutages()) std::fprintf(stderr, "libascend_trace: device %u: %s\n", device, note.c_str());
  std::lock_guard lock(Table().mu);
  if (Table().receivers[device]) return TRACE_SUCCESS;  // another thread started it meanwhile
  auto receiver = std::make_unique<DeviceReceiver>(*driver, device, FlushTimeout());
  try {
    receiver->Start();
  } catch (const std::system_error&) {
    return TRACE_FAILURE;
  }
  Table().receivers[device] = std::move(receiver);
  return TRACE_SUCCESS;
}

TRACE_EXPORT void AtraceReportStop(int32_t devId) {
  std::string why;
  const HalDriver* driver = LoadHalDriver(&why);
  if (driver == nullptr || devId < 0 || devId >= static_cast<int32_t>(kMaxDevices)) return;
  std::unique_ptr<DeviceReceiver> receiver;
  {
    std::lock_guard lock(Table().mu);
    receiver = std::move(Table().receivers[devId]);
  }
  if (!receiver) return;
  // As CANN: [end] first, so the device forwards what it holds (for the flush timeout) and
  // then closes the link; the receiver drains until then, within CANN's bound.
  (void)SendEnd(*driver, static_cast<uint32_t>(devId));
  receiver->StopAndJoin();
}

}  // extern "C"
