#include "device_producers.h"

#include <array>
#include <cstring>

namespace atraced::hal_double::device {

uint32_t DeviceMaxSegment() {
  drvHdcCapacity capacity{};
  return drvHdcGetCapacity(&capacity) == DRV_ERROR_NONE ? capacity.maxSegment : 524288;
}

std::string Fill(size_t bytes, char fill, bool binary) {
  std::string data(bytes, fill);
  if (fill == 0) {
    for (size_t i = 0; i < bytes; ++i) data[i] = binary ? static_cast<char>(i & 0xff) : static_cast<char>('a' + i % 26);
  }
  return data;
}

namespace {

Outgoing Wrap(std::vector<std::string> hdc, std::string what) {
  Outgoing out;
  for (const auto& m : hdc) out.bytes += m.size();
  out.hdc = std::move(hdc);
  out.what = std::move(what);
  return out;
}

// A well-formed utrace-style event to start each hostile one from.
wire::Event Base(int pid, int dev, std::string name) {
  wire::Event e;
  e.seq_flag = wire::kSeqSingle;
  e.dev_id = static_cast<uint32_t>(dev);
  e.pid = pid;
  e.name = std::move(name);
  e.time = wire::NowTime20();
  e.data = "hostile\n";
  e.buf_len = static_cast<uint32_t>(e.data.size());
  return e;
}

std::vector<std::string> Chain(std::string_view message) { return wire::Packets(message, DeviceMaxSegment()); }

std::string EventProto(const wire::Event& e) { return wire::Proto(wire::kStatusNoneError, wire::EncodeEvent(e)); }

}  // namespace

Outgoing EventMessage(const wire::Event& event, std::string what) {
  Outgoing out = Wrap(Chain(EventProto(event)), std::move(what));
  out.seq_flag = event.seq_flag;
  return out;
}

bool HostileMessage(std::string_view kind, int pid, int dev, Outgoing* out, std::string* why) {
  std::vector<std::string> hdc;
  wire::Event e = Base(pid, dev, "hostile");
  if (kind == "buflen-lie") {
    e.buf_len = 1u << 20;  // 1 MiB claimed, 8 bytes sent
    hdc = Chain(EventProto(e));
  } else if (kind == "name-dotdot") {
    e.name = "../x";
    hdc = Chain(EventProto(e));
  } else if (kind == "name-slash") {
    e.name = "a/b";
    hdc = Chain(EventProto(e));
  } else if (kind == "name-unterminated") {
    e.name = std::string(wire::kEventNameSize, 'N');  // all 32 bytes, no NUL
    hdc = Chain(EventProto(e));
  } else if (kind == "name-empty") {
    e.name.clear();
    hdc = Chain(EventProto(e));
  } else if (kind == "time-bad") {
    e.time = "2026ABCD12xx00123456";
    hdc = Chain(EventProto(e));
  } else if (kind == "oversized") {
    // 2 MiB of data, honestly declared: far past 24 + 116 + 512 KiB, many packets before isLast.
    e.data = std::string(2u << 20, 'O');
    e.buf_len = static_cast<uint32_t>(e.data.size());
    hdc = Chain(EventProto(e));
  } else if (kind == "short-packet") {
    const std::string body = EventProto(e);
    hdc.push_back(wire::RawPacket(static_cast<uint32_t>(body.size() + 100), wire::kPacketType, 1, body));
  } else if (kind == "bad-packet-type") {
    const std::string body = EventProto(e);
    hdc.push_back(wire::RawPacket(static_cast<uint32_t>(body.size()), 0xB1, 1, body));
  } else if (kind == "proto-bad-slice") {
    std::string body = EventProto(e);
    const uint32_t slice = static_cast<uint32_t>(body.size() - wire::kProtoHead + 5);
    std::memcpy(body.data() + 12, &slice, sizeof slice);
    hdc = Chain(body);
  } else if (kind == "proto-empty") {
    hdc = Chain(wire::Proto(wire::kStatusNoneError, ""));
  } else if (kind == "proto-file-load") {
    hdc = Chain(wire::Proto(wire::kStatusFileLoad, wire::EncodeEvent(e)));
  } else if (kind == "unknown-msgtype") {
    std::string payload = wire::EncodeEvent(e);
    payload[0] = 9;
    hdc = Chain(wire::Proto(wire::kStatusNoneError, payload));
  } else if (kind == "event-too-short") {
    std::string payload = wire::EncodeEvent(e).substr(0, 60);  // byte 0 = 3, 60 < 116 bytes
    hdc = Chain(wire::Proto(wire::kStatusNoneError, payload));
  } else {
    *why = "unknown hostile kind; one of: " + HostileKinds();
    return false;
  }
  *out = Wrap(std::move(hdc), "hostile " + std::string(kind));
  return true;
}

std::string HostileKinds() {
  return "buflen-lie name-dotdot name-slash name-unterminated name-empty time-bad oversized short-packet "
         "bad-packet-type proto-bad-slice proto-empty proto-file-load unknown-msgtype event-too-short";
}

}  // namespace atraced::hal_double::device
