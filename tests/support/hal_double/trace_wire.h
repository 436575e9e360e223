// The three upper wire layers of the device trace channel (device-channel.md §3.2-§3.5),
// written from the spec: adcore's IdeHdcPacket chain, ADX MsgProto, and the trace
// messages. Plain byte strings in and out (little-endian, as both ends are), no I/O, so the
// fake device, the self-tests' minimal host and hostile-message builders share one codec.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace atraced::hal_double::wire {

// IdeHdcPacket: u32 len, u32 type, u8 isLast, payload at offset 9; 12 + len bytes are sent.
constexpr size_t kPacketHead = 12;
constexpr size_t kPacketValue = 9;
constexpr uint32_t kPacketType = 0xB0;  // IDE_DAEMON_LITTLE_PACKAGE

// MsgProto (24 bytes).
constexpr size_t kProtoHead = 24;
constexpr uint16_t kProtoMagic = 0xC396;
constexpr uint8_t kProtoVersion = 0x10;
constexpr uint16_t kReqTrace = 16;  // IDE_TRACE_REQ
constexpr uint16_t kStatusFileLoad = 3;
constexpr uint16_t kStatusNoneError = 6;
constexpr uint16_t kStatusLongLink = 12;

// Trace messages.
constexpr uint8_t kHello = 1, kStart = 2, kEvent = 3, kEnd = 4;
constexpr size_t kHelloSize = 48, kStartSize = 32, kEventHead = 116, kEndSize = 32;
constexpr uint16_t kTraceMagic = 0xC327;
constexpr uint16_t kTraceVersion = 1;
constexpr uint8_t kSeqStart = 0, kSeqMiddle = 1, kSeqEnd = 2, kSeqSingle = 3;
constexpr size_t kEventNameSize = 32, kEventTimeSize = 29;
constexpr std::string_view kHdcEndMsg = "###[HDC_MSG]hdc_end_msg_used_by_framework###";  // 44, no NUL
constexpr std::string_view kLongLink = "LONG_LINK_DEFAULT";                             // 17, no NUL

// ---- IdeHdcPacket ----
// Splits one logical message into HDC messages of at most `max_segment` bytes each:
// packets of up to max_segment - 12 payload bytes, sent as 12 + len (3 zero bytes of slack).
std::vector<std::string> Packets(std::string_view message, uint32_t max_segment);
// One packet with every field chosen (hostile builders): `wire_len` is what the head claims.
std::string RawPacket(uint32_t wire_len, uint32_t type, uint8_t is_last, std::string_view payload);
struct PacketView {
  uint32_t len = 0;
  uint32_t type = 0;
  bool is_last = false;
  std::string_view payload;
};
// Checks as adcore's receiver does: at least 12 bytes, 12 + len present, type 0xB0.
bool ParsePacket(std::string_view hdc_message, PacketView* out, std::string* why);

// ---- MsgProto ----
std::string Proto(uint16_t status, std::string_view payload, uint16_t dev_id = 0);
struct ProtoView {
  uint16_t magic = 0, req_type = 0, dev_id = 0, msg_type = 0, status = 0;
  uint32_t total_len = 0, slice_len = 0, offset = 0;
  std::string_view payload;
};
// The host's checks (§3.3): more than 24 bytes, status ≠ FILE_LOAD, sliceLen + 24 == length.
bool ParseProto(std::string_view message, ProtoView* out, std::string* why);
// The header alone, unchecked (the device reads the status of whatever arrives).
bool PeekProto(std::string_view message, ProtoView* out);

// ---- trace messages ----
std::string Hello(uint16_t magic = kTraceMagic, uint16_t version = kTraceVersion);
std::string Start(int32_t timeout_ms);
std::string End();

struct Event {
  uint8_t event_type = 0;
  uint8_t seq_flag = kSeqSingle;
  uint32_t dev_id = 0;
  int32_t pid = 0;
  uint32_t sequence = 0;
  std::string name;  // raw bytes, at most 32 (no NUL is added when it is 32 long)
  std::string time;  // raw bytes, at most 29
  uint8_t save_type = 0;
  uint32_t buf_len = 0;  // as written on the wire: may lie about data.size()
  std::string data;
};
std::string EncodeEvent(const Event& event);
// The fields as received (name and time cut at the first NUL within their arrays); data is
// what follows the 116-byte head, whatever bufLen says. False if shorter than 116 or byte 0 ≠ 3.
bool DecodeEvent(std::string_view payload, Event* out);

// The device clock as a 20-digit event time: YYYYMMDDhhmmss + microseconds, local time.
std::string NowTime20();

}  // namespace atraced::hal_double::wire
