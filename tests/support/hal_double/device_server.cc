#include "device_server.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "device_log.h"
#include "hdc_channel.h"
#include "trace_wire.h"

namespace atraced::hal_double::device {
namespace {

constexpr int kFirstMessageMs = 10000;  // adcore's ~10 s of non-blocking retries
constexpr int kStartMessageMs = 3000;   // TraceStartMsg after LONG_LINK_DEFAULT
// The device's own cap on what a host may send it: every legitimate host message is tiny.
constexpr size_t kHostMessageCap = 64 * 1024;
constexpr uint16_t kWrongMagic = 0xBEEF;

int Attr(HDC_SESSION session, int attr) {
  int value = -1;
  return halHdcGetSessionAttr(session, attr, &value) == DRV_ERROR_NONE ? value : -1;
}

drvError_t Reply(HDC_SESSION session, std::string_view payload) {
  return channel::SendMessage(session, wire::Proto(wire::kStatusNoneError, payload), HDC_FLAG_WAIT_TIMEOUT, 5000);
}

}  // namespace

void DeviceServer::AcceptLoop(HDC_SERVER server) {
  for (;;) {
    HDC_SESSION session = nullptr;
    const drvError_t rc = drvHdcSessionAccept(server, &session);
    if (rc != DRV_ERROR_NONE) {
      Say("accept failed (%d): accept loop ends", rc);
      return;
    }
    std::thread([this, session] { Handle(session); }).detach();
  }
}

void DeviceServer::Handle(HDC_SESSION session) {
  const int pid = Attr(session, HDC_SESSION_ATTR_PEER_CREATE_PID);
  const int dev = Attr(session, HDC_SESSION_ATTR_DEV_ID);
  std::string message, why;
  const auto r = channel::RecvMessage(session, &message, kFirstMessageMs, kHostMessageCap, &why);
  wire::ProtoView proto;
  if (r != channel::Recv::kOk || !wire::ParseProto(message, &proto, &why)) {
    Say("session of pid %d: first message refused (%s): closed", pid, why.c_str());
    drvHdcSessionClose(session);
    return;
  }
  const std::string_view payload = proto.payload;
  if (proto.status == wire::kStatusLongLink) {
    HandleLongLink(session, pid, dev);
  } else if (static_cast<uint8_t>(payload[0]) == wire::kHello && message.size() >= wire::kHelloSize) {
    // As the device does, the size checks count the 24-byte head: loose, but the fields
    // read below (bytes 0-7 of the payload) are always there.
    HandleHello(session, pid, payload);
  } else if (static_cast<uint8_t>(payload[0]) == wire::kEnd && message.size() >= wire::kEndSize) {
    const bool known = store_.MarkDeleted(pid, dev);
    Say("[end] from pid %d: %s", pid, known ? "session node moved to the deleted list" : "no session node");
    drvHdcSessionClose(session);
  } else {
    Say("session of pid %d: unknown first message (byte 0 = %u): closed", pid, static_cast<uint8_t>(payload[0]));
    drvHdcSessionClose(session);
  }
}

void DeviceServer::HandleHello(HDC_SESSION session, int pid, std::string_view payload) {
  uint16_t magic = 0, version = 0;
  std::memcpy(&magic, payload.data() + 4, sizeof magic);
  std::memcpy(&version, payload.data() + 6, sizeof version);
  if (magic != wire::kTraceMagic || version != wire::kTraceVersion) {
    Say("hello from pid %d with magic %#x version %u: closed without reply", pid, magic, version);
    drvHdcSessionClose(session);
    return;
  }
  if (options_.hello_silent) {
    // Never answer; keep the session until the host gives up and closes it.
    Say("hello from pid %d: staying silent", pid);
    int status = HDC_SESSION_STATUS_CONNECT;
    while (halHdcGetSessionAttr(session, HDC_SESSION_ATTR_STATUS, &status) == DRV_ERROR_NONE &&
           status == HDC_SESSION_STATUS_CONNECT) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Say("silent hello session of pid %d: host closed it", pid);
    drvHdcSessionClose(session);
    return;
  }
  const uint16_t echo_magic = options_.hello_mismatch ? kWrongMagic : wire::kTraceMagic;
  const drvError_t a = Reply(session, wire::Hello(echo_magic, wire::kTraceVersion));
  const drvError_t b = Reply(session, wire::kHdcEndMsg);
  Say("hello from pid %d: echoed (magic %#x) and HDC_END_MSG (%d, %d), closed", pid, echo_magic, a, b);
  drvHdcSessionClose(session);
}

void DeviceServer::HandleLongLink(HDC_SESSION session, int pid, int dev) {
  if (options_.refuse_long_link) {
    Say("long link from pid %d: refused (--refuse-long-link)", pid);
    drvHdcSessionClose(session);
    return;
  }
  std::string message, why;
  const auto r = channel::RecvMessage(session, &message, kStartMessageMs, kHostMessageCap, &why);
  wire::ProtoView proto;
  if (r != channel::Recv::kOk || !wire::ParseProto(message, &proto, &why)) {
    Say("long link from pid %d: no TraceStartMsg (%s): closed", pid, why.c_str());
    drvHdcSessionClose(session);
    return;
  }
  // Taken as a TraceStartMsg without looking at its msgType, as the device does; the
  // timeout is read only if it is there.
  int32_t timeout = 0;
  if (proto.payload.size() >= 8) std::memcpy(&timeout, proto.payload.data() + 4, sizeof timeout);
  if (options_.close_long_links) {
    // The link was opened in full (both of the host's messages taken): the host sees a link
    // that the device then closes, every time.
    Say("long link from pid %d dev %d: closed right after its start (--close-long-links)", pid, dev);
    drvHdcSessionClose(session);
    return;
  }
  if (!store_.Add(pid, dev, session, timeout)) {
    Say("long link from pid %d dev %d: session has existed: closed", pid, dev);
    drvHdcSessionClose(session);
    return;
  }
  Say("long link from pid %d dev %d: session node added (flush timeout %d ms)", pid, dev, timeout);
}

}  // namespace atraced::hal_double::device
