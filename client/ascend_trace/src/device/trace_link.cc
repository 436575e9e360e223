#include "device/trace_link.h"

#include <errno.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace ascend_trace::device {

namespace hdc = atraced::proto::hdc;
using Clock = std::chrono::steady_clock;

int SayHello(const HalDriver& driver, uint32_t device, std::string* note) {
  std::unique_ptr<HdcSession> s;
  int rc = HdcSession::Open(driver, static_cast<int>(device), &s);
  if (rc != 0) return rc;
  rc = s->Send(hdc::kStatusNoneError, hdc::HelloPayload());
  if (rc != 0) return rc;
  // The device answers with its echo and then the end marker; the last message before the
  // marker is the answer.
  const auto deadline = Clock::now() + std::chrono::milliseconds(kHelloWaitMs);
  std::vector<uint8_t> payload, answer;
  std::string why;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return -ETIMEDOUT;
    switch (s->Receive(static_cast<unsigned>(left), &payload, &why)) {
      case HdcSession::Got::kMessage:
        if (hdc::IsHdcEndMsg(payload)) {
          if (!hdc::IsHelloEcho(answer)) *note = "the device's hello answer does not match (tolerated, as CANN does)";
          return 0;
        }
        answer = payload;
        break;
      case HdcSession::Got::kNothing:
      case HdcSession::Got::kRefused:
        break;
      case HdcSession::Got::kClosed:
        return -ECONNRESET;
      case HdcSession::Got::kError:
        return -EIO;
    }
  }
}

int OpenLongLink(const HalDriver& driver, uint32_t device, int flush_timeout_ms, std::unique_ptr<HdcSession>* out) {
  std::unique_ptr<HdcSession> s;
  int rc = HdcSession::Open(driver, static_cast<int>(device), &s);
  if (rc != 0) return rc;
  const auto* opener = reinterpret_cast<const uint8_t*>(hdc::kLongLinkOpener.data());
  rc = s->Send(hdc::kStatusLongLink, std::span<const uint8_t>(opener, hdc::kLongLinkOpener.size()));
  if (rc == 0) rc = s->Send(hdc::kStatusNoneError, hdc::StartPayload(flush_timeout_ms));
  if (rc != 0) return rc;
  *out = std::move(s);
  return 0;
}

int SendEnd(const HalDriver& driver, uint32_t device) {
  std::unique_ptr<HdcSession> s;
  int rc = HdcSession::Open(driver, static_cast<int>(device), &s);
  if (rc != 0) return rc;
  return s->Send(hdc::kStatusNoneError, hdc::EndPayload());
}

int FlushTimeoutFromEnvironment(bool* invalid) {
  constexpr long kMax = 180000;
  if (invalid != nullptr) *invalid = false;
  const char* v = std::getenv("ASCEND_LOG_DEVICE_FLUSH_TIMEOUT");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || n > kMax) {
    if (invalid != nullptr) *invalid = true;
    return 0;
  }
  return static_cast<int>(n);
}

}  // namespace ascend_trace::device
