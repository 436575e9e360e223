// CANN's .txt and .bin formats from a ring snapshot, byte for byte.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "atraced/proto/ring_positions.h"
#include "atraced/rings/ring_format.h"

using atraced::core::FormatLineTime;
using atraced::core::FormatRingBinary;
using atraced::core::FormatRingText;
using atraced::proto::RingRecord;
using atraced::proto::RingSnapshot;

namespace {

constexpr uint64_t kRealtime = 1700000000ull * 1000000000ull;  // 2023-11-14 22:13:20 UTC
constexpr uint64_t kMonotonic = 5000;

struct Fixture {
  std::vector<std::string> texts;
  RingSnapshot snap;
  Fixture(std::vector<std::string> t, std::vector<uint64_t> after_anchor_ns, uint32_t msg_size = 64)
      : texts(std::move(t)) {
    snap.header_valid = true;
    snap.msg_num = 8;
    snap.msg_size = msg_size;
    snap.realtime_ns = kRealtime;
    snap.monotonic_ns = kMonotonic;
    for (size_t i = 0; i < texts.size(); ++i) {
      RingRecord r;
      r.index = i;
      r.timestamp_ns = kMonotonic + after_anchor_ns[i];
      r.buffer_type = static_cast<uint8_t>(i);
      r.data = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(texts[i].data()), texts[i].size());
      snap.records.push_back(r);
    }
  }
};

// A monotonic ring's timeline depends on its header alone: the save's clocks are unused.
atraced::core::RingTimeline Stamped(const RingSnapshot& snap) {
  return atraced::core::RingTimeline::Of(snap, atraced::core::ClockSample{});
}

uint32_t U32(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t U64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

}  // namespace

TEST_CASE("line time: CANN's format with the trailing space, leap days, the epoch") {
  CHECK(FormatLineTime(0) == "1970-01-01 00:00:00.000.000 ");
  CHECK(FormatLineTime(1709164800ll * 1000000000 + 999999999) == "2024-02-29 00:00:00.999.999 ");
  CHECK(FormatLineTime(951782400ll * 1000000000) == "2000-02-29 00:00:00.000.000 ");
  CHECK(FormatLineTime(4102444799ll * 1000000000 + 1000) == "2099-12-31 23:59:59.000.001 ");
  CHECK(FormatLineTime(-5) == "1970-01-01 00:00:00.000.000 ");
}

TEST_CASE(".txt: one line per record, local time, CANN's text rules") {
  Fixture f({"first", "second\n", std::string("nul\0tail", 8), std::string(64, 'x'), ""},
            {1234567000, 1234568000, 2000000000, 3000000000, 3000001000});
  const std::string utc = FormatRingText(f.snap, Stamped(f.snap), 0);
  CHECK(utc ==
        "2023-11-14 22:13:21.234.567 first\n"
        "2023-11-14 22:13:21.234.568 second\n"
        "2023-11-14 22:13:22.000.000 nul\n" +
            std::string("2023-11-14 22:13:23.000.000 ") + std::string(63, 'x') + "\n" +
            "2023-11-14 22:13:23.000.001 \n");
  // The application's local time: UTC+8, and a negative offset across midnight.
  CHECK(FormatRingText(f.snap, Stamped(f.snap), 8 * 3600).substr(0, 34) == "2023-11-15 06:13:21.234.567 first\n");
  CHECK(FormatRingText(f.snap, Stamped(f.snap), -23 * 3600).substr(0, 28) == "2023-11-13 23:13:21.234.567 ");
}

TEST_CASE(".txt: a trailer only when records were lost, nothing for an empty ring") {
  Fixture f({"a"}, {0});
  CHECK(FormatRingText(f.snap, Stamped(f.snap), 0) == "2023-11-14 22:13:20.000.000 a\n");
  f.snap.dropped = 2;
  f.snap.torn = 1;
  CHECK(FormatRingText(f.snap, Stamped(f.snap), 0) ==
        "2023-11-14 22:13:20.000.000 a\natraced: 3 record(s) lost: 2 dropped, 1 torn, 0 invalid\n");
  Fixture empty({}, {});
  CHECK(FormatRingText(empty.snap, Stamped(empty.snap), 0).empty());
  empty.snap.header_valid = false;
  CHECK(FormatRingText(empty.snap, Stamped(empty.snap), 0).empty());
}

