#include "hdc_channel.h"

#include "trace_wire.h"

namespace atraced::hal_double::channel {

drvError_t SendOne(HDC_SESSION session, std::string_view hdc_message, UINT64 flag, UINT32 timeout) {
  drvHdcMsg* msg = nullptr;
  drvError_t rc = drvHdcAllocMsg(session, &msg, 1);
  if (rc != DRV_ERROR_NONE) return rc;
  // The driver takes a char*; it only reads it.
  rc = drvHdcAddMsgBuffer(msg, const_cast<char*>(hdc_message.data()), static_cast<int>(hdc_message.size()));
  if (rc == DRV_ERROR_NONE) rc = halHdcSend(session, msg, flag, timeout);
  drvHdcFreeMsg(msg);
  return rc;
}

drvError_t SendAll(HDC_SESSION session, const std::vector<std::string>& hdc_messages, UINT64 flag, UINT32 timeout) {
  for (const auto& m : hdc_messages) {
    const drvError_t rc = SendOne(session, m, flag, timeout);
    if (rc != DRV_ERROR_NONE) return rc;
  }
  return DRV_ERROR_NONE;
}

drvError_t SendMessage(HDC_SESSION session, std::string_view message, UINT64 flag, UINT32 timeout) {
  drvHdcCapacity capacity{};
  const drvError_t rc = drvHdcGetCapacity(&capacity);
  if (rc != DRV_ERROR_NONE) return rc;
  return SendAll(session, wire::Packets(message, capacity.maxSegment), flag, timeout);
}

drvError_t RecvOne(HDC_SESSION session, std::string* out, UINT64 flag, UINT32 timeout) {
  drvHdcMsg* msg = nullptr;
  drvError_t rc = drvHdcAllocMsg(session, &msg, 1);
  if (rc != DRV_ERROR_NONE) return rc;
  int count = 0;
  rc = halHdcRecv(session, msg, 0, flag, &count, timeout);
  if (rc == DRV_ERROR_NONE) {
    char* buf = nullptr;
    int len = 0;
    rc = drvHdcGetMsgBuffer(msg, 0, &buf, &len);
    if (rc == DRV_ERROR_NONE) out->assign(buf, static_cast<size_t>(len));
  }
  drvHdcFreeMsg(msg);
  return rc;
}

const char* Name(Recv r) {
  switch (r) {
    case Recv::kOk: return "ok";
    case Recv::kNoData: return "no data";
    case Recv::kClosed: return "closed";
    case Recv::kError: return "error";
    case Recv::kBadPacket: return "bad packet";
    case Recv::kTooBig: return "too big";
  }
  return "?";
}

Recv RecvMessage(HDC_SESSION session, std::string* out, int timeout_ms, size_t cap, std::string* why) {
  out->clear();
  bool too_big = false;
  std::string hdc;
  for (;;) {
    const UINT64 flag = timeout_ms < 0 ? 0 : HDC_FLAG_WAIT_TIMEOUT;
    const drvError_t rc = RecvOne(session, &hdc, flag, timeout_ms < 0 ? 0 : static_cast<UINT32>(timeout_ms));
    if (rc == DRV_ERROR_WAIT_TIMEOUT || rc == DRV_ERROR_NON_BLOCK) {
      *why = "no data within the timeout";
      return Recv::kNoData;
    }
    if (rc == DRV_ERROR_SOCKET_CLOSE) {
      *why = "session closed";
      return Recv::kClosed;
    }
    if (rc != DRV_ERROR_NONE) {
      *why = "halHdcRecv error " + std::to_string(rc);
      return Recv::kError;
    }
    wire::PacketView packet;
    if (!wire::ParsePacket(hdc, &packet, why)) return Recv::kBadPacket;
    if (!too_big && out->size() + packet.payload.size() > cap) {
      too_big = true;
      out->clear();
      out->shrink_to_fit();
    }
    if (!too_big) out->append(packet.payload);
    if (packet.is_last) break;
  }
  if (too_big) {
    *why = "message over " + std::to_string(cap) + " bytes";
    return Recv::kTooBig;
  }
  return Recv::kOk;
}

}  // namespace atraced::hal_double::channel
