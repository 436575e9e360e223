#include "device/hdc_session.h"

#include <algorithm>

namespace ascend_trace::device {

namespace hdc = atraced::proto::hdc;
using Clock = std::chrono::steady_clock;

int HdcSession::Open(const HalDriver& driver, int device, std::unique_ptr<HdcSession>* out) {
  HdcCapacity capacity{};
  int rc = driver.get_capacity(&capacity);
  if (rc != kDrvOk) return -rc;
  // adcore's bounds: a driver outside them is not one the channel was made for.
  if (capacity.max_segment < hdc::kMinMaxSegment || capacity.max_segment > hdc::kDefaultMaxSegment) return -kDrvSocketClose;
  void* client = nullptr;
  rc = driver.client_create(&client, kMaxSessions, kServiceBbox, 0);
  if (rc != kDrvOk) return -rc;
  void* session = nullptr;
  rc = driver.session_connect(0, device, client, &session);
  if (rc == kDrvOk) rc = driver.set_session_reference(session);
  if (rc != kDrvOk) {
    if (session != nullptr) driver.session_close(session);
    driver.client_destroy(client);
    return -rc;
  }
  out->reset(new HdcSession(driver, client, session, capacity.max_segment));
  return 0;
}

HdcSession::HdcSession(const HalDriver& driver, void* client, void* session, uint32_t max_segment)
    : driver_(driver), client_(client), session_(session), max_segment_(max_segment) {}

HdcSession::~HdcSession() {
  if (recv_msg_ != nullptr) driver_.free_msg(recv_msg_);
  driver_.session_close(session_);
  driver_.client_destroy(client_);
}

int HdcSession::Send(uint16_t status, std::span<const uint8_t> payload) {
  const std::vector<uint8_t> message = hdc::AdxMessage(status, payload);
  for (std::vector<uint8_t>& packet : hdc::SplitIntoPackets(message, max_segment_)) {
    HdcMsg* msg = nullptr;
    int rc = driver_.alloc_msg(session_, &msg, 1);
    if (rc != kDrvOk) return -rc;
    rc = driver_.add_msg_buffer(msg, reinterpret_cast<char*>(packet.data()), static_cast<int>(packet.size()));
    if (rc == kDrvOk) rc = driver_.send(session_, msg, 0, 0);
    driver_.free_msg(msg);
    if (rc != kDrvOk) return -rc;
  }
  return 0;
}

HdcSession::Got HdcSession::Receive(unsigned timeout_ms, std::vector<uint8_t>* payload, std::string* why,
                                    const std::function<bool()>& interrupted) {
  if (recv_msg_ == nullptr && driver_.alloc_msg(session_, &recv_msg_, 1) != kDrvOk) {
    recv_msg_ = nullptr;
    *why = "the driver could not allocate a receive message";
    return Got::kError;
  }
  // The packets of one message share the caller's time: a device that never ends its chain
  // must not hold the caller past it (the stop and exit bounds depend on that).
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto now = Clock::now();
    if (assembler_.chain_packets() > 0 && now - chain_started_ > kMaxChainAge) {
      *why = "packet chain not ended " + std::to_string(kMaxChainAge.count()) + " s after its first packet (" +
             std::to_string(assembler_.chain_packets()) + " packets)";
      assembler_.Reset();
      return Got::kRefused;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    if (left <= 0 || (interrupted && interrupted())) return Got::kNothing;
    // Never 0: a real driver may read a zero timeout as "forever".
    const auto wait = static_cast<unsigned>(std::clamp<long long>(left, 1, kPollMs));
    int count = 0;
    const int rc = driver_.recv(session_, recv_msg_, 0, kFlagWaitTimeout, &count, wait);
    if (rc == kDrvWaitTimeout || rc == kDrvNonBlock) continue;
    if (rc == kDrvSocketClose) return Got::kClosed;
    if (rc != kDrvOk) {
      *why = "halHdcRecv failed with " + std::to_string(rc);
      return Got::kError;
    }
    char* buf = nullptr;
    int len = 0;
    const bool have = driver_.get_msg_buffer(recv_msg_, 0, &buf, &len) == kDrvOk && buf != nullptr && len >= 0;
    hdc::PacketAssembler::Step step = hdc::PacketAssembler::Step::kRefused;
    const bool chain_was_open = assembler_.chain_packets() > 0;
    if (have) {
      step = assembler_.Feed(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buf), static_cast<size_t>(len)));
    }
    driver_.reuse_msg(recv_msg_);  // frees the driver's buffer: bufList[0] must be empty again
    if (!have) {
      *why = "the driver returned no buffer";
      return Got::kError;
    }
    if (!chain_was_open && assembler_.chain_packets() > 0) chain_started_ = Clock::now();
    if (step == hdc::PacketAssembler::Step::kMore) continue;
    if (step == hdc::PacketAssembler::Step::kRefused) {
      *why = assembler_.why();
      return Got::kRefused;
    }
    hdc::AdxView view;
    if (!hdc::DecodeAdx(assembler_.message(), &view, why)) return Got::kRefused;
    payload->assign(view.payload.begin(), view.payload.end());
    return Got::kMessage;
  }
}

}  // namespace ascend_trace::device
