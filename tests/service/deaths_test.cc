// Deaths without GOODBYE: the stackcore dir, the OOM line, what is not a death.
#include <catch2/catch.hpp>

#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("a ring client that dies without GOODBYE leaves a stackcore dir with its rings", "[service][rings][death]") {
  std::vector<std::chrono::milliseconds> scheduled;
  TraceService::Dependencies deps;
  deps.schedule_departures = [&](std::chrono::milliseconds in, std::function<void()>) { scheduled.push_back(in); };
  ServiceFixture f({}, deps);
  f.processes.cmdlines[100] = std::string("./app --flag\n", 13);
  RingClient c(f, 100);
  c.Register(1, RingWith({"one", "two"}));
  c.Register(2, RingWith({"exit record"}), /*exit_save=*/true);
  c.Register(3, EmptyRing());
  // Destroyed exitSave objects are saved too.
  REQUIRE(f.Call(c.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{2})).status == 0);

  SECTION("killed: the zombie's status names the signal") {
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    CHECK(f.service->departures() == 0);
    CHECK(f.service->rings() == 0);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(BaseName(dirs[0]).rfind("stackcore_event_100_", 0) == 0);
    auto names = ListNames(dirs[0]);
    REQUIRE(names.size() == 3);
    CHECK(names[0] == "schedule_tracer_obj1.txt");
    CHECK(names[1] == "schedule_tracer_obj2.txt");
    CHECK(names[2].rfind("stackcore_tracer_9_100_app_", 0) == 0);
    const std::string report = ReadFile(dirs[0] + "/" + names[2]);
    CHECK(report.find("how: killed by signal 9 (SIGKILL)") != std::string::npos);
    CHECK(report.find("command line: ./app --flag\\x0a") != std::string::npos);  // escaped, one line
    CHECK(report.find("rings: 3 (obj1, obj2 (destroyed, exitSave), obj3)") != std::string::npos);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("one\n") != std::string::npos);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("two\n") != std::string::npos);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj2.txt").find("exit record\n") != std::string::npos);
    CHECK(f.store_->count(AgeClass::kHost) == 1);  // a stackcore dir ages with the host class
    CHECK(f.service->counters().deaths_recorded == 1);
    CHECK(f.log.Has(LogLevel::kNotice, "ended without GOODBYE"));
    CHECK(scheduled.empty());
  }
  SECTION("_exit(3): no signal, the status is said") {
    f.processes.ended[100] = ProcessEnd{true, 3 << 8};
    f.service->Disconnect(c.id);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    auto names = ListNames(dirs[0]);
    REQUIRE(names.back().rfind("stackcore_tracer_0_100_app_", 0) == 0);
    CHECK(ReadFile(dirs[0] + "/" + names.back()).find("how: exited with status 3") != std::string::npos);
  }
  SECTION("reaped before the daemon looked: it says it cannot tell") {
    f.processes.processes.erase(100);
    f.service->Disconnect(c.id);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    auto names = ListNames(dirs[0]);
    CHECK(ReadFile(dirs[0] + "/" + names.back()).find("cannot tell") != std::string::npos);
  }
  SECTION("still exiting at the close: checked again until it has ended") {
    f.service->Disconnect(c.id);
    CHECK(f.service->departures() == 1);
    CHECK(f.service->rings() == 3);  // held meanwhile
    REQUIRE(scheduled.size() == 1);
    CHECK(scheduled[0] == std::chrono::milliseconds(5));
    f.service->CheckDepartures();
    CHECK(scheduled.back() == std::chrono::milliseconds(10));
    CHECK(KindDirs(f, "stackcore").empty());
    f.processes.ended[100] = ProcessEnd{true, SIGSEGV | 0x80};
    f.service->CheckDepartures();
    CHECK(f.service->departures() == 0);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    auto names = ListNames(dirs[0]);
    CHECK(names.back().rfind("stackcore_tracer_11_100_app_", 0) == 0);
    CHECK(ReadFile(dirs[0] + "/" + names.back()).find("killed by signal 11 (SIGSEGV), core dumped") != std::string::npos);
  }
  SECTION("still running after every check (an exec, a closed descriptor): rings dropped, nothing written") {
    f.service->Disconnect(c.id);
    for (int i = 0; i < 20 && f.service->departures() > 0; ++i) f.service->CheckDepartures();
    CHECK(f.service->departures() == 0);
    CHECK(f.service->rings() == 0);
    CHECK(KindDirs(f, "stackcore").empty());
    CHECK(f.log.Has(LogLevel::kInfo, "still running"));
    CHECK(scheduled.size() == 11);  // 12 checks; the last one schedules nothing more
  }
}

