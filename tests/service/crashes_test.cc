// CRASH: the report while the process waits, once; the unwind bound; the runner.
#include <catch2/catch.hpp>

#include "atraced/proto/stack_dump_file.h"
#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("CRASH writes the stackcore dir while the process waits, once", "[service][rings][crash]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  o.crash_budget = std::chrono::milliseconds(1234);
  ServiceFixture f(o, deps);
  f.processes.cmdlines[100] = "./app --run";
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the crash"}));
  const auto channel = CrashChannel(f, 100);
  CHECK((f.service->features(channel) & ATR_FEATURE_CRASH) != 0);

  const auto r = f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 101, 0x10}));
  REQUIRE(r.status == 0);
  CHECK(inspector.asked == std::vector<std::pair<pid_t, pid_t>>{{100, 101}});
  CHECK(inspector.last_budget == std::chrono::milliseconds(1234));
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  auto names = ListNames(dirs[0]);
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "schedule_tracer_obj1.txt");
  REQUIRE(names[1].rfind("stackcore_tracer_11_101_app_", 0) == 0);
  const std::string report = ReadFile(dirs[0] + "/" + names[1]);
  INFO(report);
  CHECK(report.find("signal: 11 (SIGSEGV)\n") != std::string::npos);
  CHECK(report.find("code: 1 (SEGV_MAPERR)\n") != std::string::npos);
  CHECK(report.find("fault address: 0x0000000000000010\n") != std::string::npos);
  CHECK(report.find("thread: 101\n") != std::string::npos);
  CHECK(report.find("command line: ./app --run\n") != std::string::npos);
  CHECK(report.find("crash_here+0x6") != std::string::npos);
  CHECK(report.find("101 worker") != std::string::npos);
  CHECK(report.find("r-xp app") != std::string::npos);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("before the crash\n") != std::string::npos);
  CHECK(f.service->counters().crashes_recorded == 1);

  // A second CRASH (another thread) is refused; the process's death writes no second dir.
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGABRT, -6, 100, 0})).status == ATR_EEXIST);
  f.processes.ended[100] = ProcessEnd{true, SIGSEGV};
  f.service->Disconnect(channel);
  f.service->Disconnect(rings.id);
  CHECK(KindDirs(f, "stackcore").size() == 1);
  CHECK(f.service->counters().deaths_recorded == 0);
  CHECK(f.service->departures() == 0);
  CHECK(f.service->rings() == 0);
}

TEST_CASE("CRASH: a new unwind deadline applies to the next crash (SIGHUP)", "[service][rings][crash]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  o.crash_budget = std::chrono::milliseconds(1234);
  ServiceFixture f(o, deps);
  auto crash = [&](int32_t pid) { return CrashWithRing(f, inspector, pid, "app"); };
  CHECK(crash(1001) == std::chrono::milliseconds(1234));
  f.service->ApplyLimits(Limits({}, 0, std::chrono::milliseconds(250)));
  CHECK(crash(1002) == std::chrono::milliseconds(250));
}

TEST_CASE("CRASH without the feature or without rings is refused with a reason", "[service][rings][crash]") {
  ServiceFixture f;  // no inspector: the report says so, the rings are still written
  const auto crash = Payload(proto::Crash{SIGSEGV, 1, 100, 0});
  SECTION("a 1.0 connection, and CRASH asked for without MEMFD, do not get it") {
    const auto plain = f.Client(100);
    const auto r = f.Call(plain, ATR_OP_CRASH, crash);
    CHECK(r.status == ATR_ENOTSUP);
    CHECK(r.message.find("ATR_FEATURE_CRASH") != std::string::npos);
    const auto no_memfd = CrashChannel(f, 100, ATR_FEATURE_CRASH);
    CHECK(f.service->features(no_memfd) == 0);
    CHECK(f.Call(no_memfd, ATR_OP_CRASH, crash).status == ATR_ENOTSUP);
  }
  SECTION("no connection of the process holds a ring") {
    RingClient other(f, 200);  // another process's rings do not count
    other.Register(1, RingWith({"theirs"}));
    const auto channel = CrashChannel(f, 100);
    const auto r = f.Call(channel, ATR_OP_CRASH, crash);
    CHECK(r.status == ATR_ENOENT);
    CHECK(r.message.find("holds a ring") != std::string::npos);
    CHECK(KindDirs(f, "stackcore").empty());
  }
  SECTION("the rings' own connection may send it; no inspector is said in the report") {
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    REQUIRE(f.Call(c.id, ATR_OP_CRASH, crash).status == ATR_ENOTSUP);  // MEMFD alone is not CRASH
    const auto channel = CrashChannel(f, 100);
    REQUIRE(f.Call(channel, ATR_OP_CRASH, crash).status == 0);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back()).find("no unwinder") != std::string::npos);
  }
  SECTION("a malformed CRASH is refused by the decoder") {
    const auto channel = CrashChannel(f, 100);
    CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{0, 1, 100, 0})).status == ATR_EINVAL);
  }
}

