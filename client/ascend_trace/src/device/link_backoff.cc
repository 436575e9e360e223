#include "device/link_backoff.h"

#include <algorithm>
#include <cstdio>

#include "outage_line.h"

namespace ascend_trace::device {

void LinkBackoff::Opened(Clock::time_point now) {
  opened_at_ = now;
  open_ = true;
  proved_ = false;
}

void LinkBackoff::Check(Clock::time_point now) {
  if (!open_ || proved_ || now - opened_at_ < kHealthyAfter) return;
  proved_ = true;
  wait_ = kFirst;
  if (!outage_) return;
  outage_ = false;
  if (!QuietOutages()) std::fprintf(stderr, "libascend_trace: device %u: trace link open again\n", device_);
}

std::chrono::milliseconds LinkBackoff::Closed(Clock::time_point now) {
  Check(now);  // a link that lived long enough was healthy, even if nobody asked in time
  open_ = false;
  if (!outage_) {
    outage_ = true;
    if (!QuietOutages()) {
      std::fprintf(stderr, "libascend_trace: device %u: the device closed the trace link; reconnecting\n", device_);
    }
  }
  return Next();
}

std::chrono::milliseconds LinkBackoff::OpenFailed() { return Next(); }

std::chrono::milliseconds LinkBackoff::Next() {
  const auto d = wait_;
  wait_ = std::min(wait_ * 2, kMax);
  return d;
}

}  // namespace ascend_trace::device
