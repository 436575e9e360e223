// A process is pinned by pid, start time and credentials at connect (issue 20): a pid that
// another process holds now, a set-id exec or a non-dumpable process is never inspected nor
// read, and a reused pid gets its own record (trace_ dir and limits).
#include <catch2/catch.hpp>

#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

ProcessCredentials Creds(uint32_t ruid, uint32_t euid, uint32_t rgid = 1000, uint32_t egid = 1000, bool dumpable = true) {
  return ProcessCredentials{{ruid, euid, euid, euid}, {rgid, egid, egid, egid}, dumpable};
}

// RING_REGISTER of `fd` as object `object_id` on any 1.1 connection.
void RegisterRing(ServiceFixture& f, TraceService::ClientId id, uint32_t object_id, UniqueFd fd) {
  ReplyBatch batch;
  auto payload = RegisterPayload(object_id);
  proto::FrameHeader fh{static_cast<uint32_t>(payload.size()), ATR_OP_RING_REGISTER, 0, ++f.request_id};
  f.service->Handle(id, fh, payload, batch, std::move(fd));
  REQUIRE(ServiceFixture::Decode(batch).at(0).status == 0);
}

}  // namespace

TEST_CASE("CRASH of a process that is no longer the one that connected is refused and writes nothing",
          "[service][crash][identity]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  ServiceFixture f(o, deps);
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"r"}));
  const auto channel = CrashChannel(f, 100);
  const auto dumper = CrashChannel(f, 100, ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH | ATR_FEATURE_STACK_DUMP);
  std::string expected;
  SECTION("it exec'd a setuid-root program: effective uid 0") {
    f.processes.processes[100].creds = Creds(1000, 0);
    expected = "runs with uids 1000/0/0/0 and gids 1000/1000/1000/1000, not the uid 1000 and gid 1000";
  }
  SECTION("a setgid program: one gid differs") {
    f.processes.processes[100].creds = Creds(1000, 1000, 1000, 50);
    expected = "a set-id program is never inspected";
  }
  SECTION("its pid is another process's now (start time changed)") {
    f.processes.processes[100].start_ticks = 9999;
    expected = "is another process now";
  }
  SECTION("it is not dumpable") {
    f.processes.processes[100].creds = Creds(1000, 1000, 1000, 1000, false);
    expected = "is not dumpable";
  }
  SECTION("it is gone") {
    f.processes.processes.erase(100);
    expected = "no longer exists";
  }
  const auto r = f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 100, 0}));
  INFO(r.message);
  CHECK(r.status == ATR_EPERM);
  CHECK(r.message.find(expected) != std::string::npos);
  CHECK(inspector.asked.empty());  // never looked at
  CHECK(KindDirs(f, "stackcore").empty());
  CHECK(f.service->counters().crashes_recorded == 0);
  CHECK(f.log.Has(LogLevel::kNotice, "refused CRASH from pid 100"));
  // CANN's on-demand stack dump, asked on a connection made before the change, looks from
  // outside the same way: refused the same way.
  const auto d = f.Call(dumper, ATR_OP_STACK_DUMP, Payload(proto::StackDump{35, 100, ATR_STACK_DUMP_ALL_THREADS}));
  INFO(d.message);
  CHECK(d.status == ATR_EPERM);
  CHECK(inspector.asked.empty());
  CHECK(KindDirs(f, "stackcore").empty());
  CHECK(f.service->counters().stack_dumps_written == 0);
}

TEST_CASE("a process's CRASH is recorded once, whichever of its ring-holding connections asks",
          "[service][crash][identity]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  ServiceFixture f(o, deps);
  // Three connections of one process, each holding a ring and each allowed to send CRASH.
  std::vector<TraceService::ClientId> ids;
  for (uint32_t i = 0; i < 3; ++i) {
    ids.push_back(CrashChannel(f, 100));
    RegisterRing(f, ids.back(), 1, RingWith({"ring of connection " + std::to_string(i)}));
  }
  const std::vector<uint8_t> crash = Payload(proto::Crash{SIGSEGV, 1, 100, 0});
  CHECK(f.Call(ids[0], ATR_OP_CRASH, crash).status == 0);
  CHECK(f.Call(ids[1], ATR_OP_CRASH, crash).status == ATR_EEXIST);
  CHECK(f.Call(ids[2], ATR_OP_CRASH, crash).status == ATR_EEXIST);
  CHECK(inspector.asked.size() == 1);
  CHECK(KindDirs(f, "stackcore").size() == 1);
  // Its death afterwards writes no second report through any of its connections.
  f.processes.ended[100] = ProcessEnd{true, SIGSEGV};
  for (auto id : ids) f.service->Disconnect(id);
  CHECK(KindDirs(f, "stackcore").size() == 1);
  CHECK(f.service->counters().deaths_recorded == 0);
}

TEST_CASE("HELLO reads no command line or cgroup of a process that is not the one that connected",
          "[service][death][identity]") {
  ServiceFixture f;
  f.processes.cmdlines[100] = "passwd --secret-in-argv";
  f.processes.oom_at_hello[100] = OomCount{"/sys/fs/cgroup/victim.slice/memory.events", 0, ""};
  // Between connect and HELLO the connector exec'd a setuid-root program (or its pid was
  // reused: the same path, other facts).
  const auto id = f.service->Connect({100, 1000, 1000});
  f.processes.processes[100].creds = Creds(1000, 0);
  proto::Hello h;
  h.minor = 1;
  h.features = ATR_FEATURE_MEMFD;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  CHECK(f.log.Has(LogLevel::kNotice, "pid 100: not reading its command line and memory cgroup"));
  // Its rings still work; the death report carries nothing read of the other program.
  RegisterRing(f, id, 1, RingWith({"r"}));
  f.processes.ended[100] = ProcessEnd{true, SIGKILL};
  f.service->Disconnect(id);
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  const std::string report = ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back());
  INFO(report);
  CHECK(report.find("secret-in-argv") == std::string::npos);
  CHECK(report.find("victim.slice") == std::string::npos);
  CHECK(report.find("command line: (not readable)") != std::string::npos);
  CHECK(report.find("not read at HELLO: pid 100 runs with uids 1000/0/0/0") != std::string::npos);
}

TEST_CASE("a reused pid is another process: its own trace_ dir and its own rate-limit bucket",
          "[service][identity][rate]") {
  ServiceLimits o;
  o.rate_limit = RateLimit{std::chrono::seconds(10), 2};
  ServiceFixture f(o);
  const auto old_owner = f.Client(100);  // still connected: a child holds the connection
  const std::string old_path = f.Begin(old_owner, 1);
  REQUIRE_FALSE(old_path.empty());
  REQUIRE_FALSE(f.Begin(old_owner, 2).empty());  // its bucket is now empty
  f.clock.Advance(std::chrono::seconds(2));
  f.processes.processes[100] = {100, 5555, "victim", {}, {}};  // pid 100 exited and was reused
  const auto new_owner = f.Client(100, 2000, 2000);
  const std::string new_path = f.Begin(new_owner, 1);
  REQUIRE_FALSE(new_path.empty());  // not the old owner's bucket
  CHECK(DirName(new_path) != DirName(old_path));  // not the old owner's trace_ dir
  int32_t status = 0;
  CHECK(f.Begin(old_owner, 3, ATR_SIDE_HOST, 0, &status).empty());
  CHECK(status == ATR_EAGAIN);  // the old owner's bucket is its own
}
