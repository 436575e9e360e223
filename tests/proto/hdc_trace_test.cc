// The device channel's four layers as bytes (atraced/proto/hdc_trace.h): what CANN's device
// sends must come through, every lie must be refused with a reason, and nothing refused may
// name a file outside its directory.
#include "atraced/proto/hdc_trace.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "atraced/proto/byte_io.h"

namespace hdc = atraced::proto::hdc;
using atraced::proto::GetU16;
using atraced::proto::GetU32;
using Bytes = std::vector<uint8_t>;

namespace {

// A TraceEventMsg as the device builds it (§3.5), then optionally bent by the test.
Bytes EventMessage(const std::string& name, const std::string& time, uint8_t save_type, const std::string& data,
                   uint8_t seq = hdc::kSeqSingle) {
  Bytes m(hdc::kEventHeadBytes, 0);
  m[0] = hdc::kMsgEvent;
  m[2] = seq;
  m[4] = 3;  // devId
  m[8] = 0x39;
  m[9] = 0x30;  // pid 12345
  std::memcpy(m.data() + 16, name.data(), std::min<size_t>(name.size(), 32));
  std::memcpy(m.data() + 48, time.data(), std::min<size_t>(time.size(), 29));
  m[77] = save_type;
  const auto len = static_cast<uint32_t>(data.size());
  for (int i = 0; i < 4; ++i) m[112 + static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  m.insert(m.end(), data.begin(), data.end());
  return m;
}

const std::string kTime = "20261201190546586602";

// Sends `payload` through AdxMessage and SplitIntoPackets and back through the assembler.
std::vector<Bytes> RoundTrip(const Bytes& payload, uint32_t segment, hdc::PacketAssembler& a) {
  std::vector<Bytes> out;
  for (const Bytes& p : hdc::SplitIntoPackets(hdc::AdxMessage(hdc::kStatusNoneError, payload), segment)) {
    if (a.Feed(p) == hdc::PacketAssembler::Step::kMessage) out.push_back(a.message());
  }
  return out;
}

}  // namespace

TEST_CASE("hdc: packets carry 12 + len bytes, payload at offset 9, split at the segment less 12") {
  const Bytes payload(5000, 'x');
  const auto message = hdc::AdxMessage(hdc::kStatusNoneError, payload);
  REQUIRE(message.size() == 24 + 5000);
  CHECK(GetU16(message.data()) == 0xC396);
  CHECK(message[2] == 0x10);
  CHECK(GetU16(message.data() + 4) == 16);
  CHECK(GetU32(message.data() + 8) == 5000);
  CHECK(GetU32(message.data() + 12) == 5000);
  CHECK(GetU16(message.data() + 22) == 6);
  const auto packets = hdc::SplitIntoPackets(message, 1024);
  REQUIRE(packets.size() == 5);  // 5024 bytes in 1012-byte pieces
  for (size_t i = 0; i < packets.size(); ++i) {
    const uint32_t len = GetU32(packets[i].data());
    CHECK(packets[i].size() == 12 + len);
    CHECK(GetU32(packets[i].data() + 4) == 0xB0);
    CHECK(packets[i][8] == (i + 1 == packets.size() ? 1 : 0));
    CHECK(len <= 1012);
  }
}

TEST_CASE("hdc: a message of many packets arrives whole, and the next one starts clean") {
  hdc::PacketAssembler a;
  const Bytes big(300000, 'b');
  auto got = RoundTrip(big, 4096, a);
  REQUIRE(got.size() == 1);
  hdc::AdxView view;
  std::string why;
  REQUIRE(hdc::DecodeAdx(got[0], &view, &why));
  CHECK(Bytes(view.payload.begin(), view.payload.end()) == big);
  got = RoundTrip(Bytes{1, 2, 3}, 4096, a);
  REQUIRE(got.size() == 1);
  REQUIRE(hdc::DecodeAdx(got[0], &view, &why));
  CHECK(view.payload.size() == 3);
}

TEST_CASE("hdc: an oversized chain is refused whole and its remaining packets are skipped") {
  hdc::PacketAssembler a(10000);
  const auto packets = hdc::SplitIntoPackets(hdc::AdxMessage(6, Bytes(50000, 'o')), 4096);
  int refused = 0, messages = 0;
  for (const Bytes& p : packets) {
    const auto step = a.Feed(p);
    refused += step == hdc::PacketAssembler::Step::kRefused;
    messages += step == hdc::PacketAssembler::Step::kMessage;
  }
  CHECK(messages == 0);
  CHECK(refused == 1);  // one message, one refusal, however many packets it had
  // The message after it comes through.
  auto got = RoundTrip(Bytes(100, 'n'), 4096, a);
  CHECK(got.size() == 1);
}

// One packet of `len` value bytes ('c'), sent as 12 + len bytes, with isLast as given.
Bytes Packet(uint32_t len, bool last) {
  Bytes p(hdc::kPacketHeadBytes + len, 'c');
  for (int i = 0; i < 4; ++i) {
    p[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
    p[4 + static_cast<size_t>(i)] = static_cast<uint8_t>(hdc::kPacketType >> (8 * i));
  }
  p[8] = last ? 1 : 0;
  return p;
}

TEST_CASE("hdc: a chain that never sets isLast is dropped at its packet bound, and the next message comes through") {
  hdc::PacketAssembler a(10000, /*max_packets=*/8, /*max_bytes=*/1u << 20);
  for (int i = 0; i < 8; ++i) REQUIRE(a.Feed(Packet(1, false)) == hdc::PacketAssembler::Step::kMore);
  CHECK(a.chain_packets() == 8);
  CHECK(a.Feed(Packet(1, false)) == hdc::PacketAssembler::Step::kRefused);
  CHECK_THAT(a.why(), Catch::Contains("without its last packet after 9 packets"));
  CHECK(a.chain_packets() == 0);
  CHECK(RoundTrip(Bytes(100, 'n'), 4096, a).size() == 1);
  CHECK(a.chain_packets() == 0);
}

TEST_CASE("hdc: the skipped rest of an oversized chain is bounded too") {
  // Refused once for its size; then skipped, but not for ever: past the byte bound the
  // chain is refused again and dropped.
  hdc::PacketAssembler a(100, /*max_packets=*/1000, /*max_bytes=*/10000);
  int refused = 0;
  for (int i = 0; i < 9; ++i) refused += a.Feed(Packet(1000, false)) == hdc::PacketAssembler::Step::kRefused;
  CHECK(refused == 1);
  CHECK(a.chain_packets() == 9);
  CHECK(a.Feed(Packet(1000, false)) == hdc::PacketAssembler::Step::kRefused);  // 10 120 bytes
  CHECK(a.chain_packets() == 0);
  CHECK(RoundTrip(Bytes(10, 'n'), 4096, a).size() == 1);
}

TEST_CASE("hdc: a packet that lies about its length or type is refused with the reason") {
  hdc::PacketAssembler a;
  Bytes p = hdc::SplitIntoPackets(hdc::AdxMessage(6, Bytes(40, 'x')), 1024)[0];
  Bytes short_packet(p.begin(), p.end() - 3);  // without the 3 trailing bytes CANN requires
  CHECK(a.Feed(short_packet) == hdc::PacketAssembler::Step::kRefused);
  CHECK_THAT(a.why(), Catch::Contains("12 + len"));
  Bytes wrong_type = p;
  wrong_type[4] = 0xB1;
  CHECK(a.Feed(wrong_type) == hdc::PacketAssembler::Step::kRefused);
  CHECK_THAT(a.why(), Catch::Contains("type"));
  CHECK(a.Feed(Bytes(5, 0)) == hdc::PacketAssembler::Step::kRefused);
  CHECK(a.Feed(p) == hdc::PacketAssembler::Step::kMessage);
}

TEST_CASE("hdc: the ADX head is checked as CANN checks it, and more") {
  hdc::AdxView view;
  std::string why;
  Bytes m = hdc::AdxMessage(6, Bytes(10, 'x'));
  REQUIRE(hdc::DecodeAdx(m, &view, &why));
  CHECK(view.status == 6);
  CHECK_FALSE(hdc::DecodeAdx(hdc::AdxMessage(6, Bytes{}), &view, &why));  // empty payload
  Bytes bad_slice = m;
  bad_slice[12] = 11;
  CHECK_FALSE(hdc::DecodeAdx(bad_slice, &view, &why));
  CHECK_THAT(why, Catch::Contains("slice"));
  Bytes bad_magic = m;
  bad_magic[0] = 0;
  CHECK_FALSE(hdc::DecodeAdx(bad_magic, &view, &why));
  CHECK_FALSE(hdc::DecodeAdx(hdc::AdxMessage(hdc::kStatusFileLoad, Bytes(4, 0)), &view, &why));
}

TEST_CASE("hdc: hello, start and end are CANN's sizes and fields") {
  const Bytes hello = hdc::HelloPayload();
  REQUIRE(hello.size() == 48);
  CHECK(hello[0] == 1);
  CHECK(GetU16(hello.data() + 4) == 0xC327);
  CHECK(GetU16(hello.data() + 6) == 1);
  CHECK(hdc::IsHelloEcho(hello));
  const Bytes start = hdc::StartPayload(6000);
  REQUIRE(start.size() == 32);
  CHECK(start[0] == 2);
  CHECK(GetU32(start.data() + 4) == 6000);
  const Bytes end = hdc::EndPayload();
  CHECK(end.size() == 32);
  CHECK(hdc::IsEndMsg(end));
  const std::string marker(hdc::kHdcEndMsg);
  CHECK(hdc::IsHdcEndMsg(Bytes(marker.begin(), marker.end())));
  CHECK(marker.size() == 44);
}

TEST_CASE("hdc: TS chunks and utrace objects decode to the file CANN would write") {
  hdc::DeviceEvent ev;
  std::string why;
  const Bytes ts = EventMessage("ts_5", kTime, 0, "register dump\n", hdc::kSeqStart);
  REQUIRE(hdc::DecodeEvent(ts, &ev, &why));
  CHECK(ev.is_ts);
  CHECK(ev.ts_device == 5);
  CHECK(ev.seq_flag == hdc::kSeqStart);
  CHECK(ev.device_id == 3);
  CHECK(ev.host_pid == 12345);
  CHECK(ev.time == kTime);
  CHECK(std::string(ev.data.begin(), ev.data.end()) == "register dump\n");

  REQUIRE(hdc::DecodeEvent(EventMessage("HCCL_obj", kTime, 1, "\x01\x02"), &ev, &why));
  CHECK_FALSE(ev.is_ts);
  CHECK(ev.binary);
  CHECK(ev.name == "HCCL_obj");
  // ts_N as a .bin, or with N out of range, is an object like any other.
  REQUIRE(hdc::DecodeEvent(EventMessage("ts_1024", kTime, 0, "x"), &ev, &why));
  CHECK_FALSE(ev.is_ts);
  REQUIRE(hdc::DecodeEvent(EventMessage("ts_2", kTime, 1, "x"), &ev, &why));
  CHECK_FALSE(ev.is_ts);
  // A bufLen shorter than what arrived takes bufLen bytes, as CANN writes them.
  Bytes longer = EventMessage("obj", kTime, 0, "abc");
  longer.push_back('z');
  REQUIRE(hdc::DecodeEvent(longer, &ev, &why));
  CHECK(ev.data.size() == 3);
  // Bytes outside the name set become '_'.
  REQUIRE(hdc::DecodeEvent(EventMessage("a b:c", kTime, 0, "x"), &ev, &why));
  CHECK(ev.name == "a_b_c");
}

TEST_CASE("hdc: a hostile event is refused with its reason, never turned into a path") {
  hdc::DeviceEvent ev;
  std::string why;
  Bytes lying = EventMessage("obj", kTime, 0, "abc");
  lying[112] = 200;  // bufLen 200, 3 bytes arrived
  CHECK_FALSE(hdc::DecodeEvent(lying, &ev, &why));
  CHECK_THAT(why, Catch::Contains("bufLen 200"));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("../x", kTime, 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("a/b", kTime, 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("..", kTime, 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("", kTime, 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage(std::string(32, 'n'), kTime, 0, "a"), &ev, &why));
  CHECK_THAT(why, Catch::Contains("not terminated"));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("obj", "2026120119054658660x", 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("obj", "2026", 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("obj", std::string(29, '1'), 0, "a"), &ev, &why));
  CHECK_FALSE(hdc::DecodeEvent(EventMessage("obj", kTime, 2, "a"), &ev, &why));
  Bytes truncated = EventMessage("obj", kTime, 0, "");
  truncated.resize(100);
  CHECK_FALSE(hdc::DecodeEvent(truncated, &ev, &why));
}