TEST_CASE("a SIGKILLed ring client's report says whether the OOM killer did it", "[service][rings][death][oom]") {
  ServiceFixture f;
  const std::string events = "/sys/fs/cgroup/app.slice/memory.events";
  f.processes.oom_at_hello[100] = OomCount{events, 3, ""};
  RingClient c(f, 100);
  c.Register(1, RingWith({"last words"}));
  auto report = [&f] {
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(ListNames(dirs[0]).front() == "schedule_tracer_obj1.txt");  // the rings are saved either way
    return ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back());
  };
  SECTION("the count went up: the OOM killer") {
    f.processes.oom_now[events] = OomCount{events, 4, ""};
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    const std::string text = report();
    INFO(text);
    CHECK(text.find("how: killed by signal 9 (SIGKILL)\noom: killed by the OOM killer (" + events +
                    " oom_kill went from 3 to 4)\n") != std::string::npos);
    CHECK(f.log.Has(LogLevel::kNotice, "; killed by the OOM killer"));
  }
  SECTION("the count stayed: not the OOM killer") {
    f.processes.oom_now[events] = OomCount{events, 3, ""};
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    CHECK(report().find("oom: not by the OOM killer (" + events + " oom_kill stayed at 3)\n") != std::string::npos);
  }
  SECTION("unreadable at death: it cannot tell, and says why") {
    f.processes.oom_now[events] = OomCount{events, std::nullopt, events + " is not readable"};
    f.processes.processes.erase(100);  // reaped: the status is unknown too
    f.service->Disconnect(c.id);
    const std::string text = report();
    CHECK(text.find("oom: cannot tell whether the OOM killer did it (" + events + " is not readable)\n") !=
          std::string::npos);
    CHECK(f.log.Has(LogLevel::kNotice, "cannot tell whether the OOM killer"));
  }
  SECTION("an end the status explains has no oom line") {
    f.processes.ended[100] = ProcessEnd{true, 3 << 8};
    f.service->Disconnect(c.id);
    CHECK(report().find("oom:") == std::string::npos);
  }
}

TEST_CASE("no stackcore dir after GOODBYE, without rings, or for a 1.0 connection", "[service][rings][death]") {
  ServiceFixture f;
  f.processes.ended[100] = ProcessEnd{true, SIGKILL};
  f.processes.ended[200] = ProcessEnd{true, SIGKILL};
  RingClient bye(f, 100);
  bye.Register(1, RingWith({"saved at exit"}), /*exit_save=*/true);
  REQUIRE(f.Call(bye.id, ATR_OP_GOODBYE, {}).status == 0);
  f.service->Disconnect(bye.id);
  RingClient empty(f, 200);
  f.service->Disconnect(empty.id);
  auto plain = f.Client(200);
  f.service->Disconnect(plain);
  CHECK(KindDirs(f, "stackcore").empty());
  CHECK(KindDirs(f, "exit").size() == 1);
  CHECK(f.service->departures() == 0);
  CHECK(f.service->HoldsRings(bye.id) == false);
}

TEST_CASE("rings with no record still leave the report", "[service][rings][death]") {
  ServiceFixture f;
  f.processes.ended[100] = ProcessEnd{true, SIGKILL};
  RingClient c(f, 100);
  c.Register(1, EmptyRing());
  CHECK(f.service->HoldsRings(c.id));
  f.service->Disconnect(c.id);
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  auto names = ListNames(dirs[0]);
  REQUIRE(names.size() == 1);
  CHECK(names[0].rfind("stackcore_tracer_9_100_app_", 0) == 0);
}

TEST_CASE("a daemon that stops with departures pending writes nothing and frees them", "[service][rings][death]") {
  ServiceFixture f;
  RingClient c(f, 100);
  c.Register(1, RingWith({"x"}));
  f.service->Disconnect(c.id);  // process 100 is still listed: pending
  REQUIRE(f.service->departures() == 1);
  f.service.reset();
  CHECK(KindDirs(f, "stackcore").empty());
}
