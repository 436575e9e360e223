// PROCESS_DUMP (atracectl dump): who may dump whom, what the schedule dir holds, who pays,
// and a process that exits while its stacks are read.
#include <catch2/catch.hpp>

#include <memory>

#include "atraced/proto/stack_dump_file.h"
#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

// Answers as the helper's live mode does, and keeps what it was asked.
class LiveInspector final : public CrashInspector {
 public:
  CrashFacts Inspect(const CrashTarget& target, std::chrono::milliseconds budget) override {
    asked.push_back(target);
    budgets.push_back(budget);
    CrashFacts f{"100 app\n101 worker\n",
                 "Thread 1 (100, app)\n#0 0x0000000000401136 0x0000000000400000 /usr/bin/app wait_here+0x6\n"
                 "(held stopped 33 us)\nThread 2 (101, worker)\n(no backtrace: it exited)\n",
                 "00400000-00401000 r-xp app\n"};
    f.thread_count = 2;
    f.stacks_read = 1;
    f.stacks_written = 1;
    f.threads_written = 2;
    f.max_stop_us = 33;
    return f;
  }
  std::vector<CrashTarget> asked;
  std::vector<std::chrono::milliseconds> budgets;
};

// A connection granted PROCESS_DUMP (atracectl's).
TraceService::ClientId Asker(ServiceFixture& f, int32_t pid, uint32_t uid) {
  auto id = f.service->Connect({pid, uid, uid});
  proto::Hello h;
  h.features = ATR_FEATURE_PROCESS_DUMP;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  CHECK((f.service->features(id) & ATR_FEATURE_PROCESS_DUMP) != 0);
  return id;
}

proto::ProcessDumpReply Dump(ServiceFixture& f, TraceService::ClientId asker, const proto::ProcessDump& m) {
  const auto r = f.Call(asker, ATR_OP_PROCESS_DUMP, Payload(m));
  INFO(r.message);
  REQUIRE(r.status == 0);
  proto::ProcessDumpReply reply;
  REQUIRE(proto::Decode(r.body, &reply).ok());
  return reply;
}

proto::ProcessDump Pids(std::vector<int32_t> pids) { return {0, 0, "", std::move(pids)}; }

}  // namespace

TEST_CASE("PROCESS_DUMP writes the live rings and every thread's stack into one schedule dir", "[service][dump]") {
  LiveInspector inspector;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  ServiceFixture f({}, deps);
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"the last record"}));
  const auto asker = Asker(f, 200, 1000);
  const auto reply = Dump(f, asker, Pids({100}));
  REQUIRE(reply.entries.size() == 1);
  const auto& e = reply.entries[0];
  CHECK(e.pid == 100);
  CHECK(e.status == 0);
  CHECK(e.threads == 2);
  CHECK(e.rings == 1);
  CHECK(e.max_stop_us == 33);
  REQUIRE(inspector.asked.size() == 1);
  CHECK(inspector.asked[0].live);
  CHECK(inspector.asked[0].uid == 1000);
  const auto dirs = KindDirs(f, "schedule");
  REQUIRE(dirs.size() == 1);
  CHECK(e.text == dirs[0]);
  const auto names = ListNames(dirs[0]);
  REQUIRE(names.size() == 3);
  CHECK(names[0] == "schedule_tracer_obj1.txt");
  CHECK(names[1].rfind("stackcore_tracer_35_100_app_", 0) == 0);
  CHECK(names[1].size() > 4);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("the last record\n") != std::string::npos);
  const std::string text = ReadFile(dirs[0] + "/" + names[2]);
  INFO(text);
  CHECK(text.find("dumped from outside; it runs on\n") != std::string::npos);
  CHECK(text.find("dumped by: uid 1000 (pid 200), no signal sent\n") != std::string::npos);
  CHECK(text.find("stacks: 1 of 2 threads read, one at a time, 1 written below;") != std::string::npos);
  CHECK(text.find("[stack]\nThread 1 (100, app)\n#0 ") != std::string::npos);
  std::string decoded, why;
  const std::string bin = ReadFile(dirs[0] + "/" + names[1]);
  REQUIRE(proto::DecodeStackDumpFile({reinterpret_cast<const uint8_t*>(bin.data()), bin.size()}, &decoded, &why));
  CHECK(decoded == text);
}

