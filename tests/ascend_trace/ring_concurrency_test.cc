// Several threads submit into one locked ring while another thread keeps copying and reading
// it, as the daemon does: no snapshot may contain a torn record, and the counters must add
// up. Run under TSan too (there every store into the ring is atomic, so it must stay silent).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "ring_test_util.h"

using ascend_trace_test::TestRing;

namespace {

// A self-checking 112-byte record: writer, sequence, and a payload derived from both.
struct Record {
  uint32_t writer;
  uint32_t seq;
  uint8_t fill[104];
};
static_assert(sizeof(Record) == 112);

Record Make(uint32_t writer, uint32_t seq) {
  Record r{writer, seq, {}};
  for (size_t i = 0; i < sizeof r.fill; ++i) r.fill[i] = static_cast<uint8_t>(writer * 31 + seq + i);
  return r;
}

bool Intact(std::span<const uint8_t> data) {
  if (data.size() != sizeof(Record)) return false;
  Record r;
  std::memcpy(&r, data.data(), sizeof r);
  const Record want = Make(r.writer, r.seq);
  return std::memcmp(&r, &want, sizeof r) == 0;
}

}  // namespace

TEST_CASE("ring: 4 writers and a concurrent reader: no torn record, honest counters") {
  constexpr uint32_t kWriters = 4;
  constexpr uint32_t kPerWriter = 100000;
  TestRing ring(256, 112);  // small, so writers lap each other and the reader often
  std::atomic<bool> done{false};
  std::atomic<uint64_t> ok{0}, failed{0};
  uint64_t snapshots = 0, torn_seen = 0, bad = 0;

  std::thread reader([&] {
    while (!done.load(std::memory_order_acquire)) {
      const auto copy = ring.Copy();
      const auto snap = atraced::proto::ReadRingSnapshot(copy);
      if (!snap.header_valid || snap.invalid != 0) ++bad;
      for (const auto& r : snap.records) {
        if (!Intact(r.data)) ++bad;
      }
      torn_seen += snap.torn;
      ++snapshots;
    }
  });
  std::vector<std::thread> writers;
  for (uint32_t w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (uint32_t i = 0; i < kPerWriter; ++i) {
        const Record r = Make(w, i);
        if (ring.Write(&r, sizeof r) == TRACE_SUCCESS) {
          ok.fetch_add(1, std::memory_order_relaxed);
        } else {
          failed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  done.store(true, std::memory_order_release);
  reader.join();

  INFO("snapshots " << snapshots << ", torn slots seen " << torn_seen << ", dropped " << failed);
  CHECK(bad == 0);
  CHECK(snapshots > 0);
  const auto final_copy = ring.Copy();
  const auto snap = atraced::proto::ReadRingSnapshot(final_copy);
  // Every record either landed or was counted as dropped, by the writer and in the header.
  // write_index counts slots claimed: writers that contend claim them in batches, and a
  // batch given up (lapped, or unused past its lifetime) leaves slots claimed and unwritten.
  CHECK(ok + failed == uint64_t{kWriters} * kPerWriter);
  CHECK(snap.write_index >= ok + failed);
  CHECK(snap.dropped == failed);
  // Quiescent: every slot holds a complete record, and each is intact.
  CHECK(snap.torn == 0);
  CHECK(snap.records.size() == 256);
  for (const auto& r : snap.records) CHECK(Intact(r.data));
  // Per writer, the records kept appear in submission order.
  std::vector<int64_t> last(kWriters, -1);
  for (const auto& r : snap.records) {
    Record rec;
    std::memcpy(&rec, r.data.data(), sizeof rec);
    CHECK(static_cast<int64_t>(rec.seq) > last[rec.writer]);
    last[rec.writer] = rec.seq;
  }
}
