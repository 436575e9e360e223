#include "device/device_sink.h"

#include <errno.h>

#include <algorithm>
#include <cstdio>

#include "atraced/atrace_client.h"
#include "atraced/proto/codec.h"
#include "client.h"  // client/src: OpenWithFeatures, SendDeviceStats
#include "device/device_counters.h"
#include "endpoint.h"
#include "outage_line.h"

namespace ascend_trace::device {

namespace {

constexpr int kConnectMs = 1000;
// A device event waits for its files like a synchronous report does.
constexpr int kWriteMs = 5000;

}  // namespace

DeviceSink::~DeviceSink() { atrace_client_close(client_); }

int DeviceSink::EnsureConnected() {
  if (client_ != nullptr) return 0;
  atrace_client_options options;
  atrace_client_options_init(&options);
  options.connect_timeout_ms = kConnectMs;
  options.io_timeout_ms = kWriteMs;
  // Appends travel in the request: the data is already in memory, one round trip is enough.
  options.flags = ATRACE_OPT_NO_FD_PASSING;
  return atrace_client_internal::OpenWithFeatures(&options, ATR_FEATURE_DEVICE_STATS, &client_);
}

void DeviceSink::ReportCounts(bool now) {
  const auto t = std::chrono::steady_clock::now();
  if (!now && t < next_report_) return;
  next_report_ = t + std::chrono::seconds(1);
  const DeviceCounters& c = CountersOf(device_);
  const uint64_t values[5] = {c.received.load(), c.saved.load(), c.dropped_invalid.load(), c.dropped_daemon.load(),
                              c.reconnects.load()};
  atraced::proto::DeviceStats delta;
  delta.device_id = device_;
  delta.received = values[0] - told_[0];
  delta.saved = values[1] - told_[1];
  delta.dropped_invalid = values[2] - told_[2];
  delta.dropped_daemon = values[3] - told_[3];
  delta.reconnects = values[4] - told_[4];
  if (delta.received + delta.saved + delta.dropped_invalid + delta.dropped_daemon + delta.reconnects == 0) return;
  if (EnsureConnected() != 0) return;
  if (atrace_client_internal::SendDeviceStats(*client_, delta) == 0) std::copy(values, values + 5, told_);
}

int DeviceSink::Write(const atraced::proto::hdc::DeviceEvent& event) {
  if (const int rc = EnsureConnected(); rc != 0) {
    NoteDrop(rc);
    return rc;
  }
  // The device's own clock names the directory, as CANN names it; no forwarder claim: the
  // event belongs to this process, which the daemon learns from the socket.
  atrace_event_spec spec{};
  spec.kind = ATRACE_EVENT_SCHEDULE;
  spec.side = ATRACE_SIDE_DEVICE;
  spec.device_id = device_;
  spec.time = event.time.c_str();
  atrace_file_spec file{};
  if (event.is_ts) {
    file.form = ATRACE_FILE_TS;
    file.device_id = event.ts_device;
  } else {
    file.form = ATRACE_FILE_OBJECT;
    file.name = event.name.c_str();
    file.binary = event.binary ? 1 : 0;
  }
  const int rc = atrace_emit(client_, &spec, &file, event.data.data(), event.data.size(), 0, nullptr, 0);
  if (rc != 0) {
    NoteDrop(rc);
    return rc;
  }
  NoteSaved();
  return 0;
}

void DeviceSink::NoteDrop(int err) {
  CountersOf(device_).dropped_daemon.fetch_add(1, std::memory_order_relaxed);
  if (outage_) return;
  outage_ = true;
  if (QuietOutages()) return;
  const int e = err < 0 ? -err : err;
  const bool unreachable = e == ENOENT || e == ECONNREFUSED || e == EACCES || e == ETIMEDOUT || e == EPIPE ||
                           e == ECONNRESET;
  const std::string why = unreachable ? DescribeUnreachable(atrace_client_internal::CandidateSocketPaths(nullptr), e)
                                      : std::string("atraced refused it: ") + atrace_client_strerror(err);
  std::fprintf(stderr,
               "libascend_trace: device %u: traces from the device are dropped: %s (ATRACE_QUIET=1 silences this)\n",
               device_, why.c_str());
}

void DeviceSink::NoteSaved() {
  CountersOf(device_).saved.fetch_add(1, std::memory_order_relaxed);
  if (!outage_) return;
  outage_ = false;
  if (!QuietOutages()) std::fprintf(stderr, "libascend_trace: device %u: traces from the device are saved again\n", device_);
}

}  // namespace ascend_trace::device
