// CANN's .bin as the text asys writes for it (atraced/proto/cann_bin_text.h).
//
// data/cann_golden.bin was written by atraced (libascend_trace: an object with two struct
// entries covering every field type and show mode, three records of each and one of a
// buffer type with no entry, then AtraceSave); data/cann_golden.asys.txt is what CANN's own
// asys (hicann/oam-tools, collect/trace/trace_collect.py, ParseTrace.parse) wrote for it
// with TZ=UTC. The decoder must give the same bytes.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ring_positions.h"

using atraced::proto::CannBinToText;

namespace {

std::vector<uint8_t> ReadBytes(const std::string& name) {
  std::ifstream in(std::string(ATRACED_SOURCE_DIR) + "/tests/proto/data/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string b = s.str();
  return {b.begin(), b.end()};
}

void InUtc() {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
}

template <typename T>
void Put(std::vector<uint8_t>& b, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) b[at + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}

// Offsets in the golden file: 48-byte head, the struct segment (40, then 40 per entry and
// 40 per field), the 16-byte data head, then (16 + msg size) per record.
constexpr size_t kHead = 48;

}  // namespace

TEST_CASE("cann .bin: every field type and show mode as asys writes them", "[cannbin]") {
  InUtc();
  const auto bin = ReadBytes("cann_golden.bin");
  const auto expected = ReadBytes("cann_golden.asys.txt");
  REQUIRE(bin.size() > kHead);
  REQUIRE(!expected.empty());
  const auto r = CannBinToText(bin, 0);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.text == std::string(expected.begin(), expected.end()));
  CHECK(r.warning.empty());
}

TEST_CASE("cann .bin: the positions line a save appends after the data segment changes nothing asys reads",
          "[cannbin][positions]") {
  InUtc();
  auto bin = ReadBytes("cann_golden.bin");
  const auto expected = ReadBytes("cann_golden.asys.txt");
  const std::string line = atraced::proto::FormatRingPositions(0x1234, std::vector<uint64_t>{0, 1, 2, 3});
  bin.insert(bin.end(), line.begin(), line.end());
  const auto r = CannBinToText(bin, 0);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.text == std::string(expected.begin(), expected.end()));
  CHECK(r.warning.empty());
  const auto read = atraced::proto::FindRingPositions(std::string_view(reinterpret_cast<const char*>(bin.data()), bin.size()));
  REQUIRE(read);
  CHECK(read->ring == 0x1234);
}

TEST_CASE("cann .bin: the reader's offset against minutesWest moves times as asys moves them", "[cannbin]") {
  InUtc();
  const auto bin = ReadBytes("cann_golden.bin");
  // asys adds (reader's offset in minutes - minutesWest) * 1e9 ns, minutes counted as
  // seconds: a reader 2 minutes east of what the file says sees every record 2 s later
  // (after converting to its own local time, which is UTC here). Odd, but it is what asys
  // prints, and what a user compares against.
  const auto same = CannBinToText(bin, 0);
  const auto east = CannBinToText(bin, 120);
  REQUIRE(same.ok);
  REQUIRE(east.ok);
  CHECK(same.text.substr(0, 19) != east.text.substr(0, 19));
  std::tm a{}, b{};
  REQUIRE(::strptime(same.text.substr(0, 19).c_str(), "%Y-%m-%d %H:%M:%S", &a) != nullptr);
  REQUIRE(::strptime(east.text.substr(0, 19).c_str(), "%Y-%m-%d %H:%M:%S", &b) != nullptr);
  CHECK(::timegm(&b) - ::timegm(&a) == 2);
  // Microseconds and fields unchanged, line by line.
  auto rest = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out += line.substr(19) + "\n";
    return out;
  };
  CHECK(rest(same.text) == rest(east.text));
}

