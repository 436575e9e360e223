// The three conversations of CANN's trace client with a device's trace server
// (../shared/reference/device-channel.md §1.2-1.4, §3.5): hello on a short session, the
// long link that carries the device's traces, and [end] on a short session.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "device/hal_driver.h"
#include "device/hdc_session.h"

namespace ascend_trace::device {

// How long the hello waits for the device's answer. CANN polls for about 10 s; a device that
// has not answered in 3 s is not going to, and set-device should not wait longer.
inline constexpr unsigned kHelloWaitMs = 3000;

// Hello and its echo, then the device's end marker. 0, or -errno / -driver error: the device
// side is not there. An echo that does not match is tolerated, as CANN does (*note says so).
int SayHello(const HalDriver& driver, uint32_t device, std::string* note);

// The long link: "LONG_LINK_DEFAULT" with status LONG_LINK, then the start message with the
// flush timeout. 0 and the session, or the error.
int OpenLongLink(const HalDriver& driver, uint32_t device, int flush_timeout_ms, std::unique_ptr<HdcSession>* out);

// [end] on a new short session, which is closed without reading (the device answers on the
// long link). 0 or the error.
int SendEnd(const HalDriver& driver, uint32_t device);

// ASCEND_LOG_DEVICE_FLUSH_TIMEOUT as CANN reads it: an integer in [0, 180000] ms, else 0
// (*invalid, if given, says that a value was set and not taken).
int FlushTimeoutFromEnvironment(bool* invalid = nullptr);

}  // namespace ascend_trace::device