TEST_CASE("PROCESS_DUMP: root and the process's own uid may, anyone else is refused by name", "[service][dump]") {
  ServiceFixture f;
  f.processes.processes[400] = {400, 4444, "noring", {}, ProcessCredentials{{1000, 1000, 1000, 1000}, {1000, 1000, 1000, 1000}, true}};
  f.processes.processes[500] = {500, 5555, "rootish", {}, ProcessCredentials{{0, 0, 0, 0}, {0, 0, 0, 0}, true}};
  RingClient mine(f, 100, 1000);
  mine.Register(1, RingWith({"r"}));
  RingClient theirs(f, 300, 2000);
  theirs.Register(1, RingWith({"r"}));
  const auto asker = Asker(f, 200, 1000);
  const auto reply = Dump(f, asker, Pids({100, 300, 400, 500, 999}));
  REQUIRE(reply.entries.size() == 5);
  CHECK(reply.entries[0].status == 0);
  CHECK(reply.entries[1].status == ATR_EPERM);
  CHECK(reply.entries[1].text == "pid 300 is uid 2000's; uid 1000 may dump only its own processes (root may dump any)");
  CHECK(f.log.Has(LogLevel::kNotice, "refused PROCESS_DUMP from pid 200 uid 1000: pid 300 is uid 2000's"));
  CHECK(reply.entries[2].status == ATR_ENOENT);
  CHECK(reply.entries[2].text.find("pid 400 (noring) holds no ring here") == 0);
  CHECK(reply.entries[3].status == ATR_EPERM);  // another user's, rings or not
  CHECK(reply.entries[4].status == ATR_ESRCH);
  CHECK(reply.entries[4].text == "pid 999 does not exist");
  // A selection covers the asker's own processes; another uid's is root's to ask for.
  CHECK(f.Call(asker, ATR_OP_PROCESS_DUMP, Payload(proto::ProcessDump{ATR_PROCESS_DUMP_UID, 2000, "", {}})).status ==
        ATR_EPERM);
  const auto all = Dump(f, asker, {ATR_PROCESS_DUMP_ALL, 0, "", {}});
  REQUIRE(all.entries.size() == 1);
  CHECK(all.entries[0].pid == 100);
  const auto root = Asker(f, 201, 0);
  CHECK(Dump(f, root, {ATR_PROCESS_DUMP_ALL, 0, "", {}}).entries.size() == 2);
  CHECK(Dump(f, root, {ATR_PROCESS_DUMP_UID, 2000, "", {}}).entries.at(0).pid == 300);
  CHECK(Dump(f, root, {ATR_PROCESS_DUMP_COMM | ATR_PROCESS_DUMP_UID, 1000, "app", {}}).entries.at(0).pid == 100);
  CHECK(Dump(f, root, {ATR_PROCESS_DUMP_COMM, 0, "nothing", {}}).entries.empty());
}

TEST_CASE("PROCESS_DUMP counts against the asker's rate limit, not the dumped process's", "[service][dump]") {
  ServiceLimits o;
  o.rate_limit.burst = 1;
  o.rate_limit.interval = std::chrono::seconds(60);
  ServiceFixture f(o);
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"r"}));
  const auto asker = Asker(f, 200, 1000);
  CHECK(Dump(f, asker, Pids({100})).entries.at(0).status == 0);
  const auto again = Dump(f, asker, Pids({100}));
  CHECK(again.entries.at(0).status == ATR_EAGAIN);
  CHECK(again.entries.at(0).text.find("rate limit") != std::string::npos);
  // The process itself may still save: its own bucket is untouched.
  CHECK(f.Call(rings.id, ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})).status == 0);
}

TEST_CASE("PROCESS_DUMP: a process that exits while its stacks are read still gets its rings saved", "[service][dump]") {
  LiveInspector inspector;
  FakeCrashRunner runner;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  deps.crash_runner = &runner;
  ServiceFixture f({}, deps);
  auto rings = std::make_unique<RingClient>(f, 100);
  rings->Register(1, RingWith({"before it went"}));
  const auto asker = Asker(f, 200, 1000);
  std::vector<ReplyBatch> delivered;
  f.service->SetReplySink(asker, [&](ReplyBatch&& b) { delivered.push_back(std::move(b)); });
  ReplyBatch batch;
  const auto payload = Payload(Pids({100}));
  proto::FrameHeader h{static_cast<uint32_t>(payload.size()), ATR_OP_PROCESS_DUMP, 0, 9};
  CHECK(f.service->Handle(asker, h, payload, batch) == TraceService::Reply::kLater);  // the stacks are read on the runner
  REQUIRE(runner.jobs.size() == 1);
  // It exits cleanly meanwhile: GOODBYE releases its rings.
  REQUIRE(f.Call(rings->id, ATR_OP_GOODBYE, {}).status == 0);
  f.service->Disconnect(rings->id);
  CHECK(f.service->rings() == 0);
  runner.FinishAll();
  REQUIRE(delivered.size() == 1);
  const auto replies = ServiceFixture::Decode(delivered[0]);
  REQUIRE(replies.size() == 1);
  CHECK(replies[0].header.request_id == 9);
  proto::ProcessDumpReply reply;
  REQUIRE(proto::Decode(replies[0].body, &reply).ok());
  REQUIRE(reply.entries.size() == 1);
  CHECK(reply.entries[0].status == 0);
  CHECK(ReadFile(reply.entries[0].text + "/schedule_tracer_obj1.txt").find("before it went\n") != std::string::npos);
}

