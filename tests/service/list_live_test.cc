// LIST_LIVE on the service: its feature, its decoding, and LIST's rule of who sees whom, with
// labelled connections of several uids (the rings' side is ascend_trace_tests' list_live_test).
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

TraceService::ClientId Connected(ServiceFixture& f, int32_t pid, uint32_t uid, uint64_t features) {
  auto id = f.Client(pid, uid, uid, /*hello=*/false);
  proto::Hello h;
  h.features = features;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  return id;
}

// A process of `uid` that sent its labels (and holds no ring).
void Labelled(ServiceFixture& f, int32_t pid, uint32_t uid, const proto::Labels& labels) {
  auto id = Connected(f, pid, uid, ATR_FEATURE_LABELS);
  REQUIRE(f.Call(id, ATR_OP_LABELS, Payload(labels)).status == 0);
}

std::vector<int32_t> Pids(ServiceFixture& f, TraceService::ClientId asker, const std::string& job = "") {
  auto r = f.Call(asker, ATR_OP_LIST_LIVE, Payload(proto::ListLive{job}));
  REQUIRE(r.status == 0);
  proto::ListLiveReply reply;
  REQUIRE(proto::Decode(r.body, &reply).ok());
  CHECK(reply.omitted == 0);
  std::vector<int32_t> pids;
  for (const auto& e : reply.entries) {
    pids.push_back(e.pid);
    CHECK(e.rings == 0);
    CHECK((e.flags & ATR_LIVE_WATCHED) != 0);  // labelled, the watch on (300 s)
  }
  return pids;
}

}  // namespace

TEST_CASE("LIST_LIVE: root sees every user's processes, a user its own only, and its own connection is not one",
          "[service][list_live][security]") {
  ServiceFixture f;
  Labelled(f, 100, 1000, {"J1", "0", "2"});
  Labelled(f, 200, 2000, {"J2", "0", "2"});
  auto root = Connected(f, 1, 0, ATR_FEATURE_LIST_LIVE);
  CHECK(Pids(f, root) == std::vector<int32_t>{100, 200});
  CHECK(Pids(f, root, "J2") == std::vector<int32_t>{200});
  auto user = Connected(f, 300, 1000, ATR_FEATURE_LIST_LIVE | ATR_FEATURE_LABELS);
  REQUIRE(f.Call(user, ATR_OP_LABELS, Payload(proto::Labels{"J1", "1", "2"})).status == 0);
  CHECK(Pids(f, user) == std::vector<int32_t>{100});  // not uid 2000's, not its own connection
  CHECK(Pids(f, user, "J2").empty());                  // naming the other's job finds nothing
}

TEST_CASE("LIST_LIVE needs its feature, and garbage is refused", "[service][list_live]") {
  ServiceFixture f;
  auto plain = Connected(f, 1, 0, ATR_FEATURE_FD_PASSING);
  CHECK(f.Call(plain, ATR_OP_LIST_LIVE, Payload(proto::ListLive{})).status == ATR_ENOTSUP);
  auto asking = Connected(f, 2, 0, ATR_FEATURE_LIST_LIVE);
  CHECK(f.Call(asking, ATR_OP_LIST_LIVE, {1, 0, 0, 0, 0, 0, 0, 0}).status == ATR_EBADMSG);
  CHECK(f.Call(asking, ATR_OP_LIST_LIVE, {0, 0, 0, 0, 0, 0, 0, 9}).status == ATR_EINVAL);
  CHECK(f.Call(asking, ATR_OP_LIST_LIVE, Payload(proto::ListLive{"J 1"})).status == ATR_EINVAL);
  CHECK(Pids(f, asking).empty());  // still served
}
