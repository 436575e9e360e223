// The positions line of a ring save (proto/ring_positions.h): what the daemon writes reads
// back the same, and anything else, hostile or cut, reads as no positions.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "atraced/proto/ring_layout.h"
#include "atraced/proto/ring_positions.h"

using namespace atraced::proto;

TEST_CASE("ring positions: runs and single positions, in the file's order, read back the same", "[proto][rings]") {
  const std::vector<uint64_t> k{4000, 4001, 4002, 4004, 17, 18, 4005};
  const std::string line = FormatRingPositions(0x1234abcdULL, k);
  CHECK(line == "atraced: ring 000000001234abcd records 4000-4002,4004,17-18,4005\n");
  const auto back = FindRingPositions("2026-12-06 06:09:10.000.000 a\natraced: 1 record(s) lost: 1 dropped, 0 torn, 0 invalid\n" + line);
  REQUIRE(back);
  CHECK(back->ring == 0x1234abcdULL);
  CHECK(back->records == k);
  // In a .bin it follows binary data: only the last line counts.
  std::string bin("\xd9\x28\0\0\x03\0\0\0\n\xff\xfe", 11);
  const auto in_bin = FindRingPositions(bin + line);
  REQUIRE(in_bin);
  CHECK(in_bin->records.size() == k.size());
}

TEST_CASE("ring positions: a file without the line, or with a malformed or oversized one, has none", "[proto][rings][security]") {
  CHECK_FALSE(FindRingPositions(""));
  CHECK_FALSE(FindRingPositions("2026-12-06 06:09:10.000.000 a\n"));
  CHECK_FALSE(FindRingPositions("atraced: ring 0000000000001234 records 1-3"));  // no newline: cut
  for (const char* bad : {"atraced: ring 1234 records 1\n", "atraced: ring 000000000000123g records 1\n",
                          "atraced: ring 0000000000001234 records \n", "atraced: ring 0000000000001234 records 1,\n",
                          "atraced: ring 0000000000001234 records 3-1\n", "atraced: ring 0000000000001234 records 3-3\n",
                          "atraced: ring 0000000000001234 records -1\n", "atraced: ring 0000000000001234 records 1,,2\n",
                          "atraced: ring 0000000000001234 records 99999999999999999999999\n",
                          "atraced: ring 0000000000001234 records 0-1024\n",  // 1025: more than a ring holds
                          "atraced: ring 0000000000001234 records 0-18446744073709551615\n",
                          "atraced: ring 0000000000001234 records 1\n2026-12-06 06:09:10.000.000 a\n"}) {
    INFO(bad);
    CHECK_FALSE(FindRingPositions(bad));
  }
  // A whole ring's worth is the most, in runs or one by one.
  CHECK(FindRingPositions("atraced: ring 0000000000001234 records 0-1023\n")->records.size() == ATR_RING_MAX_MSG_NUM);
  std::string singles = "atraced: ring 0000000000001234 records ";
  for (int i = 0; i < 1025; ++i) singles += (i ? "," : "") + std::to_string(2 * i);
  CHECK_FALSE(FindRingPositions(singles + "\n"));
}
