#include "trace_wire.h"

#include <sys/time.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace atraced::hal_double::wire {

static_assert(std::endian::native == std::endian::little, "the wire is little-endian and written raw");

namespace {

template <typename T>
void Put(std::string& out, size_t offset, T value) {
  std::memcpy(out.data() + offset, &value, sizeof value);
}
template <typename T>
T Get(std::string_view in, size_t offset) {
  T value{};
  std::memcpy(&value, in.data() + offset, sizeof value);
  return value;
}
// A fixed char array: the bytes, cut to its size, NUL-padded.
void PutChars(std::string& out, size_t offset, size_t size, std::string_view text) {
  std::memcpy(out.data() + offset, text.data(), std::min(size, text.size()));
}
std::string GetChars(std::string_view in, size_t offset, size_t size) {
  std::string_view field = in.substr(offset, size);
  return std::string(field.substr(0, field.find('\0')));
}

}  // namespace

std::vector<std::string> Packets(std::string_view message, uint32_t max_segment) {
  const size_t per_packet = max_segment > kPacketHead ? max_segment - kPacketHead : 1;
  std::vector<std::string> packets;
  size_t done = 0;
  do {
    const size_t len = std::min(per_packet, message.size() - done);
    const bool last = done + len == message.size();
    packets.push_back(RawPacket(static_cast<uint32_t>(len), kPacketType, last ? 1 : 0, message.substr(done, len)));
    done += len;
  } while (done < message.size());
  return packets;
}

std::string RawPacket(uint32_t wire_len, uint32_t type, uint8_t is_last, std::string_view payload) {
  std::string packet(kPacketHead + payload.size(), '\0');
  Put(packet, 0, wire_len);
  Put(packet, 4, type);
  packet[8] = static_cast<char>(is_last);
  std::memcpy(packet.data() + kPacketValue, payload.data(), payload.size());
  return packet;
}

bool ParsePacket(std::string_view hdc_message, PacketView* out, std::string* why) {
  if (hdc_message.size() < kPacketHead) {
    *why = "packet shorter than its 12-byte head";
    return false;
  }
  out->len = Get<uint32_t>(hdc_message, 0);
  out->type = Get<uint32_t>(hdc_message, 4);
  out->is_last = hdc_message[8] != 0;
  if (hdc_message.size() - kPacketHead < out->len) {
    *why = "packet shorter than 12 + len";
    return false;
  }
  if (out->type != kPacketType) {
    *why = "packet type is not 0xB0";
    return false;
  }
  out->payload = hdc_message.substr(kPacketValue, out->len);
  return true;
}

std::string Proto(uint16_t status, std::string_view payload, uint16_t dev_id) {
  std::string out(kProtoHead, '\0');
  Put(out, 0, kProtoMagic);
  out[2] = static_cast<char>(kProtoVersion);
  Put(out, 4, kReqTrace);
  Put(out, 6, dev_id);
  Put(out, 8, static_cast<uint32_t>(payload.size()));
  Put(out, 12, static_cast<uint32_t>(payload.size()));
  Put(out, 16, uint32_t{0});
  Put(out, 20, uint16_t{0});  // MSG_DATA
  Put(out, 22, status);
  out.append(payload);
  return out;
}

bool PeekProto(std::string_view message, ProtoView* out) {
  if (message.size() < kProtoHead) return false;
  out->magic = Get<uint16_t>(message, 0);
  out->req_type = Get<uint16_t>(message, 4);
  out->dev_id = Get<uint16_t>(message, 6);
  out->total_len = Get<uint32_t>(message, 8);
  out->slice_len = Get<uint32_t>(message, 12);
  out->offset = Get<uint32_t>(message, 16);
  out->msg_type = Get<uint16_t>(message, 20);
  out->status = Get<uint16_t>(message, 22);
  out->payload = message.substr(kProtoHead);
  return true;
}

bool ParseProto(std::string_view message, ProtoView* out, std::string* why) {
  if (message.size() <= kProtoHead || !PeekProto(message, out)) {
    *why = "MsgProto without payload";
    return false;
  }
  if (out->status == kStatusFileLoad) {
    *why = "MsgProto status FILE_LOAD";
    return false;
  }
  if (static_cast<uint64_t>(out->slice_len) + kProtoHead != message.size()) {
    *why = "MsgProto sliceLen + 24 != length";
    return false;
  }
  return true;
}

std::string Hello(uint16_t magic, uint16_t version) {
  std::string out(kHelloSize, '\0');
  out[0] = static_cast<char>(kHello);
  Put(out, 4, magic);
  Put(out, 6, version);
  return out;
}

std::string Start(int32_t timeout_ms) {
  std::string out(kStartSize, '\0');
  out[0] = static_cast<char>(kStart);
  Put(out, 4, timeout_ms);
  return out;
}

std::string End() {
  std::string out(kEndSize, '\0');
  out[0] = static_cast<char>(kEnd);
  return out;
}

std::string EncodeEvent(const Event& e) {
  std::string out(kEventHead, '\0');
  out[0] = static_cast<char>(kEvent);
  out[1] = static_cast<char>(e.event_type);
  out[2] = static_cast<char>(e.seq_flag);
  Put(out, 4, e.dev_id);
  Put(out, 8, e.pid);
  Put(out, 12, e.sequence);
  PutChars(out, 16, kEventNameSize, e.name);
  PutChars(out, 48, kEventTimeSize, e.time);
  out[77] = static_cast<char>(e.save_type);
  Put(out, 112, e.buf_len);
  out.append(e.data);
  return out;
}

bool DecodeEvent(std::string_view payload, Event* out) {
  if (payload.size() < kEventHead || static_cast<uint8_t>(payload[0]) != kEvent) return false;
  out->event_type = static_cast<uint8_t>(payload[1]);
  out->seq_flag = static_cast<uint8_t>(payload[2]);
  out->dev_id = Get<uint32_t>(payload, 4);
  out->pid = Get<int32_t>(payload, 8);
  out->sequence = Get<uint32_t>(payload, 12);
  out->name = GetChars(payload, 16, kEventNameSize);
  out->time = GetChars(payload, 48, kEventTimeSize);
  out->save_type = static_cast<uint8_t>(payload[77]);
  out->buf_len = Get<uint32_t>(payload, 112);
  out->data = std::string(payload.substr(kEventHead));
  return true;
}

std::string NowTime20() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  tm local{};
  ::localtime_r(&tv.tv_sec, &local);
  char text[96];  // room for any int the format could print, so -Wformat-truncation has nothing to say
  std::snprintf(text, sizeof text, "%04d%02d%02d%02d%02d%02d%06ld", local.tm_year + 1900, local.tm_mon + 1,
                local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, static_cast<long>(tv.tv_usec));
  return text;
}

}  // namespace atraced::hal_double::wire