TEST_CASE("PROCESS_DUMP needs its feature, and garbage is refused", "[service][dump]") {
  ServiceFixture f;
  const auto plain = f.Client(200);
  CHECK(f.Call(plain, ATR_OP_PROCESS_DUMP, Payload(Pids({100}))).status == ATR_ENOTSUP);
  const auto asker = Asker(f, 201, 1000);
  CHECK(f.Call(asker, ATR_OP_PROCESS_DUMP, {1, 2, 3}).status == ATR_EBADMSG);
  CHECK(f.Call(asker, ATR_OP_PROCESS_DUMP, Payload(proto::ProcessDump{0, 0, "", {}})).status == ATR_EINVAL);
}

TEST_CASE("PROCESS_DUMP: one user's 130 processes claiming a job cannot displace the job's own from root's dump",
          "[service][dump][labels]") {
  ServiceFixture f;
  auto label = [&f](int32_t pid, uint32_t uid, const std::string& job) {
    auto id = f.service->Connect({pid, uid, uid});
    proto::Hello h;
    h.features = ATR_FEATURE_LABELS;
    REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
    REQUIRE(f.Call(id, ATR_OP_LABELS, Payload(proto::Labels{job, "3", "8"})).status == 0);
  };
  std::vector<std::unique_ptr<RingClient>> processes;
  for (int32_t pid = 1000; pid < 1130; ++pid) {  // the attacker's, every one claiming rank 3 of J, lower pids
    processes.push_back(std::make_unique<RingClient>(f, pid, 2000));
    processes.back()->Register(1, RingWith({"fake"}));
    label(pid, 2000, "J");
  }
  for (int32_t pid = 5000; pid < 5003; ++pid) {  // the job's own
    processes.push_back(std::make_unique<RingClient>(f, pid, 1000));
    processes.back()->Register(1, RingWith({"real"}));
    label(pid, 1000, "J");
  }
  const auto root = Asker(f, 300, 0);
  proto::ProcessDump m;
  m.select = ATR_PROCESS_DUMP_JOB;
  m.job = "J";
  const auto reply = Dump(f, root, m);
  REQUIRE(reply.entries.size() == ATR_MAX_DUMP_PROCESSES);
  CHECK(reply.omitted == 5);
  size_t real = 0;
  int32_t last = 0;
  for (const auto& e : reply.entries) {
    CHECK(e.pid > last);  // in pid order
    last = e.pid;
    real += e.pid >= 5000;  // chosen (the fake process table makes each look -EPERM, which is not the point here)
  }
  CHECK(real == 3);
  // The log names exactly which were left out: the attacker's last five.
  CHECK(f.log.Has(LogLevel::kNotice, "chose 133 processes, 5 past the 128 a dump takes, each uid in turn; left out: "
                                     "1125 1126 1127 1128 1129"));
}

TEST_CASE("PROCESS_DUMP: the asker's unwinds count against its uid's limit, as its crashes do, and root's do not",
          "[service][dump][crash]") {
  LiveInspector inspector;
  ServiceLimits o;
  o.crash_unwinds_per_uid_per_minute = 2;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  ServiceFixture f(o, deps);
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"r"}));
  const auto user = Asker(f, 200, 1000);
  auto report_of = [](const proto::ProcessDumpReply& reply) {
    REQUIRE(reply.entries.size() == 1);
    REQUIRE(reply.entries[0].status == 0);
    const std::string dir = reply.entries[0].text;
    for (const auto& name : ListNames(dir)) {
      if (name.rfind("stackcore_", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0) {
        return ReadFile(dir + "/" + name);
      }
    }
    return std::string();
  };
  for (int i = 0; i < 2; ++i) report_of(Dump(f, user, Pids({100})));
  const std::string third = report_of(Dump(f, user, Pids({100})));
  REQUIRE(inspector.budgets.size() == 3);
  CHECK(inspector.budgets[0] == o.crash_budget);
  CHECK(inspector.budgets[1] == o.crash_budget);
  CHECK(inspector.budgets[2] == std::chrono::milliseconds(0));  // threads and maps only
  CHECK(third.find("(none: uid 1000 already had 2 crashes or dumps unwound in the last minute)") != std::string::npos);
  // Root, dumping a hung job's ranks, is not held to a user's limit.
  const auto root = Asker(f, 300, 0);
  report_of(Dump(f, root, Pids({100})));
  CHECK(inspector.budgets.back() == o.crash_budget);
  // A minute later the user may again.
  f.clock.Advance(std::chrono::minutes(1));
  report_of(Dump(f, user, Pids({100})));
  CHECK(inspector.budgets.back() == o.crash_budget);
}
