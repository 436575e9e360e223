#include "device/device_receiver.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>

#include "atraced/proto/hdc_trace.h"
#include "device/device_counters.h"
#include "device/device_sink.h"
#include "device/hdc_session.h"
#include "device/link_backoff.h"
#include "device/trace_link.h"
#include "outage_line.h"

namespace ascend_trace::device {

namespace hdc = atraced::proto::hdc;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr unsigned kExitWaitMs = 100;   // at exit, one short receive for what is in flight
constexpr milliseconds kExitBound{500};
constexpr int kQuietReceivesToLeave = 3;  // CANN's retry count once stopping

// One line per refused message at most each second: a hostile device must not flood stderr.
class RefusalLog {
 public:
  explicit RefusalLog(uint32_t device) : device_(device) {}
  void Note(const std::string& why) {
    CountersOf(device_).dropped_invalid.fetch_add(1, std::memory_order_relaxed);
    const auto now = Clock::now();
    if (now < next_) {
      ++suppressed_;
      return;
    }
    next_ = now + std::chrono::seconds(1);
    if (QuietOutages()) return;
    if (suppressed_ == 0) {
      std::fprintf(stderr, "libascend_trace: device %u: dropped a trace message: %s\n", device_, why.c_str());
    } else {
      std::fprintf(stderr, "libascend_trace: device %u: dropped a trace message: %s (and %llu more since the last line)\n",
                   device_, why.c_str(), static_cast<unsigned long long>(suppressed_));
    }
    suppressed_ = 0;
  }

 private:
  uint32_t device_;
  Clock::time_point next_{};
  uint64_t suppressed_ = 0;
};

}  // namespace

DeviceReceiver::DeviceReceiver(const HalDriver& driver, uint32_t device, int flush_timeout_ms)
    : driver_(driver), device_(device), flush_timeout_ms_(flush_timeout_ms) {}

DeviceReceiver::~DeviceReceiver() {
  if (thread_.joinable()) ExitAndJoin();
}

void DeviceReceiver::Start() {
  thread_ = std::thread([this] { Run(); });
}

void DeviceReceiver::StopAndJoin() {
  {
    std::lock_guard lock(mu_);
    if (mode_ == Mode::kRun) {
      mode_ = Mode::kDrain;
      deadline_ = Clock::now() + milliseconds(flush_timeout_ms_ + 2000);
    }
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DeviceReceiver::RequestExit() {
  {
    std::lock_guard lock(mu_);
    const auto bound = Clock::now() + kExitBound;
    deadline_ = mode_ == Mode::kRun ? bound : std::min(deadline_, bound);
    mode_ = Mode::kExit;
  }
  wake_.notify_all();
}

void DeviceReceiver::Join() {
  if (thread_.joinable()) thread_.join();
}

DeviceReceiver::Mode DeviceReceiver::mode() {
  std::lock_guard lock(mu_);
  return mode_;
}

bool DeviceReceiver::Backoff(milliseconds d) {
  std::unique_lock lock(mu_);
  return !wake_.wait_for(lock, d, [this] { return mode_ != Mode::kRun; });
}

void DeviceReceiver::Run() {
  ::pthread_setname_np(::pthread_self(), "TraceClientRecv");  // CANN's name, for ps and gdb
  DeviceSink sink(device_);
  RunLinks(sink);
  sink.ReportCounts(/*now=*/true);  // what the last second gained
}

void DeviceReceiver::RunLinks(DeviceSink& sink) {
  RefusalLog refusals(device_);
  DeviceCounters& counters = CountersOf(device_);
  LinkBackoff backoff(device_);
  // CANN's per-receive wait: a third of (flush timeout + 2 s), so three quiet receives after
  // a stop take the whole bound.
  const unsigned receive_ms = static_cast<unsigned>(std::max(1, (flush_timeout_ms_ + 2000) / 3));
  bool opened_before = false;
  std::vector<uint8_t> payload;
  std::string why;
  while (mode() == Mode::kRun) {
    std::unique_ptr<HdcSession> link;
    if (OpenLongLink(driver_, device_, flush_timeout_ms_, &link) != 0) {
      // The device refuses a second link for this process until it has reaped the old one.
      if (!Backoff(backoff.OpenFailed())) break;
      continue;
    }
    if (opened_before) counters.reconnects.fetch_add(1, std::memory_order_relaxed);
    opened_before = true;
    backoff.Opened(Clock::now());
    int quiet = 0;
    bool finished = false;  // the device ended the link: closed it or sent its end
    while (!finished) {
      Mode m;
      Clock::time_point deadline;
      {
        std::lock_guard lock(mu_);
        m = mode_;
        deadline = deadline_;
      }
      unsigned wait = m == Mode::kExit ? kExitWaitMs : receive_ms;
      if (m != Mode::kRun) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return;
        wait = std::min<unsigned>(wait, static_cast<unsigned>(left));
      }
      // A stop or an exit cuts the wait short: its own rules and deadline apply from then on.
      const auto mode_changed = [this, m] { return mode() != m; };
      bool event = false;
      switch (link->Receive(wait, &payload, &why, mode_changed)) {
        case HdcSession::Got::kMessage:
          if (!payload.empty() && payload[0] == hdc::kMsgEvent) {
            event = true;
            hdc::DeviceEvent ev;
            if (!hdc::DecodeEvent(payload, &ev, &why)) {
              refusals.Note(why);
              break;
            }
            counters.received.fetch_add(1, std::memory_order_relaxed);
            (void)sink.Write(ev);  // a refusal is counted and said by the sink
          } else if (hdc::IsEndMsg(payload)) {
            finished = true;
          } else if (!hdc::IsHdcEndMsg(payload)) {
            refusals.Note("message of type " + std::to_string(payload.empty() ? 0 : payload[0]) + " on the trace link");
          }
          break;
        case HdcSession::Got::kRefused:
          refusals.Note(why);
          break;
        case HdcSession::Got::kNothing:
          break;
        case HdcSession::Got::kClosed:
          finished = true;
          break;
        case HdcSession::Got::kError:
          refusals.Note(why);
          finished = true;
          break;
      }
      sink.ReportCounts(/*now=*/false);
      if (finished) break;
      backoff.Check(Clock::now());
      if (mode() != m) continue;  // cut short: not one of the quiet receives the old mode counts
      if (m == Mode::kExit && !event) return;
      if (m == Mode::kDrain) quiet = event ? 0 : quiet + 1;
      if (quiet >= kQuietReceivesToLeave) return;
    }
    if (mode() != Mode::kRun) return;
    // Closed while nobody stopped it: the device's trace server restarted, or the link broke.
    // CANN's client keeps reading a dead session and loses everything after; reconnect.
    if (!Backoff(backoff.Closed(Clock::now()))) return;
  }
}

}  // namespace ascend_trace::device
