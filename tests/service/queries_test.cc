// STATUS, LIST and VACUUM.
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("status, list and vacuum", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  for (uint32_t i = 1; i <= 3; ++i) f.Event(id, i);
  auto st = f.Call(id, ATR_OP_STATUS, {});
  proto::StatusReply s;
  REQUIRE(proto::Decode(st.body, &s).ok());
  CHECK(s.record_num == 10);
  CHECK(s.host_dirs == 3);
  CHECK(s.clients == 1);
  CHECK(s.events_begun == 3);
  CHECK(s.root == f.tmp.path());
  auto l = f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{0, 2}));
  proto::ListReply list;
  REQUIRE(proto::Decode(l.body, &list).ok());
  REQUIRE(list.entries.size() == 2);
  CHECK(list.entries[0].seq < list.entries[1].seq);
  CHECK(list.entries[0].pid == 100);
  CHECK(list.entries[0].uid == 1000);
  auto rest = f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{list.entries[1].seq, 100}));
  proto::ListReply tail;
  REQUIRE(proto::Decode(rest.body, &tail).ok());
  CHECK(tail.entries.size() == 1);
  auto v = f.Call(id, ATR_OP_VACUUM, Payload(proto::VacuumRequest{true}));
  proto::VacuumReply vr;
  REQUIRE(proto::Decode(v.body, &vr).ok());
  CHECK(vr.paths.empty());
}
