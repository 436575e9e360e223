// The positions line of a ring save (proto/ring_positions.h): what the daemon writes reads
// back the same, within the length a save reserves for it, and anything else, hostile or cut,
// reads as no positions.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "atraced/proto/ring_layout.h"
#include "atraced/proto/ring_positions.h"

using namespace atraced::proto;

TEST_CASE("ring positions: runs and single positions, in the file's order, read back the same", "[proto][positions]") {
  const std::vector<uint64_t> k{4000, 4001, 4002, 4004, 3990, 3991, 4005};
  const std::string line = FormatRingPositions(0x1234abcdULL, k);
  CHECK(line == "atraced: ring 000000001234abcd from 3990 records 10-12,14,0-1,15\n");
  const auto back = FindRingPositions("2026-12-06 06:09:10.000.000 a\natraced: 1 record(s) lost: 1 dropped, 0 torn, 0 invalid\n" + line);
  REQUIRE(back);
  CHECK(back->ring == 0x1234abcdULL);
  CHECK(back->records == k);
  // In a .bin it follows the data segment directly: the last record's bytes, then the line.
  const std::string bin("\xd9\x28\0\0\x03\0\0\0\n\xff\xfe", 11);
  const auto in_bin = FindRingPositions(bin + line);
  REQUIRE(in_bin);
  CHECK(in_bin->records == k);
  // No records, or positions no one ring's window holds: no line.
  CHECK(FormatRingPositions(1, std::vector<uint64_t>{}).empty());
  CHECK(FormatRingPositions(1, std::vector<uint64_t>{5, 5 + ATR_RING_MAX_MSG_NUM}).empty());
}

TEST_CASE("ring positions: the line is never longer than a save reserves for it", "[proto][positions]") {
  // The longest offsets, one position in two, near the top of the sequence.
  std::vector<uint64_t> k;
  for (uint64_t i = 0; i < ATR_RING_MAX_MSG_NUM; i += 2) k.push_back(UINT64_MAX - 2000 + i);
  const std::string line = FormatRingPositions(UINT64_MAX, k);
  CHECK(line.size() <= MaxRingPositionsLine(k.size()));
  CHECK(FindRingPositions(line)->records == k);
  const std::vector<uint64_t> one{UINT64_MAX};
  CHECK(FormatRingPositions(UINT64_MAX, one).size() <= MaxRingPositionsLine(1));
}

TEST_CASE("ring positions: a file without the line, or with a malformed or oversized one, has none",
          "[proto][positions][security]") {
  CHECK_FALSE(FindRingPositions(""));
  CHECK_FALSE(FindRingPositions("2026-12-06 06:09:10.000.000 a\n"));
  CHECK_FALSE(FindRingPositions("atraced: ring 0000000000001234 from 0 records 1-3"));  // no newline: cut
  for (const char* bad : {"atraced: ring 1234 from 0 records 1\n", "atraced: ring 000000000000123g from 0 records 1\n",
                          "atraced: ring 0000000000001234 records 1\n", "atraced: ring 0000000000001234 from records 1\n",
                          "atraced: ring 0000000000001234 from x records 1\n",
                          "atraced: ring 0000000000001234 from 0 records \n", "atraced: ring 0000000000001234 from 0 records 1,\n",
                          "atraced: ring 0000000000001234 from 0 records 3-1\n", "atraced: ring 0000000000001234 from 0 records 3-3\n",
                          "atraced: ring 0000000000001234 from 0 records -1\n", "atraced: ring 0000000000001234 from 0 records 1,,2\n",
                          "atraced: ring 0000000000001234 from 0 records 99999999999999999999999\n",
                          "atraced: ring 0000000000001234 from 0 records 1024\n",  // past one ring's window
                          "atraced: ring 0000000000001234 from 18446744073709551615 records 1\n",  // wraps
                          "atraced: ring 0000000000001234 from 0 records 0-1023,0\n",  // 1025: more than a ring holds
                          "atraced: ring 0000000000001234 from 0 records 1\n2026-12-06 06:09:10.000.000 a\n"}) {
    INFO(bad);
    CHECK_FALSE(FindRingPositions(bad));
  }
  // A whole ring's worth is the most, in runs or one by one.
  CHECK(FindRingPositions("atraced: ring 0000000000001234 from 7 records 0-1023\n")->records.size() == ATR_RING_MAX_MSG_NUM);
  std::string singles = "atraced: ring 0000000000001234 from 0 records ";
  for (int i = 0; i < 1025; ++i) singles += (i ? "," : "") + std::to_string(i % 1024);
  CHECK_FALSE(FindRingPositions(singles + "\n"));
}