TEST_CASE("cann .bin: busy slots and unknown struct types are skipped, a short data segment warns", "[cannbin]") {
  InUtc();
  auto bin = ReadBytes("cann_golden.bin");
  const auto full = CannBinToText(bin, 0);
  REQUIRE(full.ok);
  uint32_t struct_size = 0;
  std::memcpy(&struct_size, bin.data() + 12, 4);
  const size_t data_head = kHead + struct_size;
  uint32_t slot = 0;
  std::memcpy(&slot, bin.data() + data_head, 4);
  const size_t first_record = data_head + 16;
  auto busy = bin;
  busy[first_record + 12] = 1;  // the first record's busy flag
  const auto skipped = CannBinToText(busy, 0);
  REQUIRE(skipped.ok);
  CHECK(skipped.text == full.text.substr(full.text.find('\n') + 1));
  auto unknown = bin;
  unknown[first_record + 13] = 9;  // a buffer type with no struct entry
  CHECK(CannBinToText(unknown, 0).text == skipped.text);
  // The head says more data than the file holds: asys warns and parses what is there.
  auto longer = bin;
  Put<uint32_t>(longer, 16, 0x7fffffffu);
  const auto warned = CannBinToText(longer, 0);
  CHECK(warned.ok);
  CHECK(!warned.warning.empty());
}

TEST_CASE("cann .bin: malformed files are refused with the reason, never read past their end", "[cannbin]") {
  InUtc();
  const auto bin = ReadBytes("cann_golden.bin");
  auto refused = [](std::vector<uint8_t> b, const char* why) {
    const auto r = CannBinToText(b, 0);
    INFO(why << ": " << r.error);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find(why) != std::string::npos);
  };
  auto bad_magic = bin;
  bad_magic[0] ^= 1;
  refused(bad_magic, "not a CANN trace .bin");
  auto version4 = bin;
  Put<uint32_t>(version4, 4, 4);
  refused(version4, "not a CANN trace .bin");
  auto trace_type = bin;
  trace_type[11] = 1;
  refused(trace_type, "trace type");
  auto huge_struct = bin;
  Put<uint32_t>(huge_struct, 12, 0xffffffffu);
  refused(huge_struct, "incomplete");
  // An int32 array whose length is not a whole number of elements: asys fails the whole
  // file at the element that does not fit.
  auto lying_field = bin;
  Put<uint16_t>(lying_field, kHead + 40 + 40 + 18 * 40 + 34, 6);  // all_types' 19th field, ai32
  refused(lying_field, "do not fit the record");
  auto lying_count = bin;
  uint32_t struct_size = 0;
  std::memcpy(&struct_size, bin.data() + 12, 4);
  Put<uint32_t>(lying_count, kHead + struct_size + 8, 1000000);  // msg num
  refused(lying_count, "truncated");
  // Every truncation either parses (fewer records cannot happen: a cut record is an error)
  // or is refused; none reads outside the bytes (ASan in CI).
  for (size_t n = 0; n < bin.size(); n += 7) {
    const auto r = CannBinToText(std::vector<uint8_t>(bin.begin(), bin.begin() + static_cast<long>(n)), 0);
    CHECK((r.ok || !r.error.empty()));
  }
}

TEST_CASE("cann .bin: a reader's bound stops the text at a whole line, at most that long", "[cannbin]") {
  InUtc();
  const auto bin = ReadBytes("cann_golden.bin");
  const auto full = CannBinToText(bin, 0);
  REQUIRE(full.ok);
  const size_t first_line = full.text.find('\n') + 1;
  // (The bound counts the text before asys drops its NUL bytes, so it may stop sooner.)
  for (size_t bound : {size_t{1}, first_line - 1, first_line, first_line + 1, full.text.size() / 2, full.text.size() - 1}) {
    INFO(bound);
    const auto r = CannBinToText(bin, 0, bound);
    REQUIRE(r.ok);
    CHECK(r.stopped);
    CHECK(r.text.size() <= bound);
    CHECK(full.text.compare(0, r.text.size(), r.text) == 0);
    if (!r.text.empty()) CHECK(r.text.back() == '\n');
  }
  CHECK(CannBinToText(bin, 0, 1).text.empty());
  CHECK_FALSE(CannBinToText(bin, 0, full.text.size() / 2).text.empty());
  const auto whole = CannBinToText(bin, 0, full.text.size() * 2);
  CHECK_FALSE(whole.stopped);
  CHECK(whole.text == full.text);
}
