// The dispatcher: HELLO first and once, unknown opcodes, who a client is.
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("HELLO comes first, once, with a known major version", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100, 1000, 1000, /*hello=*/false);
  auto early = f.Call(id, ATR_OP_STATUS, {});
  CHECK(early.status == ATR_EPROTO);
  CHECK(early.message == "opcode: send HELLO first");
  proto::Hello h;
  h.features = ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD | (1ull << 40);
  auto ok = f.Call(id, ATR_OP_HELLO, Payload(h));
  REQUIRE(ok.status == 0);
  proto::HelloReply hr;
  REQUIRE(proto::Decode(ok.body, &hr).ok());
  CHECK(hr.features == (ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD));  // only what the daemon has
  CHECK(hr.minor == ATR_VERSION_MINOR_MEMFD);
  CHECK(hr.daemon_pid == static_cast<uint32_t>(::getpid()));  // for PR_SET_PTRACER
  CHECK(hr.peer_pid == 100);
  CHECK(hr.peer_uid == 1000);
  CHECK(hr.max_payload == ATR_MAX_PAYLOAD);
  CHECK(f.Call(id, ATR_OP_HELLO, Payload(h)).status == ATR_EPROTO);

  auto other = f.Client(200, 1000, 1000, false);
  proto::Hello v2;
  v2.major = 2;
  bool close_after = false;
  auto refused = f.Call(other, ATR_OP_HELLO, Payload(v2), nullptr, &close_after);
  CHECK(refused.status == ATR_EPROTONOSUPPORT);
  CHECK(close_after);
}

TEST_CASE("unknown opcodes and reply-flagged requests are refused, not fatal", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  CHECK(f.Call(id, 99, {}).status == ATR_ENOSYS);
  ReplyBatch batch;
  proto::FrameHeader h{0, ATR_OP_STATUS, ATR_FLAG_REPLY, 5};
  f.service->Handle(id, h, {}, batch);
  CHECK(ServiceFixture::Decode(batch)[0].status == ATR_EPROTO);
  CHECK(f.Call(id, ATR_OP_STATUS, {}).status == 0);
  CHECK(f.service->counters().requests_refused == 2);
}

TEST_CASE("identity comes from the peer credentials and /proc", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100, 1000);
  std::string path = f.Begin(id, 1);
  REQUIRE_FALSE(path.empty());
  auto proc = ParseProcessDirName(BaseName(DirName(path)));
  REQUIRE(proc);
  CHECK(proc->pid == 100);
  CHECK(proc->pgid == 100);
  auto ev = ParseEventDirName(BaseName(path));
  REQUIRE(ev);
  CHECK(ev->pid == 100);
  // host_pid equal to the peer's own pid is no claim at all.
  std::string own = f.Begin(id, 2, ATR_SIDE_HOST, 100);
  CHECK(DirName(own) == DirName(path));
}

TEST_CASE("a process dir keeps the time of the pid's first connection", "[service]") {
  ServiceFixture f;
  auto first = f.Client(100);
  std::string a = f.Begin(first, 1);
  f.clock.Advance(std::chrono::seconds(5));
  auto second = f.Client(100);  // same process, another connection
  std::string b = f.Begin(second, 1);
  CHECK(DirName(a) == DirName(b));
  // The pid is reused by a new process (new start time): a new process dir.
  f.service->Disconnect(first);
  f.service->Disconnect(second);
  f.processes.processes[100].start_ticks = 9999;
  f.clock.Advance(std::chrono::seconds(5));
  auto reused = f.Client(100);
  std::string c = f.Begin(reused, 1);
  CHECK(DirName(c) != DirName(a));
}
