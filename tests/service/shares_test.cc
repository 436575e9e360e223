// Per-uid shares of the rings and their memory, and which silent connections are kept
// (issue 21): one user's processes cannot take another's room.
#include <catch2/catch.hpp>

#include "atraced/rings/held_ring.h"
#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("one uid holds at most its share of the rings and another uid still registers", "[service][rings][shares]") {
  ServiceLimits o;
  o.max_rings_total = 8;
  o.uid_ring_share = 25;  // two rings per uid
  ServiceFixture f(o);
  RingClient a1(f, 100, 2000);
  RingClient a2(f, 101, 2000);  // a second process of the same user shares the uid's share
  a1.Register(1, EmptyRing());
  a2.Register(1, EmptyRing());
  CHECK(a1.TryRegister(2, EmptyRing()) == ATR_EBUSY);
  CHECK(f.log.Has(LogLevel::kWarning, "uid 2000 holds 2 of its share of rings (2 of 8, uid-ring-share 25%)"));
  RingClient root(f, 200, 0);  // root has a share of its own, not more
  root.Register(1, EmptyRing());
  root.Register(2, EmptyRing());
  CHECK(root.TryRegister(3, EmptyRing()) == ATR_EBUSY);
  RingClient b(f, 300, 3000);
  b.Register(1, EmptyRing());
  CHECK(f.service->rings() == 5);
  // A released ring gives its room back to its uid.
  REQUIRE(f.Call(a1.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{1})).status == 0);
  CHECK(a1.TryRegister(2, EmptyRing()) == 0);
  // And so does a process that leaves.
  REQUIRE(f.Call(a2.id, ATR_OP_GOODBYE, {}).status == 0);
  CHECK(a1.TryRegister(3, EmptyRing()) == 0);
  CHECK(f.service->rings() == 5);
}

TEST_CASE("a ring costs its uid its whole mapping and struct entries against max-ring-memory", "[service][rings][shares]") {
  proto::RingRegister m;  // what RingClient registers
  m.msg_num = 4;
  m.msg_size = 64;
  m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
  m.name = "obj1";
  const uint64_t cost = HeldRing::MemoryCost(m);
  CHECK(cost > m.ring_bytes);  // the mapping and what describes it
  ServiceLimits o;
  // Room for three of the fixture's rings, but not four, in one uid's half.
  o.max_ring_memory = 2 * (3 * cost + cost / 2);
  o.uid_ring_share = 50;
  ServiceFixture f(o);
  RingClient a(f, 100, 2000);
  a.Register(1, EmptyRing());
  a.Register(2, EmptyRing());
  a.Register(3, EmptyRing());
  CHECK(a.TryRegister(4, EmptyRing()) == ATR_EBUSY);
  CHECK(f.log.Has(LogLevel::kWarning, "ring memory: uid 2000 holds"));
  RingClient b(f, 200, 3000);
  b.Register(1, EmptyRing());
  CHECK(f.service->rings() == 4);
}

TEST_CASE("a silent CRASH connection is kept only while its process holds rings", "[service][rings][idle]") {
  ServiceFixture f;
  // A connection that asked for CRASH and holds nothing: idle like any other.
  const auto lone = CrashChannel(f, 100);
  CHECK_FALSE(f.service->KeepWhileIdle(lone));
  // A process's ring connection and its crash connection: both kept.
  RingClient rings(f, 200);
  const auto channel = CrashChannel(f, 200);
  CHECK_FALSE(f.service->KeepWhileIdle(channel));
  rings.Register(1, EmptyRing());
  CHECK(f.service->KeepWhileIdle(rings.id));
  CHECK(f.service->KeepWhileIdle(channel));
  // Another process of the same user holds no ring: its crash connection is not kept by ours.
  CHECK_FALSE(f.service->KeepWhileIdle(lone));
  // Once the rings are gone (GOODBYE), neither is.
  REQUIRE(f.Call(rings.id, ATR_OP_GOODBYE, {}).status == 0);
  CHECK_FALSE(f.service->KeepWhileIdle(rings.id));
  CHECK_FALSE(f.service->KeepWhileIdle(channel));
  // A plain 1.0 connection never is.
  CHECK_FALSE(f.service->KeepWhileIdle(f.Client(300)));
}

TEST_CASE("STATUS reports each shared pool and its largest holders", "[service][shares][status]") {
  ServiceLimits o;
  TraceService::Dependencies deps;
  o.max_rings_total = 64;
  UidShare connections("connections", "connection", "uid-connection-share", 100, 25);
  UidShare::Verdict v;
  UidCharge held = UidCharge::Take(&connections, 2000, 3, &v);
  deps.connections = &connections;
  ServiceFixture f(o, deps);
  RingClient a(f, 100, 2000);
  a.Register(1, EmptyRing());
  a.Register(2, EmptyRing());
  RingClient b(f, 200, 3000);
  b.Register(1, EmptyRing());
  proto::StatusReply s;
  REQUIRE(proto::Decode(f.Call(a.id, ATR_OP_STATUS, {}).body, &s).ok());
  REQUIRE(s.shares.present);
  auto pool = [&s](uint8_t kind) -> const proto::StatusReply::Pool& {
    for (const auto& p : s.shares.pools) {
      if (p.pool == kind) return p;
    }
    FAIL("no pool " << int(kind));
    return s.shares.pools.front();
  };
  const auto& rings = pool(ATR_POOL_RINGS);
  CHECK(rings.limit == 64);
  CHECK(rings.per_uid == 16);
  CHECK(rings.held == 3);
  CHECK(rings.uids == std::vector<std::pair<uint32_t, uint64_t>>{{2000, 2}, {3000, 1}});  // largest first
  const auto& memory = pool(ATR_POOL_RING_MEMORY);
  CHECK(memory.uids.size() == 2);
  CHECK(memory.uids[0].first == 2000);
  CHECK(memory.held == memory.uids[0].second + memory.uids[1].second);
  const auto& conns = pool(ATR_POOL_CONNECTIONS);
  CHECK(conns.limit == 100);
  CHECK(conns.uids == std::vector<std::pair<uint32_t, uint64_t>>{{2000, 3}});
}