TEST_CASE(".bin: CANN's control header, struct segment, data head and slots") {
  Fixture f({"abc", "defgh"}, {7, 1000});
  std::vector<atraced::proto::RingStructEntry> structs(2);
  structs[0].buffer_type = 0;
  structs[0].name = "task";
  structs[0].fields = {{6, 2, 4, "id"}, {100, 3, 16, "tag"}};
  structs[1].buffer_type = 3;
  structs[1].name = std::string(40, 'n');  // cut to 31 bytes + NUL in the 32-byte field
  structs[1].fields = {{8, 0, 8, "addr"}};
  const auto b = FormatRingBinary(f.snap, Stamped(f.snap), structs, 8 * 3600);

  const size_t struct_size = 40 + (40 + 2 * 40) + (40 + 40);
  const size_t slot = 16 + 64;
  REQUIRE(b.size() == 48 + struct_size + 16 + 2 * slot);
  // TraceCtrlHead
  CHECK(U32(b, 0) == 0xD928);
  CHECK(U32(b, 4) == 3);
  CHECK(U32(b, 8) == 0);  // pos, typeRes[2], traceType
  CHECK(U32(b, 12) == struct_size);
  CHECK(U32(b, 16) == 2 * slot);
  CHECK(static_cast<int32_t>(U32(b, 20)) == 480);
  CHECK(U64(b, 24) == kRealtime);
  CHECK(U64(b, 32) == 1000000);
  CHECK(U64(b, 40) == 0);
  // Struct segment
  size_t at = 48;
  CHECK(U32(b, at) == 2);
  CHECK(std::all_of(b.begin() + at + 4, b.begin() + at + 40, [](uint8_t c) { return c == 0; }));
  at += 40;
  CHECK(std::string(reinterpret_cast<const char*>(&b[at])) == "task");
  CHECK(U32(b, at + 32) == 2);
  CHECK(b[at + 36] == 0);
  at += 40;
  CHECK(std::string(reinterpret_cast<const char*>(&b[at])) == "id");
  CHECK(b[at + 32] == 6);
  CHECK(b[at + 33] == 2);
  CHECK(U32(b, at + 34) % 65536 == 4);
  at += 40;
  CHECK(std::string(reinterpret_cast<const char*>(&b[at])) == "tag");
  CHECK(b[at + 32] == 100);
  at += 40;
  CHECK(std::string(reinterpret_cast<const char*>(&b[at])) == std::string(31, 'n'));
  CHECK(b[at + 36] == 3);
  at += 80;
  // Data head
  CHECK(U32(b, at) == slot);
  CHECK(U32(b, at + 4) == 64);
  CHECK(U32(b, at + 8) == 2);
  CHECK(U32(b, at + 12) == 0);
  at += 16;
  // Slots: cycle (ns since the anchor), txtSize, busy 0, bufferType, payload zero-padded.
  CHECK(U64(b, at) == 7);
  CHECK(U32(b, at + 8) == 3);
  CHECK(b[at + 12] == 0);
  CHECK(b[at + 13] == 0);
  CHECK(std::string(reinterpret_cast<const char*>(&b[at + 16]), 3) == "abc");
  CHECK(std::all_of(b.begin() + at + 19, b.begin() + at + slot, [](uint8_t c) { return c == 0; }));
  at += slot;
  CHECK(U64(b, at) == 1000);
  CHECK(U32(b, at + 8) == 5);
  CHECK(b[at + 13] == 1);
  CHECK(std::string(reinterpret_cast<const char*>(&b[at + 16]), 5) == "defgh");

  Fixture empty({}, {});
  CHECK(FormatRingBinary(empty.snap, Stamped(empty.snap), structs, 0).empty());
}

TEST_CASE("positions: each record's place in the ring, in the files' order, for a reader of later saves",
          "[rings][positions]") {
  // Records 5, 6 and 8 of the ring (7 torn), 8 stamped before 6: the files list 5, 8, 6.
  Fixture f({"five", "six", "eight"}, {1000, 3000, 2000});
  f.snap.records[0].index = 5;
  f.snap.records[1].index = 6;
  f.snap.records[2].index = 8;
  const auto time = Stamped(f.snap);
  const std::string line = atraced::core::RingPositionsLine(f.snap, time);
  CHECK(line == "atraced: ring 0000000000001388 from 5 records 0,3,1\n");  // the ring: its monotonic anchor, 5000
  const auto read = atraced::proto::FindRingPositions(FormatRingText(f.snap, time, 0) + line);
  REQUIRE(read);
  CHECK(read->ring == kMonotonic);
  CHECK(read->records == std::vector<uint64_t>{5, 8, 6});
  Fixture empty({}, {});
  CHECK(atraced::core::RingPositionsLine(empty.snap, Stamped(empty.snap)).empty());
}
