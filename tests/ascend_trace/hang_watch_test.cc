// The hang watch end to end (issue 51): the real daemon with a short hang-timeout and real
// libascend_trace processes (hang_child.c), labelled by their environment. Nobody types a
// command: a job's rank that stops recording is dumped with the rest of its job on this host,
// its dump says blocked or busy and LIST says `hang`; a rank that records every second, one
// that never recorded, and another user's job of the same name are left alone.
//
// Every wait is a poll with a generous deadline (the machine is busy); what "within
// hang-timeout + 10 s" promises is the daemon's tick (2 s) and ProgressWatch's rules,
// tested with a fake clock in tests/service/progress_watch_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "crash_util.h"
#include "hang_child_process.h"
#include "hardening/as_user.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace crash_test;
using atraced::testing::kAttacker;
using atraced::testing::CountEventDirs;
using atraced::testing::Run;
using atraced::testing::RunResult;

namespace {

using SteadyClock = std::chrono::steady_clock;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The daemon with hang-timeout `timeout` (and `extra` flags), the attacker able to reach it.
DaemonProcess::Options Watching(const std::string& timeout, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--hang-timeout", timeout});
  return atraced::testing::ForAttacker(std::move(extra));
}

// The dump directories of `pid` (schedule dirs), waiting up to `wait` for the first one.
std::vector<std::string> AwaitDumps(const DaemonProcess& d, pid_t pid, std::chrono::seconds wait) {
  const auto deadline = SteadyClock::now() + wait;
  for (;;) {
    auto dirs = DirsOf(d, "schedule", pid);
    if (!dirs.empty() || SteadyClock::now() > deadline) return dirs;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The text stack report in a dump directory (stackcore_tracer_35_<pid>_*.txt), once written:
// the directory is listed when its save begins, and the I/O workers write the report after,
// so it is read until it has its stack section and two reads 200 ms apart agree (60 s at most).
std::string DumpReport(const std::string& dir, pid_t pid) {
  auto read = [&] {
    for (const auto& name : ListNames(dir)) {
      if (name.rfind("stackcore_tracer_35_" + std::to_string(pid) + "_", 0) == 0 && name.size() > 4 &&
          name.compare(name.size() - 4, 4, ".txt") == 0) {
        return ReadText(dir + "/" + name);
      }
    }
    return std::string();
  };
  const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
  std::string text = read();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::string again = read();
    if ((again == text && text.find("\n[stack]") != std::string::npos) || SteadyClock::now() > deadline) return again;
    text = std::move(again);
  }
}

RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args) {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  return Run(args);
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::vector<std::string> Job(const std::string& job, int rank, std::vector<std::string> more = {}, int size = 2) {
  more.insert(more.begin(), {"ATRACE_JOB=" + job, "RANK_ID=" + std::to_string(rank), "RANK_SIZE=" + std::to_string(size)});
  return more;
}

}  // namespace

TEST_CASE("hang watch: a blocked rank is dumped with its job, nobody asking, and a ticking one and a silent one are not",
          "[hang_watch]") {
  DaemonProcess d(Watching("2s"));
  REQUIRE(d.Start());
  // J1: rank 0 blocks after 5 records; rank 1 keeps recording (its job is dumped with it).
  HangChild blocked(d, Job("J1", 0), {"5", "1"});
  HangChild recording_peer(d, Job("J1", 1, {"HANG_TICK_MS=200"}), {"5", "1"});
  // J2: records every second, for ever: never stalled. J3: never wrote a record: not judged.
  HangChild ticking(d, Job("J2", 0, {"HANG_TICK_MS=1000"}), {"5", "1"});
  HangChild silent(d, Job("J3", 0), {"0", "1"});

  const auto dumps = AwaitDumps(d, blocked.pid, std::chrono::seconds(90));
  INFO(d.log());
  REQUIRE(dumps.size() == 1);
  const std::string report = DumpReport(dumps[0], blocked.pid);
  INFO(report);
  CHECK(Has(report, "dumped by: atraced's hang watch, no signal sent"));
  CHECK(Has(report, "hang: pid " + std::to_string(blocked.pid) + " stalled: no record for "));
  CHECK(Has(report, ", blocked\n"));
  CHECK(Has(report, "\ndevices: not recorded (atraced runs no host tool: 'atracectl dump --devices --job J'"));
  CHECK(Has(report, "take_b_after_a"));  // the stacks of that moment
  CHECK(Records(dumps[0] + "/schedule_tracer_hang_a.txt").back() == "a record 4");
  // Its job's other rank, in the same pass, says it was dumped with its job.
  const auto peer = AwaitDumps(d, recording_peer.pid, std::chrono::seconds(60));
  REQUIRE(peer.size() == 1);
  CHECK(Has(DumpReport(peer[0], recording_peer.pid), "hang: dumped with job J1, whose pid " + std::to_string(blocked.pid)));
  CHECK(d.LogHas("hang watch: pid " + std::to_string(blocked.pid) + " of job J1 (uid 0) stalled for "));
  // LIST says who took them: the hang watch.
  const RunResult list = Ctl(d, {"list", "--json", "--job", "J1"});
  INFO(list.out << list.err);
  REQUIRE(list.exit_code == 0);
  CHECK(Has(list.out, "\"how\":\"hang\""));
  CHECK_FALSE(Has(list.out, "\"how\":\"report\""));

  // A later stall, started now, is dumped only after J2 and J3 were watched for longer than
  // their timeout: by then they would have been.
  HangChild later(d, Job("J4", 0), {"5", "1"});
  REQUIRE(AwaitDumps(d, later.pid, std::chrono::seconds(90)).size() == 1);
  CHECK(DirsOf(d, "schedule", ticking.pid).empty());
  CHECK(DirsOf(d, "schedule", silent.pid).empty());
  // Dumped once per stall: the blocked rank stays blocked and is not dumped again.
  CHECK(DirsOf(d, "schedule", blocked.pid).size() == 1);
  // An operator's dump is told apart from the watch's.
  REQUIRE(Ctl(d, {"dump", std::to_string(ticking.pid)}).exit_code == 0);
  const RunResult j2 = Ctl(d, {"list", "--json", "--job", "J2"});
  CHECK(Has(j2.out, "\"how\":\"dump\""));
}

TEST_CASE("hang watch: a rank spinning without recording is dumped as busy", "[hang_watch]") {
  DaemonProcess d(Watching("2s"));
  REQUIRE(d.Start());
  // Four threads spinning, counting: on a loaded host each gets a slice, together plenty.
  HangChild spinning(d, Job("J1", 0), {"5", "1", "4", "spin"});
  const auto dumps = AwaitDumps(d, spinning.pid, std::chrono::seconds(90));
  INFO(d.log());
  REQUIRE(dumps.size() == 1);
  const std::string report = DumpReport(dumps[0], spinning.pid);
  INFO(report);
  CHECK(Has(report, ", busy\n"));
}

TEST_CASE("hang watch: ATRACE_HANG_TIMEOUT may shorten the daemon's timeout, never lengthen it", "[hang_watch]") {
  SECTION("a huge one from the environment is clamped to the daemon's") {
    DaemonProcess d(Watching("2s"));
    REQUIRE(d.Start());
    HangChild huge(d, Job("J1", 0, {"ATRACE_HANG_TIMEOUT=99999d"}), {"5", "1"});
    INFO(d.log());
    CHECK(AwaitDumps(d, huge.pid, std::chrono::seconds(90)).size() == 1);
    CHECK(d.LogHas("hang timeout 99999d"));
  }
  SECTION("a short one applies under a long daemon timeout") {
    DaemonProcess d(Watching("1h"));
    REQUIRE(d.Start());
    HangChild quick(d, Job("J1", 0, {"ATRACE_HANG_TIMEOUT=2s"}), {"5", "1"});
    INFO(d.log());
    CHECK(AwaitDumps(d, quick.pid, std::chrono::seconds(90)).size() == 1);
  }
  SECTION("a bad one refuses the labels, said once on stderr, and the process is not watched") {
    DaemonProcess d(Watching("2s"));
    REQUIRE(d.Start());
    HangChild bad(d, Job("J1", 0, {"ATRACE_HANG_TIMEOUT=soon"}), {"5", "1"});
    REQUIRE(d.WaitForLog("hang_timeout: not a time span above zero"));
    HangChild later(d, Job("J9", 0), {"5", "1"});  // the clock: dumped once the bad one would have been
    REQUIRE(AwaitDumps(d, later.pid, std::chrono::seconds(90)).size() == 1);
    CHECK(DirsOf(d, "schedule", bad.pid).empty());
  }
}

TEST_CASE("hang watch: a bad hang-timeout stops the daemon, naming the key and the value", "[hang_watch][config]") {
  for (const char* bad : {"5 min", "soon", "-2s", "8d"}) {
    CAPTURE(bad);
    DaemonProcess d(DaemonProcess::Options{{"--hang-timeout", bad}});
    CHECK_FALSE(d.Start());
    CHECK(d.exited_during_start() == 2);
    CHECK(d.LogHas(std::string("invalid value [") + bad + "] for hang-timeout"));
  }
  // 0 turns the watch off: a blocked rank is never dumped.
  DaemonProcess off(Watching("0"));
  REQUIRE(off.Start());
  HangChild blocked(off, Job("J1", 0), {"5", "1"});
  REQUIRE(off.WaitForLog("hang timeout off"));
  CHECK(AwaitDumps(off, blocked.pid, std::chrono::seconds(8)).empty());
}

TEST_CASE("hang watch: another user's stall under the same job label dumps only that user's processes",
          "[hang_watch][security]") {
  if (!atraced::testing::NeedsRoot()) return;
  DaemonProcess d(Watching("2s"));
  REQUIRE(atraced::testing::StartForAttacker(d));
  // Root's rank of J1 keeps recording; the attacker labels a process J1 too and lets it stall.
  HangChild roots(d, Job("J1", 0, {"HANG_TICK_MS=200"}), {"5", "1"});
  HangChild attackers(d, Job("J1", 1), {"5", "1"}, kAttacker);
  INFO(d.log());
  REQUIRE(AwaitDumps(d, attackers.pid, std::chrono::seconds(90)).size() == 1);
  CHECK(d.LogHas("of job J1 (uid " + std::to_string(kAttacker) + ") stalled"));
  // Root's process was not dumped for it, then or after another stall's round.
  HangChild later(d, Job("J5", 0), {"5", "1"});
  REQUIRE(AwaitDumps(d, later.pid, std::chrono::seconds(90)).size() == 1);
  CHECK(DirsOf(d, "schedule", roots.pid).empty());
}

TEST_CASE("hang watch: a process that exits while its job is dumped leaves the others' dumps whole",
          "[hang_watch]") {
  DaemonProcess d(Watching("2s"));
  REQUIRE(d.Start());
  // Many idle threads make each look take a while; the first rank ends during the pass.
  auto leaving = std::make_unique<HangChild>(d, Job("J1", 0), std::vector<std::string>{"5", "1", "64"});
  HangChild staying(d, Job("J1", 1), {"5", "1", "64"});
  const pid_t gone = leaving->pid;
  REQUIRE(d.WaitForLog("of job J1 (uid 0) stalled for ", std::chrono::seconds(90)));
  leaving->End();
  INFO(d.log());
  REQUIRE(AwaitDumps(d, staying.pid, std::chrono::seconds(60)).size() == 1);
  // The one that left: dumped from the rings held when it was chosen, or refused by name.
  REQUIRE(d.WaitForLog("hang watch: pid " + std::to_string(gone) + " of job J1 ", std::chrono::seconds(60)));
  CHECK(d.LogHas("hang watch: pid " + std::to_string(staying.pid) + " of job J1 "));
  // The daemon serves on.
  CHECK(Ctl(d, {"status"}).exit_code == 0);
}

TEST_CASE("hang watch: twelve ranks dumped on one host with record-num 10 all survive and are exported",
          "[hang_watch][dump_keep]") {
  DaemonProcess d(Watching("2s"));  // record-num 10, dump-keep 24h: the defaults
  REQUIRE(d.Start());
  std::vector<std::unique_ptr<HangChild>> ranks;
  for (int r = 0; r < 12; ++r) {
    ranks.push_back(std::make_unique<HangChild>(d, Job("J1", r, {}, 12), std::vector<std::string>{"5", "1"}));
  }
  INFO(d.log());
  for (const auto& r : ranks) REQUIRE(AwaitDumps(d, r->pid, std::chrono::seconds(120)).size() == 1);
  CHECK(CountEventDirs(d.trace_dir(), "schedule") == 12);
  atraced::testing::TempDir tmp;
  const std::string bundle = tmp / "host.tar.gz";
  const RunResult exported = Ctl(d, {"export", "--format", "tar", "--job", "J1", "-o", bundle});
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const RunResult hang = Run({ATRACECTL_BINARY, "hang", "--json", bundle});
  INFO(hang.out << hang.err);
  REQUIRE(hang.exit_code == 0);
  CHECK(Has(hang.out, "\"ranks_seen\":[0,1,2,3,4,5,6,7,8,9,10,11],\"missing\":\"\",\"missing_count\":0,"));
}

namespace {

// How long `pid`'s rings have stood still as `list --live` tells it, polled until at least
// `still` (90 s at most); -1 when it never got there. What a watched process would have been
// judged by by then.
long long AwaitStill(const DaemonProcess& d, pid_t pid, std::chrono::milliseconds still, std::string* object) {
  const auto deadline = SteadyClock::now() + std::chrono::seconds(90);
  for (;;) {
    const RunResult r = Ctl(d, {"list", "--live", "--json"});
    const size_t at = r.out.find("{\"pid\":" + std::to_string(pid) + ",");
    *object = at == std::string::npos ? "" : r.out.substr(at, r.out.find('}', at) - at + 1);
    const size_t field = object->find("\"still_ms\":");
    const long long ms = field == std::string::npos ? -1 : std::atoll(object->c_str() + field + 11);
    if (ms >= still.count()) return ms;
    if (SteadyClock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace

TEST_CASE("hang watch: an unlabelled process is watched only with hang-watch-unlabelled", "[hang_watch][config]") {
  SECTION("without it, a stalled unlabelled process is never judged nor dumped") {
    DaemonProcess d(Watching("2s"));
    REQUIRE(d.Start());
    HangChild unlabelled(d, {}, {"5", "1"});
    INFO(d.log());
    // Still four times its timeout: a watched process would have been judged twice over.
    std::string object;
    REQUIRE(AwaitStill(d, unlabelled.pid, std::chrono::seconds(8), &object) >= 8000);
    INFO(object);
    CHECK(Has(object, "\"hang_timeout_ms\":null,\"state\":\"not watched\""));
    CHECK_FALSE(d.LogHas("hang watch: pid " + std::to_string(unlabelled.pid) + " "));
    CHECK(DirsOf(d, "schedule", unlabelled.pid).empty());
  }
  SECTION("with it, the unlabelled process is its own job: dumped alone, blocked") {
    DaemonProcess d(Watching("2s", {"--hang-watch-unlabelled", "1"}));
    REQUIRE(d.Start());
    HangChild unlabelled(d, {}, {"5", "1"});
    HangChild other(d, {"HANG_TICK_MS=200"}, {"5", "1"});  // unlabelled too, recording: never dumped
    INFO(d.log());
    const auto dumps = AwaitDumps(d, unlabelled.pid, std::chrono::seconds(90));
    REQUIRE(dumps.size() == 1);
    const std::string pid = std::to_string(unlabelled.pid);
    CHECK(d.LogHas("hang watch: pid " + pid + " of job pid " + pid + " (uid 0) stalled for "));
    CHECK(Has(DumpReport(dumps[0], unlabelled.pid), ", blocked\n"));
    CHECK(DirsOf(d, "schedule", other.pid).empty());
  }
}

TEST_CASE("hang watch: SIGHUP applies hang-timeout and hang-watch-unlabelled at once, a bad value is refused and the "
          "running ones kept",
          "[hang_watch][config][reload]") {
  atraced::testing::TempDir conf;
  atraced::testing::WriteFile(conf / "h.conf", "hang-timeout = 1h\n");
  DaemonProcess d({{"--config", conf / "h.conf"}});
  REQUIRE(d.Start());
  HangChild blocked(d, Job("J1", 0), {"5", "1"});
  HangChild unlabelled(d, {}, {"5", "1"});
  INFO(d.log());
  // Under the hour: watched with it, not judged.
  std::string object;
  REQUIRE(AwaitStill(d, blocked.pid, std::chrono::seconds(4), &object) >= 4000);
  CHECK(Has(object, "\"hang_timeout_ms\":3600000,\"state\":\"running\""));

  atraced::testing::WriteFile(conf / "h.conf", "hang-timeout = 2s\nhang-watch-unlabelled = 1\n");
  d.Signal(SIGHUP);
  REQUIRE(d.WaitForLog("hang timeout 2000 ms, unlabelled processes watched"));
  // No restart: the processes connected under the old settings are judged by the new ones.
  REQUIRE(AwaitDumps(d, blocked.pid, std::chrono::seconds(90)).size() == 1);
  REQUIRE(AwaitDumps(d, unlabelled.pid, std::chrono::seconds(90)).size() == 1);

  // Past the 7-day bound: refused by name, logged, and 2 s stays in force.
  atraced::testing::WriteFile(conf / "h.conf", "hang-timeout = 8d\n");
  d.Signal(SIGHUP);
  REQUIRE(d.WaitForLog("reload refused"));
  CHECK(d.LogHas("invalid value [8d] for hang-timeout"));
  HangChild later(d, Job("J2", 0), {"5", "1"});
  REQUIRE(AwaitDumps(d, later.pid, std::chrono::seconds(90)).size() == 1);
  CHECK(d.LogHas("hang watch: pid " + std::to_string(later.pid) + " of job J2 (uid 0) stalled for "));
  // hang-watch-unlabelled was kept as well: a new unlabelled process is watched.
  HangChild unlabelled_later(d, {}, {"5", "1"});
  REQUIRE(AwaitDumps(d, unlabelled_later.pid, std::chrono::seconds(90)).size() == 1);
}
