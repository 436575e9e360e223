// Rings: registration and its bounds, DUMP.
#include <catch2/catch.hpp>

#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("rings need the MEMFD feature, a descriptor, and stay within their bounds", "[service][rings]") {
  ServiceOptions o;
  o.max_rings_per_client = 2;
  ServiceFixture f(o);
  auto plain = f.Client(100);  // HELLO without ATR_FEATURE_MEMFD
  CHECK(f.Call(plain, ATR_OP_RING_REGISTER, RegisterPayload(1)).status == ATR_ENOTSUP);

  auto id = f.service->Connect({200, 1000, 1000});
  proto::Hello h;
  h.features = ATR_FEATURE_MEMFD;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  auto call_with = [&](uint16_t op, const std::vector<uint8_t>& payload, UniqueFd fd, bool* close_after) {
    ReplyBatch batch;
    proto::FrameHeader fh{static_cast<uint32_t>(payload.size()), op, 0, ++f.request_id};
    f.service->Handle(id, fh, payload, batch, std::move(fd));
    *close_after = batch.close_after;
    return ServiceFixture::Decode(batch).at(0);
  };
  bool close_after = false;
  CHECK(f.Call(id, ATR_OP_RING_REGISTER, RegisterPayload(1)).status == ATR_EBADF);  // no memfd
  CHECK(call_with(ATR_OP_RING_REGISTER, RegisterPayload(1), EmptyRing(), &close_after).status == 0);
  CHECK(call_with(ATR_OP_RING_REGISTER, RegisterPayload(1), EmptyRing(), &close_after).status == ATR_EEXIST);
  CHECK(call_with(ATR_OP_RING_REGISTER, RegisterPayload(2), EmptyRing(), &close_after).status == 0);
  auto over = call_with(ATR_OP_RING_REGISTER, RegisterPayload(3), EmptyRing(), &close_after);
  CHECK(over.status == ATR_EBUSY);
  CHECK(f.service->rings() == 2);
  CHECK(f.service->counters().rings_refused == 3);  // no memfd, a repeated id, over the bound
  CHECK_FALSE(close_after);
  // An empty ring is saved as nothing: no event directory is made for it.
  proto::RingReport report;
  report.wait = true;
  report.object_ids = {1, 2};
  CHECK(f.Call(id, ATR_OP_RING_REPORT, Payload(report)).status == 0);
  CHECK(f.store_->count(AgeClass::kHost) == 0);
  report.object_ids = {9};
  CHECK(f.Call(id, ATR_OP_RING_REPORT, Payload(report)).status == ATR_ENOENT);
  // A descriptor on a frame that takes none: refused, and the connection is to be closed.
  auto stray = call_with(ATR_OP_STATUS, {}, EmptyRing(), &close_after);
  CHECK(stray.status == ATR_EBADMSG);
  CHECK(close_after);
  // GOODBYE drops the rings; so does a disconnect.
  CHECK(f.Call(id, ATR_OP_GOODBYE, {}).status == 0);
  CHECK(f.service->rings() == 0);
  CHECK(f.Call(id, ATR_OP_GOODBYE, {}).status == ATR_EPROTO);
}

// ---- Death without GOODBYE ------------------------------------------------------------

TEST_CASE("DUMP saves the process's unreleased rings as a schedule dir and keeps them", "[service][rings][dump]") {
  ServiceFixture f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the signal"}));
  rings.Register(2, RingWith({"destroyed"}), /*exit_save=*/true);
  rings.Register(3, EmptyRing());
  REQUIRE(f.Call(rings.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{2})).status == 0);
  const auto channel = CrashChannel(f, 100);
  const auto dump = Payload(proto::Dump{35, 101});

  REQUIRE(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
  auto dirs = KindDirs(f, "schedule");
  REQUIRE(dirs.size() == 1);
  // RING_SAVE_ALL's files: the live rings with a record; the destroyed exitSave one waits for exit.
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_obj1.txt"});
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("before the signal\n") != std::string::npos);
  CHECK(f.log.Has(LogLevel::kInfo, "caught dump signal 35"));
  CHECK(KindDirs(f, "stackcore").empty());
  // Not a crash: it may come again, the records are still there, and a later CRASH is not refused.
  f.clock.Advance(std::chrono::milliseconds(2));
  REQUIRE(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
  CHECK(KindDirs(f, "schedule").size() == 2);
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 100, 0})).status == 0);
}

TEST_CASE("DUMP without the feature or without rings is refused with a reason", "[service][rings][dump]") {
  ServiceFixture f;
  const auto dump = Payload(proto::Dump{35, 100});
  SECTION("MEMFD alone is not CRASH") {
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    const auto r = f.Call(c.id, ATR_OP_DUMP, dump);
    CHECK(r.status == ATR_ENOTSUP);
    CHECK(r.message.find("DUMP: ATR_FEATURE_CRASH") != std::string::npos);
  }
  SECTION("no connection of the process holds an unreleased ring") {
    RingClient other(f, 200);
    other.Register(1, RingWith({"theirs"}));
    const auto r = f.Call(CrashChannel(f, 100), ATR_OP_DUMP, dump);
    CHECK(r.status == ATR_ENOENT);
    CHECK(r.message.find("unreleased ring") != std::string::npos);
    CHECK(KindDirs(f, "schedule").empty());
  }
  SECTION("a malformed DUMP is refused by the decoder") {
    CHECK(f.Call(CrashChannel(f, 100), ATR_OP_DUMP, Payload(proto::Dump{35, 0})).status == ATR_EINVAL);
  }
  SECTION("signals sent faster than the schedule rate limit are refused, like any save") {
    f.service->SetClientLimits(RateLimit{std::chrono::seconds(60), 1}, 0);
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    const auto channel = CrashChannel(f, 100);
    CHECK(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
    CHECK(f.Call(channel, ATR_OP_DUMP, dump).status == ATR_EAGAIN);
    CHECK(KindDirs(f, "schedule").size() == 1);
  }
}
