// The ring writer and the untrusting snapshot reader: round trips, the memfd's seals, and
// corrupt, hostile or truncated rings, which must yield partial results and problems.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>

#include "ring_test_util.h"

using atraced::proto::ReadRingSnapshot;
using atraced::proto::RingExpectation;
using ascend_trace_test::TestRing;
using ascend_trace_test::Text;

namespace {

void PutU32(std::vector<uint8_t>& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void PutU64(std::vector<uint8_t>& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
size_t SlotAt(const TestRing& r, uint32_t i) { return ATR_RING_HEADER_SIZE + i * ATR_RING_SLOT_SIZE(r.shape().msg_size); }

}  // namespace

TEST_CASE("ring memfd: sealed, sized, header anchored") {
  TestRing ring(1024, 112);
  const int seals = ::fcntl(ring.fd(), F_GET_SEALS);
  CHECK((seals & F_SEAL_SHRINK) != 0);
  CHECK((seals & F_SEAL_GROW) != 0);
  CHECK((seals & F_SEAL_SEAL) != 0);
  CHECK((::fcntl(ring.fd(), F_GETFD) & FD_CLOEXEC) != 0);
  struct stat st {};
  REQUIRE(::fstat(ring.fd(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == ring.bytes());
  CHECK(ring.bytes() >= ATR_RING_BYTES(1024, 112));
  CHECK(ring.bytes() % 4096 == 0);
  CHECK(::ftruncate(ring.fd(), 4096) != 0);  // the daemon's mapping can never lose pages

  const auto copy = ring.Copy();
  const auto snap = ReadRingSnapshot(copy);
  REQUIRE(snap.header_valid);
  CHECK(snap.msg_num == 1024);
  CHECK(snap.msg_size == 112);
  CHECK(snap.records.empty());
  CHECK(snap.empty == 1024);
  CHECK(snap.realtime_ns > 1600000000ull * 1000000000ull);  // after 2020
  CHECK(snap.monotonic_ns > 0);
}

TEST_CASE("ring: records come back in order, truncated at msg_size, with their buffer type") {
  TestRing ring(4, 64);
  CHECK(ring.shape().msg_num == 4);
  const std::string long_text(100, 'L');
  REQUIRE(ring.Write("one", 3) == TRACE_SUCCESS);
  REQUIRE(ring.Write("two", 3, 7) == TRACE_SUCCESS);
  REQUIRE(ring.Write(long_text.data(), 100) == TRACE_SUCCESS);
  const auto copy = ring.Copy();
  const auto snap = ReadRingSnapshot(copy);
  REQUIRE(snap.records.size() == 3);
  CHECK(Text(snap.records[0].data) == "one");
  CHECK(snap.records[0].index == 0);
  CHECK(Text(snap.records[1].data) == "two");
  CHECK(snap.records[1].buffer_type == 7);
  CHECK(Text(snap.records[2].data) == long_text.substr(0, 64));
  CHECK(snap.records[0].timestamp_ns <= snap.records[1].timestamp_ns);
  CHECK(snap.records[0].timestamp_ns >= snap.monotonic_ns);
  CHECK(snap.write_index == 3);
  CHECK(snap.torn == 0);
  CHECK(snap.invalid == 0);
  CHECK(snap.problems.empty());
}

TEST_CASE("ring: wraps, keeping the newest msg_num records (locked and noLock)") {
  for (bool no_lock : {false, true}) {
    TestRing ring(8, 64, no_lock);
    for (int i = 0; i < 20; ++i) {
      const std::string t = "r" + std::to_string(i);
      REQUIRE(ring.Write(t.data(), static_cast<uint32_t>(t.size())) == TRACE_SUCCESS);
    }
    const auto copy = ring.Copy();
  const auto snap = ReadRingSnapshot(copy);
    REQUIRE(snap.records.size() == 8);
    for (int i = 0; i < 8; ++i) CHECK(Text(snap.records[i].data) == "r" + std::to_string(12 + i));
    CHECK(snap.flags == (no_lock ? ATR_RING_FLAG_NO_LOCK : 0u));
    CHECK(snap.dropped == 0);
  }
}

TEST_CASE("reader: header problems refuse the whole ring with a reason") {
  TestRing ring(4, 64);
  REQUIRE(ring.Write("x", 1) == TRACE_SUCCESS);
  const auto good = ring.Copy();
  auto refused = [](const std::vector<uint8_t>& bytes, const std::string& what,
                    const std::optional<RingExpectation>& expect = std::nullopt) {
    const auto snap = ReadRingSnapshot(bytes, expect);
    CHECK_FALSE(snap.header_valid);
    CHECK(snap.records.empty());
    REQUIRE(snap.problems.size() == 1);
    CHECK_THAT(snap.problems[0], Catch::Contains(what));
  };
  refused({}, "smaller than the 128-byte header");
  refused(std::vector<uint8_t>(good.begin(), good.begin() + 127), "smaller than");
  auto b = good;
  PutU32(b, ATR_RING_OFF_MAGIC, 0);
  refused(b, "bad magic");
  b = good;
  b[ATR_RING_OFF_VERSION] = 9;
  refused(b, "unknown version");
  b = good;
  PutU32(b, ATR_RING_OFF_MSG_NUM, 3);
  refused(b, "not a power of two");
  b = good;
  PutU32(b, ATR_RING_OFF_MSG_NUM, 1u << 31);  // huge: must not be used to index
  refused(b, "not a power of two");
  b = good;
  PutU32(b, ATR_RING_OFF_MSG_SIZE, 0xffffffff);
  refused(b, "outside 64..1024");
  b = good;
  PutU32(b, ATR_RING_OFF_SLOT_SIZE, 8);
  refused(b, "slot_size");
  b = good;
  PutU32(b, ATR_RING_OFF_FLAGS, 0x80);
  refused(b, "unknown flags");
  b = good;
  PutU32(b, ATR_RING_OFF_MSG_NUM, 1024);  // claims more slots than the copy holds
  refused(b, "bytes, the ring has");
  refused(good, "differ from the registration", RingExpectation{8, 64, 0});
  CHECK(ReadRingSnapshot(good, RingExpectation{4, 64, 0}).header_valid);
}

TEST_CASE("reader: hostile slots are counted and skipped, the rest is kept") {
  TestRing ring(8, 64);
  for (int i = 0; i < 8; ++i) {
    const std::string t = "ok" + std::to_string(i);
    REQUIRE(ring.Write(t.data(), static_cast<uint32_t>(t.size())) == TRACE_SUCCESS);
  }
  auto b = ring.Copy();
  PutU32(b, SlotAt(ring, 1) + 16, 0xffffffff);  // length far past the slot
  PutU32(b, SlotAt(ring, 2) + 16, 65);          // one past msg_size
  PutU64(b, SlotAt(ring, 3), 4 + 1 + 8);        // complete, but the sequence of another slot...
  PutU64(b, SlotAt(ring, 3) + ATR_RING_SLOT_SIZE(64) - 8, 4 + 1 + 8);
  PutU64(b, SlotAt(ring, 4), 99);               // torn: done and start disagree
  const auto snap = ReadRingSnapshot(b);
  REQUIRE(snap.header_valid);
  CHECK(snap.invalid == 3);
  CHECK(snap.torn == 1);
  REQUIRE(snap.records.size() == 4);
  CHECK(Text(snap.records[0].data) == "ok0");
  CHECK(Text(snap.records[1].data) == "ok5");
  CHECK(snap.problems.size() == 3);  // one line per kind: index, length, torn
}

TEST_CASE("reader: random garbage never crashes and never reads out of bounds") {
  std::mt19937_64 rng(42);
  TestRing ring(16, 64);
  for (int i = 0; i < 16; ++i) REQUIRE(ring.Write("abcdefgh", 8) == TRACE_SUCCESS);
  const auto good = ring.Copy();
  for (int round = 0; round < 2000; ++round) {
    auto b = good;
    // Flip bytes anywhere, including the header, and sometimes cut the copy short.
    for (int k = 0; k < 1 + round % 16; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    if (round % 3 == 0) b.resize(rng() % b.size());
    const auto snap = ReadRingSnapshot(b);
    for (const auto& r : snap.records) {
      REQUIRE(r.data.data() >= b.data());
      REQUIRE(r.data.data() + r.data.size() <= b.data() + b.size());
      REQUIRE(r.data.size() <= snap.msg_size);
    }
    REQUIRE(snap.problems.size() <= atraced::proto::kMaxRingProblems);
  }
}

namespace {

// Pages of the ring's memfd the kernel holds now (mincore over a fresh shared mapping).
size_t ResidentPages(int fd, uint64_t bytes, size_t* last_resident) {
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  REQUIRE(map != MAP_FAILED);
  std::vector<unsigned char> in_core((bytes + 4095) / 4096);
  REQUIRE(::mincore(map, bytes, in_core.data()) == 0);
  ::munmap(map, bytes);
  size_t n = 0;
  for (size_t i = 0; i < in_core.size(); ++i) {
    if (in_core[i] & 1) {
      ++n;
      *last_resident = i;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("CopyRingUsed reads the header and the used slots, never a page nobody wrote", "[ring][memory]") {
  TestRing ring(1024, 112);  // about 140 KiB: 35 pages
  for (int i = 0; i < 3; ++i) REQUIRE(ring.Write("record", 6) == 0);
  size_t last = 0;
  const size_t written = ResidentPages(ring.fd(), ring.bytes(), &last);
  CHECK(written <= 2);  // the header's page and the first slots'

  void* map = ::mmap(nullptr, ring.bytes(), PROT_READ, MAP_SHARED, ring.fd(), 0);
  REQUIRE(map != MAP_FAILED);
  std::vector<uint8_t> copy;
  const size_t read = atraced::proto::CopyRingUsed(map, ring.bytes(), &copy);
  CHECK(read == ATR_RING_HEADER_SIZE + 3 * ATR_RING_SLOT_SIZE(112));
  CHECK(ResidentPages(ring.fd(), ring.bytes(), &last) == written);  // nothing faulted in
  auto snap = ReadRingSnapshot(copy, RingExpectation{1024, 112, 0});
  REQUIRE(snap.header_valid);
  CHECK(snap.records.size() == 3);
  CHECK(snap.empty == 1021);

  // The old whole copy faults in every page: what the daemon paid per idle ring per save.
  std::vector<uint8_t> whole;
  atraced::proto::CopyRingSnapshot(map, ring.bytes(), &whole);
  CHECK(ResidentPages(ring.fd(), ring.bytes(), &last) > 30);
  ::munmap(map, ring.bytes());
}

TEST_CASE("CopyRingUsed bounds what it reads by the ring, whatever the header claims", "[ring][memory]") {
  TestRing ring(64, 64);
  REQUIRE(ring.Write("one", 3) == 0);
  // A write_index past msg_num: every slot is read, no more.
  uint64_t claimed = ~0ull;
  std::memcpy(ring.base() + ATR_RING_OFF_WRITE_INDEX, &claimed, 8);
  std::vector<uint8_t> copy;
  CHECK(atraced::proto::CopyRingUsed(ring.base(), ring.bytes(), &copy) == ATR_RING_BYTES(64, 64));
  CHECK(copy.size() == ATR_RING_BYTES(64, 64));
  CHECK(ReadRingSnapshot(copy, RingExpectation{64, 64, 0}).records.size() == 1);
  // A header whose layout needs more than the mapping: the header alone, which the reader rejects.
  uint32_t huge = 1024;
  std::memcpy(ring.base() + ATR_RING_OFF_MSG_NUM, &huge, 4);
  const uint64_t small = ATR_RING_BYTES(64, 64);
  CHECK(atraced::proto::CopyRingUsed(ring.base(), small, &copy) == ATR_RING_HEADER_SIZE);
  CHECK(copy.size() == ATR_RING_HEADER_SIZE);
  CHECK_FALSE(ReadRingSnapshot(copy, std::nullopt).header_valid);
  // Shorter than a header: what there is.
  CHECK(atraced::proto::CopyRingUsed(ring.base(), 64, &copy) == 64);
  CHECK_FALSE(ReadRingSnapshot(copy, std::nullopt).header_valid);
}

TEST_CASE("reader: records in time order, ties by index, whether the ring wrapped or writers interleaved") {
  TestRing ring(8, 64);
  for (int i = 0; i < 20; ++i) {
    const std::string t = "r" + std::to_string(i);
    REQUIRE(ring.Write(t.data(), static_cast<uint32_t>(t.size())) == TRACE_SUCCESS);
  }
  auto b = ring.Copy();  // records 12..19, record k in slot k % 8: the oldest in slot 4
  auto stamp = [&](int record, uint64_t ns) { PutU64(b, SlotAt(ring, record % 8) + 8, ns); };
  auto texts = [](const atraced::proto::RingSnapshot& s) {
    std::vector<std::string> out;
    for (const auto& r : s.records) out.push_back(Text(r.data));
    return out;
  };
  for (int k = 12; k < 20; ++k) stamp(k, 1000 + k);
  CHECK(texts(ReadRingSnapshot(b)) == std::vector<std::string>{"r12", "r13", "r14", "r15", "r16", "r17", "r18", "r19"});
  // Two writers on two threads: 15 took its stamp before 14 did, and 17 and 18 in the same ns.
  stamp(15, 1013);
  stamp(18, 1017);
  CHECK(texts(ReadRingSnapshot(b)) == std::vector<std::string>{"r12", "r13", "r15", "r14", "r16", "r17", "r18", "r19"});
  // A record older than all (a thread preempted between its stamp and its slot) goes first.
  stamp(19, 5);
  CHECK(texts(ReadRingSnapshot(b)) == std::vector<std::string>{"r19", "r12", "r13", "r15", "r14", "r16", "r17", "r18"});
}

TEST_CASE("CopyRingUsed into a reused buffer: slots past the used ones read as empty, not as the last copy's",
          "[ring][memory]") {
  // The daemon's workers reuse one buffer across saves and clear only what the copy does not
  // overwrite: a full ring copied first must leave nothing behind for a fuller-looking second.
  TestRing full(64, 64), few(64, 64);
  for (int i = 0; i < 64; ++i) REQUIRE(full.Write("full", 4) == 0);
  for (int i = 0; i < 3; ++i) REQUIRE(few.Write("few", 3) == 0);
  auto copy_of = [](const TestRing& r, std::vector<uint8_t>* out) {
    void* map = ::mmap(nullptr, r.bytes(), PROT_READ, MAP_SHARED, r.fd(), 0);
    REQUIRE(map != MAP_FAILED);
    atraced::proto::CopyRingUsed(map, r.bytes(), out);
    ::munmap(map, r.bytes());
  };
  std::vector<uint8_t> buffer;
  copy_of(full, &buffer);
  REQUIRE(ReadRingSnapshot(buffer).records.size() == 64);
  copy_of(few, &buffer);
  const auto snap = ReadRingSnapshot(buffer);
  REQUIRE(snap.header_valid);
  CHECK(snap.records.size() == 3);
  CHECK(snap.empty == 61);
  CHECK(snap.torn == 0);
  CHECK(snap.invalid == 0);
  for (const auto& r : snap.records) CHECK(Text(r.data) == "few");
}
