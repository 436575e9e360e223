// How writers claim slots of a locked ring (ring_writer.h, ThreadClaim): one at a time when
// alone, in batches while they contend, and what a batch may and may not cost a reader of
// write_index (the hang watch) or the records themselves.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "ring_test_util.h"

using ascend_trace_test::TestRing;
using ascend_trace_test::Text;

namespace {

// Two threads that write by turns, A then B, each on its own thread: each one's claims are
// its own thread's, as two application threads sharing an object. After `steps` turns each,
// A runs a_after and B runs b_after, each on its own thread still (they sync as they need).
void Turns(int steps, const std::function<void(int)>& a, const std::function<void(int)>& b,
           const std::function<void()>& a_after = [] {}, const std::function<void()>& b_after = [] {}) {
  std::atomic<int> turn{0};  // 2i: A's i-th turn, 2i + 1: B's
  auto side = [&](int parity, const std::function<void(int)>& fn, const std::function<void()>& after) {
    for (int i = 0; i < steps; ++i) {
      while (turn.load(std::memory_order_acquire) != 2 * i + parity) std::this_thread::yield();
      fn(i);
      turn.store(2 * i + parity + 1, std::memory_order_release);
    }
    after();
  };
  std::thread ta(side, 0, a, a_after);
  std::thread tb(side, 1, b, b_after);
  ta.join();
  tb.join();
}

// Claims that never expire for the scope's life: the turns below take as long as the
// machine makes them, and a claim given up for its age would change what they show.
class ClaimsKept {
 public:
  ClaimsKept() { ascend_trace::g_claim_lifetime.store(UINT64_MAX); }
  ~ClaimsKept() { ascend_trace::g_claim_lifetime.store(ascend_trace::kClaimLifetime); }
};

void WaitFor(const std::atomic<int>& flag, int value) {
  while (flag.load() != value) std::this_thread::yield();
}

std::string Rec(char who, int i) { return std::string(1, who) + std::to_string(i); }

TraStatus Put(TestRing& ring, const std::string& text) {
  return ring.Write(text.data(), static_cast<uint32_t>(text.size()));
}

}  // namespace

TEST_CASE("ring claims: a lone writer claims one slot a record, so write_index counts its records") {
  TestRing ring(64, 112);
  std::thread([&] {
    for (int i = 0; i < 1000; ++i) REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS);
  }).join();
  CHECK(ring.write_index() == 1000);
  const auto copy = ring.Copy();
  const auto snap = atraced::proto::ReadRingSnapshot(copy);
  REQUIRE(snap.records.size() == 64);
  for (size_t i = 0; i < snap.records.size(); ++i) {
    CHECK(snap.records[i].index == 936 + i);
    CHECK(Text(snap.records[i].data) == Rec('a', static_cast<int>(936 + i)));
  }
}

TEST_CASE("ring claims: writers that take turns go over to batches, and a writer left alone goes back") {
  const ClaimsKept kept;
  TestRing ring(256, 112);
  // 20 turns each: from the second, each finds the other claimed since its last claim.
  Turns(20, [&](int i) { REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS); },
             [&](int i) { REQUIRE(Put(ring, Rec('b', i)) == TRACE_SUCCESS); });
  const uint64_t after_turns = ring.write_index();
  INFO("write_index after 40 records by turns: " << after_turns);
  CHECK(after_turns > 40);  // batches claimed ahead of the records
  CHECK(after_turns <= 40 + 2 * 7);
  // A alone: it uses up its batch, claims one more batch that nobody shares, then one slot a
  // record; write_index then moves with each record.
  uint64_t alone_from = 0;
  std::thread([&] {
    for (int i = 20; i < 60; ++i) REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS);
    alone_from = ring.write_index();
    for (int i = 60; i < 70; ++i) REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS);
  }).join();
  // The thread above is a new one: its claims start afresh, one slot a record.
  CHECK(ring.write_index() == alone_from + 10);

  const auto copy = ring.Copy();
  const auto snap = atraced::proto::ReadRingSnapshot(copy);
  CHECK(snap.torn == 0);
  CHECK(snap.invalid == 0);
  CHECK(snap.dropped == 0);
  // Every record is there once, each writer's in its own order (the reader sorts by stamp).
  int next_a = 0, next_b = 0;
  for (const auto& r : snap.records) {
    const std::string t = Text(r.data);
    if (t[0] == 'a') CHECK(t == Rec('a', next_a++));
    if (t[0] == 'b') CHECK(t == Rec('b', next_b++));
  }
  CHECK(next_a == 70);
  CHECK(next_b == 20);
}