TEST_CASE("CRASH: one uid gets a bounded number of unwinds a minute", "[service][rings][crash]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  o.crash_unwinds_per_uid_per_minute = 2;
  ServiceFixture f(o, deps);
  auto crash = [&](int32_t pid) { return CrashWithRing(f, inspector, pid, "looper"); };
  CHECK(crash(1001) == std::chrono::milliseconds(2000));
  CHECK(crash(1002) == std::chrono::milliseconds(2000));
  CHECK(crash(1003) == std::chrono::milliseconds(0));  // the third within the minute: no unwind
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 3);
  bool said_why = false;
  for (const auto& dir : dirs) {
    said_why = said_why || ReadFile(dir + "/" + ListNames(dir).back()).find("crashes or dumps unwound in the last minute") !=
                               std::string::npos;
  }
  CHECK(said_why);
  f.clock.Advance(std::chrono::minutes(1));
  CHECK(crash(1004) == std::chrono::milliseconds(2000));  // a minute later, again
}

TEST_CASE("CRASH with a runner: others are served while it is inspected, then the reply comes", "[service][rings][crash]") {
  DeferredCrash t;
  ServiceFixture& f = *t.f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the crash"}));
  const auto channel = CrashChannel(f, 100);
  t.Crash(channel, 100);
  REQUIRE(t.runner.jobs.size() == 1);
  CHECK(t.inspector.asked.empty());  // not on the loop: the runner has not run it yet
  CHECK(KindDirs(f, "stackcore").empty());

  // Another client is served meanwhile.
  const auto other = f.Client(200);
  CHECK(f.Call(other, ATR_OP_STATUS, {}).status == 0);

  t.runner.FinishAll();
  CHECK(t.inspector.asked == std::vector<std::pair<pid_t, pid_t>>{{100, 101}});
  REQUIRE(t.delivered.size() == 1);
  const auto replies = ServiceFixture::Decode(t.delivered[0]);
  REQUIRE(replies.size() == 1);
  CHECK(replies[0].header.opcode == ATR_OP_CRASH);
  CHECK(replies[0].header.request_id == 77u);
  CHECK(replies[0].header.flags == ATR_FLAG_REPLY);
  CHECK(replies[0].status == 0);
  CHECK(replies[0].body.empty());  // a 1.1 channel that did not ask for the path: what it always got
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("before the crash\n") != std::string::npos);
  const std::string report = ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back());
  CHECK(report.find("crash_here+0x6") != std::string::npos);
  CHECK(f.service->counters().crashes_recorded == 1);
  // A second CRASH of the same process is refused at once, deferred or not.
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGABRT, -6, 100, 0})).status == ATR_EEXIST);
}

TEST_CASE("CRASH with ATR_FEATURE_CRASH_PATH: the reply names the report written", "[service][rings][crash]") {
  DeferredCrash t;
  ServiceFixture& f = *t.f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the crash"}));
  // Granted only with CRASH, as STACK_DUMP.
  const auto no_crash = CrashChannel(f, 100, ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH_PATH);
  CHECK((f.service->features(no_crash) & ATR_FEATURE_CRASH_PATH) == 0);
  const auto channel = CrashChannel(f, 100, ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH | ATR_FEATURE_CRASH_PATH);
  REQUIRE((f.service->features(channel) & ATR_FEATURE_CRASH_PATH) != 0);
  t.Crash(channel, 100);
  t.runner.FinishAll();
  REQUIRE(t.delivered.size() == 1);
  const auto replies = ServiceFixture::Decode(t.delivered[0]);
  REQUIRE(replies.size() == 1);
  REQUIRE(replies[0].status == 0);
  proto::CrashReply reply;
  REQUIRE(proto::Decode(replies[0].body, &reply).ok());
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  const std::string report = dirs[0] + "/stackcore_tracer_11_101_";
  CHECK(reply.report.rfind(report, 0) == 0);
  CHECK(reply.report.ends_with(".txt"));
  CHECK(ReadFile(reply.report).find("signal: 11 (SIGSEGV)") != std::string::npos);
}

TEST_CASE("CRASH with a runner: the rings outlive their connection until the report is written", "[service][rings][crash]") {
  DeferredCrash t;
  ServiceFixture& f = *t.f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"last words"}));
  const auto channel = CrashChannel(f, 100);
  t.Crash(channel, 100);

  SECTION("the rings' connection closes first") {
    f.processes.ended[100] = ProcessEnd{true, SIGSEGV};
    f.service->Disconnect(rings.id);
    CHECK(KindDirs(f, "stackcore").empty());
    t.runner.FinishAll();
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("last words\n") != std::string::npos);
    CHECK(t.delivered.size() == 1);
    CHECK(f.service->rings() == 0);  // released once written
    CHECK(f.service->counters().deaths_recorded == 0);  // and no second dir for the death
  }
  SECTION("the CRASH connection closes first: the report is written, no reply is sent") {
    f.service->Disconnect(channel);
    t.runner.FinishAll();
    CHECK(KindDirs(f, "stackcore").size() == 1);
    CHECK(t.delivered.empty());
  }
  SECTION("both close, then the service goes: nothing is left to call") {
    f.service->Disconnect(channel);
    f.service->Disconnect(rings.id);
    auto late = std::move(t.runner.jobs);
    t.f.reset();  // the daemon stops before the inspection returns; its `done` is never run
    CHECK(late.size() == 1);
  }
}

