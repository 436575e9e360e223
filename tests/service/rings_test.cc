// Rings: registration and its bounds, DUMP.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/mman.h>

#include <ctime>

#include "atraced/store/trace_time.h"
#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("rings need the MEMFD feature, a descriptor, and stay within their bounds", "[service][rings]") {
  ServiceLimits o;
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
    f.service->ApplyLimits(Limits(RateLimit{std::chrono::seconds(60), 1}, 0));
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    const auto channel = CrashChannel(f, 100);
    CHECK(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
    CHECK(f.Call(channel, ATR_OP_DUMP, dump).status == ATR_EAGAIN);
    CHECK(KindDirs(f, "schedule").size() == 1);
  }
}

TEST_CASE("the service hands the rings it lets go to its unmapper", "[service][rings]") {
  // The daemon's BackgroundUnmapper takes a ring's TLB shootdown off the event loop
  // (atraced/rings/unmapper.h); every way a ring is let go must reach it.
  struct Counting final : Unmapper {
    void Unmap(const void* addr, size_t size) override {
      ++handed;
      bytes += size;
      ::munmap(const_cast<void*>(addr), size);
    }
    int handed = 0;
    size_t bytes = 0;
  } unmapper;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.ring_unmapper = &unmapper;
  ServiceFixture f(o, deps);
  RingClient first(f, 100);
  first.Register(1, EmptyRing());
  first.Register(2, EmptyRing());
  first.Register(3, EmptyRing(), /*exit_save=*/true);
  REQUIRE(f.Call(first.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{2})).status == 0);
  CHECK(unmapper.handed == 1);  // a released ring is let go at once
  REQUIRE(f.Call(first.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{3})).status == 0);
  CHECK(unmapper.handed == 1);  // unless it is exitSave: kept for the exit save
  REQUIRE(f.Call(first.id, ATR_OP_GOODBYE, {}).status == 0);
  CHECK(unmapper.handed == 3);
  CHECK(unmapper.bytes == 3 * ATR_RING_BYTES(4, 64));
  RingClient second(f, 101);
  second.Register(1, EmptyRing());
  f.processes.ended[101] = ProcessEnd{true, SIGKILL};
  f.service->Disconnect(second.id);  // died without GOODBYE: its ring goes once its death is written
  CHECK(unmapper.handed == 4);
}

// ---- Which of several same-named exitSave objects the exit save writes ------------------

TEST_CASE("GOODBYE writes, of same-named exitSave objects, a live one over destroyed ones, else the last destroyed",
          "[service][rings][exit]") {
  // HCCL names every communicator HCCL_<tid>_<devLogicId>: a destroyed sub-group must not
  // stand in for the live world communicator of the same name (CANN's exit list).
  ServiceFixture f;
  RingClient rings(f, 100);
  auto release = [&](uint32_t id) {
    REQUIRE(f.Call(rings.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{id})).status == 0);
  };
  rings.Register(1, RingWith({"world, live"}), /*exit_save=*/true, "HCCL_7_0");
  rings.Register(2, RingWith({"sub-group, destroyed"}), /*exit_save=*/true, "HCCL_7_0");
  release(2);  // the newest of that name, but destroyed: the live one wins
  rings.Register(3, RingWith({"first destroyed"}), /*exit_save=*/true, "solo");
  rings.Register(4, RingWith({"second destroyed"}), /*exit_save=*/true, "solo");
  release(4);
  release(3);  // destroyed last, though created first: it wins
  rings.Register(5, RingWith({"not exitSave"}), /*exit_save=*/false, "other");
  REQUIRE(f.Call(rings.id, ATR_OP_GOODBYE, {}).status == 0);
  const auto dirs = KindDirs(f, "exit");
  REQUIRE(dirs.size() == 1);
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_HCCL_7_0.txt", "schedule_tracer_solo.txt"});
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_HCCL_7_0.txt").find("world, live\n") != std::string::npos);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_solo.txt").find("first destroyed\n") != std::string::npos);
}