TEST_CASE("ring claims: the same thread going back to one slot a record once a batch went by unshared") {
  const ClaimsKept kept;
  TestRing ring(256, 112);
  std::atomic<int> b_done{0};
  uint64_t before_alone = 0, after_alone = 0;
  // A and B take turns until both claim in batches; then B stops and A, on the same thread,
  // writes alone: within two batches it claims one slot a record again.
  Turns(
      10, [&](int i) { REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS); },
      [&](int i) { REQUIRE(Put(ring, Rec('b', i)) == TRACE_SUCCESS); },
      [&] {
        WaitFor(b_done, 1);
        for (int i = 10; i < 40; ++i) REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS);
        before_alone = ring.write_index();
        for (int i = 40; i < 50; ++i) REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS);
        after_alone = ring.write_index();
      },
      [&] { b_done.store(1); });
  CHECK(after_alone == before_alone + 10);
}

TEST_CASE("ring claims: a batch that other writers lapped is given up, and the record still lands") {
  const ClaimsKept kept;
  TestRing ring(64, 112);
  std::atomic<int> lapped{0};
  TraStatus late = TRACE_FAILURE;
  // A and B take turns until A claims in batches and holds unused slots; B then writes three
  // laps of the ring; A's next record must not be dropped for the slot B lapped.
  Turns(
      6, [&](int i) { REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS); },
      [&](int i) { REQUIRE(Put(ring, Rec('b', i)) == TRACE_SUCCESS); },
      [&] {
        WaitFor(lapped, 1);
        late = Put(ring, "a-late");
      },
      [&] {
        for (int i = 0; i < 3 * 64; ++i) REQUIRE(Put(ring, Rec('c', i)) == TRACE_SUCCESS);
        lapped.store(1);
      });
  CHECK(late == TRACE_SUCCESS);
  const auto copy = ring.Copy();
  const auto snap = atraced::proto::ReadRingSnapshot(copy);
  CHECK(snap.dropped == 0);
  REQUIRE(!snap.records.empty());
  // The newest record is A's late one, at an index past everything B wrote.
  CHECK(Text(snap.records.back().data) == "a-late");
  for (const auto& r : snap.records) {
    if (Text(r.data)[0] == 'c') CHECK(r.index < snap.records.back().index);
  }
}

TEST_CASE("ring claims: an unused batch is given up after its lifetime, so write_index moves with the next record") {
  TestRing ring(256, 112);  // stamped with CLOCK_MONOTONIC: the lifetime is 2^20 ns
  uint64_t before = 0, after = 0;
  Turns(
      6, [&](int i) { REQUIRE(Put(ring, Rec('a', i)) == TRACE_SUCCESS); },
      [&](int i) { REQUIRE(Put(ring, Rec('b', i)) == TRACE_SUCCESS); },
      [&] {
        // A holds unused slots of a batch now. Past the lifetime, its next record claims anew.
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        before = ring.write_index();
        REQUIRE(Put(ring, "a-after-pause") == TRACE_SUCCESS);
        after = ring.write_index();
      });
  CHECK(after > before);
  const auto copy = ring.Copy();
  const auto snap = atraced::proto::ReadRingSnapshot(copy);
  REQUIRE(!snap.records.empty());
  CHECK(Text(snap.records.back().data) == "a-after-pause");
  CHECK(snap.records.back().index >= before);
}

TEST_CASE("ring claims: a noLock ring claims one slot a record") {
  TestRing nolock(64, 112, /*no_lock=*/true);
  for (int i = 0; i < 100; ++i) REQUIRE(Put(nolock, Rec('n', i)) == TRACE_SUCCESS);
  CHECK(nolock.write_index() == 100);
}
