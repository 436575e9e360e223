#include <catch2/catch.hpp>

#include <vector>

#include "atraced/admission/uid_share.h"

using namespace atraced;

TEST_CASE("a uid share holds one uid to its percent of the pool and the pool to its limit", "[shares]") {
  UidShare rings("rings", "ring", "uid-ring-share", 8, 25);
  CHECK(rings.per_uid() == 2);
  UidShare::Verdict v;
  std::vector<UidCharge> mine;
  for (int i = 0; i < 2; ++i) {
    mine.push_back(UidCharge::Take(&rings, 1000, 1, &v));
    CHECK(v == UidShare::Verdict::kOk);
  }
  UidCharge over = UidCharge::Take(&rings, 1000, 1, &v);
  CHECK(v == UidShare::Verdict::kUidShare);
  CHECK(over.amount() == 0);
  CHECK(rings.held(1000) == 2);
  CHECK(rings.Describe(v, 1000, 1) ==
        "uid 1000 holds 2 of its share of rings (2 of 8, uid-ring-share 25%); one more ring would pass it");
  // Root has a share like everyone else.
  std::vector<UidCharge> others;
  for (uint32_t uid : {0u, 0u, 1u, 1u, 2u, 2u}) {
    others.push_back(UidCharge::Take(&rings, uid, 1, &v));
    CHECK(v == UidShare::Verdict::kOk);
  }
  CHECK(UidCharge::Take(&rings, 0, 1, &v).amount() == 0);
  CHECK(v == UidShare::Verdict::kUidShare);
  CHECK(rings.total() == 8);
  UidCharge late = UidCharge::Take(&rings, 3, 1, &v);
  CHECK(v == UidShare::Verdict::kExhausted);
  CHECK(rings.Describe(v, 3, 1) == "the daemon holds 8 rings of its limit 8; one more ring would pass it");
  mine.pop_back();  // released by destruction
  CHECK(rings.held(1000) == 1);
  CHECK(rings.total() == 7);
  UidCharge again = UidCharge::Take(&rings, 3, 1, &v);
  CHECK(v == UidShare::Verdict::kOk);
}

TEST_CASE("a byte pool charges amounts, never overflows and refuses what cannot fit at all", "[shares]") {
  const uint64_t gib = 1ull << 30;
  UidShare memory("ring memory", "byte", "uid-ring-share", 4 * gib, 50);
  CHECK(memory.per_uid() == 2 * gib);
  UidShare::Verdict v;
  UidCharge a = UidCharge::Take(&memory, 7, gib, &v);
  CHECK(v == UidShare::Verdict::kOk);
  CHECK(UidCharge::Take(&memory, 7, UINT64_MAX, &v).amount() == 0);  // no wrap-around
  CHECK(v == UidShare::Verdict::kUidShare);
  UidCharge b = UidCharge::Take(&memory, 7, gib, &v);
  CHECK(v == UidShare::Verdict::kOk);
  CHECK(UidCharge::Take(&memory, 7, 1, &v).amount() == 0);
  CHECK(memory.Describe(v, 7, 1).find("one more byte") != std::string::npos);
  CHECK(memory.by_uid().at(7) == 2 * gib);
  UidCharge moved = std::move(a);
  CHECK(memory.held(7) == 2 * gib);  // a move does not release
  moved.Reset();
  CHECK(memory.held(7) == gib);
  b.Reset();
  CHECK(memory.by_uid().empty());
  CHECK(memory.total() == 0);
}

TEST_CASE("a uid share is never zero and a new limit applies to new charges only", "[shares]") {
  UidShare tiny("connections", "connection", "uid-connection-share", 3, 1);
  CHECK(tiny.per_uid() == 1);
  UidShare::Verdict v;
  UidCharge one = UidCharge::Take(&tiny, 5, 1, &v);
  CHECK(v == UidShare::Verdict::kOk);
  UidShare pool("connections", "connection", "uid-connection-share", 100, 10);
  std::vector<UidCharge> held;
  for (int i = 0; i < 10; ++i) held.push_back(UidCharge::Take(&pool, 5, 1, &v));
  pool.SetLimit(20, 10);  // per uid 2 now: the 10 held stay held
  CHECK(pool.held(5) == 10);
  CHECK(UidCharge::Take(&pool, 5, 1, &v).amount() == 0);
  CHECK(v == UidShare::Verdict::kUidShare);
  held.clear();
  CHECK(pool.total() == 0);
  CHECK(UidCharge::Take(&pool, 5, 1, &v).amount() == 1);
}

TEST_CASE("a missing pool charges nothing and refuses nothing", "[shares]") {
  UidShare::Verdict v = UidShare::Verdict::kExhausted;
  UidCharge c = UidCharge::Take(nullptr, 1, 1000, &v);
  CHECK(v == UidShare::Verdict::kOk);
  CHECK(c.amount() == 0);
}
