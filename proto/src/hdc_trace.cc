#include "atraced/proto/hdc_trace.h"

#include <algorithm>
#include <cstring>

#include "atraced/proto/byte_io.h"

namespace atraced::proto::hdc {

namespace {

constexpr size_t kNameBytes = 32;  // TraceEventMsg.eventName
constexpr size_t kTimeBytes = 29;  // TraceEventMsg.eventTime
constexpr size_t kTimeDigits = 20;
constexpr uint32_t kMaxTsDevice = 1023;

std::vector<uint8_t> Zeroed(size_t n, uint8_t type) {
  std::vector<uint8_t> out(n, 0);
  out[0] = type;
  return out;
}

// "ts_N", N a decimal device id without leading zeros (as the device prints %u).
bool ParseTsName(std::string_view name, uint32_t* device) {
  if (name.size() < 4 || name.substr(0, 3) != "ts_") return false;
  std::string_view digits = name.substr(3);
  if (digits.size() > 4 || (digits.size() > 1 && digits[0] == '0')) return false;
  uint32_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint32_t>(c - '0');
  }
  if (n > kMaxTsDevice) return false;
  *device = n;
  return true;
}

bool NameByte(uint8_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

}  // namespace

std::vector<uint8_t> AdxMessage(uint16_t status, std::span<const uint8_t> payload) {
  std::vector<uint8_t> out;
  out.reserve(kAdxHeadBytes + payload.size());
  PutU16(out, kAdxMagic);
  PutU8(out, kAdxVersion);
  PutU8(out, 0);  // order
  PutU16(out, kTraceRequest);
  PutU16(out, 0);  // devId: the device takes it from the session
  PutU32(out, static_cast<uint32_t>(payload.size()));  // totalLen
  PutU32(out, static_cast<uint32_t>(payload.size()));  // sliceLen
  PutU32(out, 0);                                      // offset
  PutU16(out, 0);                                      // MSG_DATA
  PutU16(out, status);
  PutBytes(out, payload);
  return out;
}

std::vector<std::vector<uint8_t>> SplitIntoPackets(std::span<const uint8_t> message, uint32_t max_segment) {
  const size_t per_packet = std::max<size_t>(max_segment, kMinMaxSegment) - kPacketHeadBytes;
  std::vector<std::vector<uint8_t>> packets;
  size_t offset = 0;
  do {
    const size_t len = std::min(per_packet, message.size() - offset);
    std::vector<uint8_t> p;
    p.reserve(kPacketHeadBytes + len);
    PutU32(p, static_cast<uint32_t>(len));
    PutU32(p, kPacketType);
    PutU8(p, offset + len == message.size() ? 1 : 0);
    PutBytes(p, message.subspan(offset, len));
    PutZeros(p, kPacketHeadBytes - kPacketValueOffset);  // the C struct's tail padding
    packets.push_back(std::move(p));
    offset += len;
  } while (offset < message.size());
  return packets;
}

std::vector<uint8_t> HelloPayload() {
  std::vector<uint8_t> out = Zeroed(kHelloBytes, kMsgHello);
  out[4] = static_cast<uint8_t>(kTraceMagic);
  out[5] = static_cast<uint8_t>(kTraceMagic >> 8);
  out[6] = static_cast<uint8_t>(kTraceVersion);
  out[7] = static_cast<uint8_t>(kTraceVersion >> 8);
  return out;
}

std::vector<uint8_t> StartPayload(int32_t flush_timeout_ms) {
  std::vector<uint8_t> out = Zeroed(kStartBytes, kMsgStart);
  const auto t = static_cast<uint32_t>(flush_timeout_ms);
  for (int i = 0; i < 4; ++i) out[4 + static_cast<size_t>(i)] = static_cast<uint8_t>(t >> (8 * i));
  return out;
}

std::vector<uint8_t> EndPayload() { return Zeroed(kEndBytes, kMsgEnd); }

void PacketAssembler::Reset() {
  message_.clear();
  complete_ = false;
  skipping_ = false;
  chain_packets_ = 0;
  chain_bytes_ = 0;
  why_.clear();
}

// Drops what was gathered. skip_rest: the chain goes on (its remaining packets are skipped
// up to its last one); else the chain is over and the next packet starts a new message.
PacketAssembler::Step PacketAssembler::Refuse(std::string why, bool skip_rest) {
  why_ = std::move(why);
  message_.clear();
  skipping_ = skip_rest;
  if (!skip_rest) {
    chain_packets_ = 0;
    chain_bytes_ = 0;
  }
  return Step::kRefused;
}

PacketAssembler::Step PacketAssembler::Feed(std::span<const uint8_t> hdc_message) {
  if (complete_) {
    message_.clear();
    complete_ = false;
  }
  why_.clear();
  if (hdc_message.size() < kPacketHeadBytes) {
    return Refuse("packet of " + std::to_string(hdc_message.size()) + " bytes, shorter than its 12-byte head",
                  skipping_);
  }
  const uint32_t len = GetU32(hdc_message.data());
  const uint32_t type = GetU32(hdc_message.data() + 4);
  const bool last = hdc_message[8] != 0;
  // A packet that lies about itself breaks the chain: whatever was gathered goes too, and the
  // next packet starts a new message (its own isLast will tell).
  if (type != kPacketType) return Refuse("packet type " + std::to_string(type) + ", not 0xB0", false);
  if (static_cast<uint64_t>(len) + kPacketHeadBytes > hdc_message.size()) {
    return Refuse("packet says " + std::to_string(len) + " bytes, " + std::to_string(hdc_message.size()) +
                      " arrived (12 + len needed)",
                  false);
  }
  ++chain_packets_;
  chain_bytes_ += hdc_message.size();
  if (!last && (chain_packets_ > max_packets_ || chain_bytes_ > max_bytes_)) {
    return Refuse("packet chain without its last packet after " + std::to_string(chain_packets_) + " packets, " +
                      std::to_string(chain_bytes_) + " bytes",
                  false);
  }
  if (skipping_) {
    // The rest of a message already refused (and counted once): dropped quietly.
    if (last) {
      skipping_ = false;
      chain_packets_ = 0;
      chain_bytes_ = 0;
    }
    return Step::kMore;
  }
  if (message_.size() + len > cap_) return Refuse("message longer than " + std::to_string(cap_) + " bytes", !last);
  const uint8_t* value = hdc_message.data() + kPacketValueOffset;
  message_.insert(message_.end(), value, value + len);
  if (!last) return Step::kMore;
  complete_ = true;
  chain_packets_ = 0;
  chain_bytes_ = 0;
  return Step::kMessage;
}

bool DecodeAdx(std::span<const uint8_t> message, AdxView* out, std::string* why) {
  if (message.size() <= kAdxHeadBytes) {
    *why = "ADX message of " + std::to_string(message.size()) + " bytes: no payload";
    return false;
  }
  const uint8_t* p = message.data();
  if (GetU16(p) != kAdxMagic) {
    *why = "ADX magic " + std::to_string(GetU16(p)) + ", not 0xC396";
    return false;
  }
  const uint32_t total = GetU32(p + 8);
  const uint32_t slice = GetU32(p + 12);
  const uint32_t offset = GetU32(p + 16);
  const uint16_t status = GetU16(p + 22);
  if (static_cast<uint64_t>(slice) + kAdxHeadBytes != message.size() || total != slice || offset != 0) {
    *why = "ADX lengths total " + std::to_string(total) + ", slice " + std::to_string(slice) + ", offset " +
           std::to_string(offset) + " for " + std::to_string(message.size() - kAdxHeadBytes) + " payload bytes";
    return false;
  }
  if (status == kStatusFileLoad) {
    *why = "ADX status FILE_LOAD";
    return false;
  }
  out->status = status;
  out->payload = message.subspan(kAdxHeadBytes);
  return true;
}

bool IsHdcEndMsg(std::span<const uint8_t> payload) {
  return payload.size() >= kHdcEndMsg.size() && std::memcmp(payload.data(), kHdcEndMsg.data(), kHdcEndMsg.size()) == 0;
}

bool IsHelloEcho(std::span<const uint8_t> payload) {
  return payload.size() >= kHelloBytes && payload[0] == kMsgHello && GetU16(payload.data() + 4) == kTraceMagic &&
         GetU16(payload.data() + 6) == kTraceVersion;
}

bool IsEndMsg(std::span<const uint8_t> payload) { return payload.size() >= kEndBytes && payload[0] == kMsgEnd; }

bool DecodeEvent(std::span<const uint8_t> payload, DeviceEvent* out, std::string* why) {
  if (payload.size() < kEventHeadBytes || payload[0] != kMsgEvent) {
    *why = "not an event message (" + std::to_string(payload.size()) + " bytes)";
    return false;
  }
  const uint8_t* p = payload.data();
  const uint32_t buf_len = GetU32(p + 112);
  if (buf_len > payload.size() - kEventHeadBytes) {
    *why = "bufLen " + std::to_string(buf_len) + " but " + std::to_string(payload.size() - kEventHeadBytes) +
           " data bytes arrived";
    return false;
  }
  const auto* name_begin = reinterpret_cast<const char*>(p + 16);
  const size_t name_len = ::strnlen(name_begin, kNameBytes);
  if (name_len == 0 || name_len == kNameBytes) {
    *why = name_len == 0 ? "empty object name" : "object name not terminated within 32 bytes";
    return false;
  }
  std::string name(name_begin, name_len);
  if (name.find('/') != std::string::npos || name == "." || name == "..") {
    *why = "object name is not a plain file name";
    return false;
  }
  for (char& c : name) {
    if (!NameByte(static_cast<uint8_t>(c))) c = '_';
  }
  const auto* time_begin = reinterpret_cast<const char*>(p + 48);
  const size_t time_len = ::strnlen(time_begin, kTimeBytes);
  const bool digits = std::all_of(time_begin, time_begin + time_len, [](char c) { return c >= '0' && c <= '9'; });
  if (time_len != kTimeDigits || !digits) {
    *why = "event time is not 20 digits";
    return false;
  }
  const uint8_t save_type = p[77];
  if (save_type > 1) {
    *why = "saveType " + std::to_string(save_type);
    return false;
  }
  out->seq_flag = p[2];
  out->device_id = GetU32(p + 4);
  out->host_pid = GetI32(p + 8);
  out->binary = save_type == 1;
  out->is_ts = !out->binary && ParseTsName(name, &out->ts_device);
  out->name = std::move(name);
  out->time.assign(time_begin, kTimeDigits);
  out->data = payload.subspan(kEventHeadBytes, buf_len);
  return true;
}

}  // namespace atraced::proto::hdc
