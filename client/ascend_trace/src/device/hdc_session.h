// One HDC session to a device's trace server, in whole ADX messages: packets are split on
// the way out and joined, with a cap, on the way in (atraced/proto/hdc_trace.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
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

  // A packet chain that has not ended this long after its first packet is dropped: a device
  // sends a message's packets back to back.
  static constexpr std::chrono::seconds kMaxChainAge{5};
  // How long one driver wait lasts at most, so that `interrupted` is asked that often.
  static constexpr unsigned kPollMs = 100;

  enum class Got { kMessage, kNothing, kClosed, kRefused, kError };
  // Waits up to timeout_ms in all (however many packets arrive meanwhile) for one whole
  // message. kMessage: *payload is its ADX payload. kNothing: no message ended in time, or
  // `interrupted` (asked at least every kPollMs) said to stop waiting; a chain in progress
  // is kept for the next call. kRefused: a packet, message or chain failed its checks (*why
  // says how) and was dropped; the session stays usable. kClosed: the device closed it.
  Got Receive(unsigned timeout_ms, std::vector<uint8_t>* payload, std::string* why,
              const std::function<bool()>& interrupted = {});

 private:
  HdcSession(const HalDriver& driver, void* client, void* session, uint32_t max_segment);

  const HalDriver& driver_;
  void* client_;
  void* session_;
  uint32_t max_segment_;
  HdcMsg* recv_msg_ = nullptr;
  atraced::proto::hdc::PacketAssembler assembler_;
  std::chrono::steady_clock::time_point chain_started_{};  // the chain in progress's first packet
};

}  // namespace ascend_trace::device