// ---- STACK_DUMP: CANN's on-demand stack dump (asys collect -r=stacktrace) -----------------

TEST_CASE("STACK_DUMP writes the .bin asys waits for and its text, with the live rings, and may come again",
          "[service][rings][crash][stackdump]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  ServiceFixture f(o, deps);
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"live record"}));
  rings.Register(2, RingWith({"destroyed"}), /*exit_save=*/true);
  REQUIRE(f.Call(rings.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{2})).status == 0);

  // Not granted without asking, nor without CRASH.
  const auto plain = CrashChannel(f, 100);
  CHECK((f.service->features(plain) & ATR_FEATURE_STACK_DUMP) == 0);
  CHECK(f.Call(plain, ATR_OP_STACK_DUMP, Payload(proto::StackDump{35, 101, 0})).status == ATR_ENOTSUP);
  const auto no_crash = CrashChannel(f, 100, ATR_FEATURE_MEMFD | ATR_FEATURE_STACK_DUMP);
  CHECK((f.service->features(no_crash) & ATR_FEATURE_STACK_DUMP) == 0);

  const auto channel = CrashChannel(f, 100, ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH | ATR_FEATURE_STACK_DUMP);
  REQUIRE((f.service->features(channel) & ATR_FEATURE_STACK_DUMP) != 0);
  REQUIRE(f.Call(channel, ATR_OP_STACK_DUMP, Payload(proto::StackDump{35, 101, ATR_STACK_DUMP_ALL_THREADS})).status ==
          0);
  CHECK(inspector.asked == std::vector<std::pair<pid_t, pid_t>>{{100, 101}});
  CHECK(inspector.every_thread == std::vector<bool>{true});
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  const auto names = ListNames(dirs[0]);
  REQUIRE(names.size() == 3);  // the live ring; the destroyed exitSave one waits for exit
  CHECK(names[0] == "schedule_tracer_obj1.txt");
  REQUIRE(names[1].rfind("stackcore_tracer_35_100_app_", 0) == 0);  // the pid, where asys looks
  CHECK(names[1].substr(names[1].size() - 4) == ".bin");
  CHECK(names[2] == names[1].substr(0, names[1].size() - 4) + ".txt");
  const std::string text = ReadFile(dirs[0] + "/" + names[2]);
  INFO(text);
  CHECK(text.find("asked for its stacks; it runs on\n") != std::string::npos);
  CHECK(text.find("queued with 0xAABB0003 (every thread)\n") != std::string::npos);
  CHECK(text.find("\n[process]\ncrash reason:35\ncrash pid:100\ncrash tid:101\n") != std::string::npos);
  CHECK(text.find("\n[stack]\nThread 1 (100, app)\n#0 0x") != std::string::npos);
  const std::string bin = ReadFile(dirs[0] + "/" + names[1]);
  std::string decoded, why;
  REQUIRE(proto::DecodeStackDumpFile(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bin.data()), bin.size()),
                                     &decoded, &why));
  CHECK(decoded == text);
  CHECK(f.service->counters().stack_dumps_written == 1);
  CHECK(f.service->counters().crashes_recorded == 0);

  // Again, one thread this time: another dir. Then a crash is still a crash, once.
  f.clock.Advance(std::chrono::milliseconds(2));
  REQUIRE(f.Call(channel, ATR_OP_STACK_DUMP, Payload(proto::StackDump{35, 100, 0})).status == 0);
  CHECK(inspector.every_thread == std::vector<bool>{true, false});
  CHECK(KindDirs(f, "stackcore").size() == 2);
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 100, 0})).status == 0);
  CHECK(f.Call(channel, ATR_OP_STACK_DUMP, Payload(proto::StackDump{35, 100, 0})).status == ATR_EEXIST);
}

TEST_CASE("STACK_DUMP of a process with no ring writes the stacks alone", "[service][crash][stackdump]") {
  FakeCrashInspector inspector;
  ServiceLimits o;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  ServiceFixture f(o, deps);
  const auto channel = CrashChannel(f, 100, ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH | ATR_FEATURE_STACK_DUMP);
  REQUIRE(f.Call(channel, ATR_OP_STACK_DUMP, Payload(proto::StackDump{35, 100, 0})).status == 0);
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  CHECK(ListNames(dirs[0]).size() == 2);  // .bin and .txt
  // CRASH still needs a ring holder: there is nothing to save.
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 100, 0})).status == ATR_ENOENT);
}