TEST_CASE("a death saves, per name, the live ring over a destroyed exitSave one, else the last destroyed",
          "[service][rings][exit]") {
  ServiceFixture f;
  RingClient rings(f, 100);
  auto release = [&](uint32_t id) {
    REQUIRE(f.Call(rings.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{id})).status == 0);
  };
  rings.Register(1, RingWith({"made first, destroyed last"}), /*exit_save=*/true, "solo");
  rings.Register(2, RingWith({"destroyed"}), /*exit_save=*/true, "comm");
  rings.Register(3, RingWith({"live"}), /*exit_save=*/false, "comm");
  rings.Register(4, RingWith({"made last, destroyed first"}), /*exit_save=*/true, "solo");
  release(4);
  release(2);
  release(1);
  f.processes.ended[100] = ProcessEnd{true, SIGKILL};
  f.service->Disconnect(rings.id);  // no GOODBYE: a death
  const auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_comm.txt").find("live\n") != std::string::npos);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_solo.txt").find("made first, destroyed last\n") != std::string::npos);
}

// ---- Directory names in the process's local time ------------------------------------------

namespace {

// The daemon's own UTC offset now, and one at least three hours from it.
int32_t OtherOffset() {
  const time_t now = ::time(nullptr);
  struct tm local {};
  ::localtime_r(&now, &local);
  const auto mine = static_cast<int32_t>(local.tm_gmtoff);
  return mine <= 0 ? mine + 3 * 3600 + 1800 : mine - 3 * 3600 - 1800;
}

std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }
std::string Parent(const std::string& path) { return Base(path.substr(0, path.rfind('/'))); }

}  // namespace

TEST_CASE("a ring process's directories are named in its own local time, as CANN names them",
          "[service][rings][time]") {
  ServiceFixture f;
  const auto connected = f.clock.Now();
  RingClient rings(f, 100);
  rings.utc_offset_s = OtherOffset();  // a container in another time zone than the host
  f.clock.Advance(std::chrono::milliseconds(3));
  rings.Register(1, RingWith({"r"}));
  f.clock.Advance(std::chrono::milliseconds(4));
  const auto reported = f.clock.Now();
  proto::RingReport report;
  report.wait = true;
  report.object_ids = {1};
  REQUIRE(f.Call(rings.id, ATR_OP_RING_REPORT, Payload(report)).status == 0);
  const auto dirs = KindDirs(f, "schedule");
  REQUIRE(dirs.size() == 1);
  CHECK(Parent(dirs[0]) == "trace_100_100_" + FormatTraceTime(connected, rings.utc_offset_s));
  CHECK(Base(dirs[0]) == "schedule_event_100_" + FormatTraceTime(reported, rings.utc_offset_s));
  CHECK(FormatTraceTime(connected, rings.utc_offset_s) != FormatTraceTime(connected));  // not the daemon's
  // A second connection of the process (the crash channel) joins the same directory.
  const auto channel = CrashChannel(f, 100);
  f.clock.Advance(std::chrono::milliseconds(2));
  REQUIRE(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 100, 0})).status == 0);
  const auto crash = KindDirs(f, "stackcore");
  REQUIRE(crash.size() == 1);
  CHECK(Parent(crash[0]) == Parent(dirs[0]));
  CHECK(Base(crash[0]) == "stackcore_event_100_" + FormatTraceTime(f.clock.Now(), rings.utc_offset_s));
}

TEST_CASE("a process directory made before the offset is known keeps its name", "[service][rings][time]") {
  ServiceFixture f;
  const auto connected = f.clock.Now();
  auto c = f.Client(100);  // a libatrace_client event first: the daemon's local time
  proto::EventBegin b;
  b.event_id = 1;
  b.kind = ATR_EVENT_SCHEDULE;
  REQUIRE(f.Call(c, ATR_OP_EVENT_BEGIN, Payload(b)).status == 0);
  RingClient rings(f, 100);
  rings.utc_offset_s = OtherOffset();
  rings.Register(1, RingWith({"r"}));
  proto::RingReport report;
  report.wait = true;
  report.object_ids = {1};
  REQUIRE(f.Call(rings.id, ATR_OP_RING_REPORT, Payload(report)).status == 0);
  const std::string expected = "trace_100_100_" + FormatTraceTime(connected);
  for (const auto& dir : KindDirs(f, "schedule")) CHECK(Parent(dir) == expected);
  CHECK(KindDirs(f, "schedule").size() == 2);
}
