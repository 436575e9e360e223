// One HDC session to a device's trace server, in whole ADX messages: packets are split on
// the way out and joined, with a cap, on the way in (atraced/proto/hdc_trace.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "atraced/proto/hdc_trace.h"
#include "device/hal_driver.h"

namespace ascend_trace::device {

class HdcSession {
 public:
  // Client, connection to `device` on the BBOX service, and the reference that lets the driver
  // reap the session with the process. 0 or the driver's error (negated).
  static int Open(const HalDriver& driver, int device, std::unique_ptr<HdcSession>* out);
  ~HdcSession();
  HdcSession(const HdcSession&) = delete;
  HdcSession& operator=(const HdcSession&) = delete;

  // One ADX message with `status` around `payload`, in as many packets as the channel needs.
  int Send(uint16_t status, std::span<const uint8_t> payload);

  enum class Got { kMessage, kNothing, kClosed, kRefused, kError };
  // Waits up to timeout_ms for one whole message. kMessage: *payload is its ADX payload.
  // kRefused: a packet or message failed its checks (*why says how) and was dropped; the
  // session stays usable. kClosed: the device closed the session.
  Got Receive(unsigned timeout_ms, std::vector<uint8_t>* payload, std::string* why);

 private:
  HdcSession(const HalDriver& driver, void* client, void* session, uint32_t max_segment);

  const HalDriver& driver_;
  void* client_;
  void* session_;
  uint32_t max_segment_;
  HdcMsg* recv_msg_ = nullptr;
  atraced::proto::hdc::PacketAssembler assembler_;
};

}  // namespace ascend_trace::device
