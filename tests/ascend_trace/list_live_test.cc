// `atracectl list --live` end to end (issue 51, docs/FLEET.md step 1): the real daemon, real
// libascend_trace processes (hang_child.c) labelled by their environment, and atracectl run
// as root and as another user. A hung job's ranks are found on a host before anything of
// them was saved: their labels, when their rings last advanced and the hang watch's verdict.
//
// Every wait is a poll with a generous deadline: the daemon looks at the rings every 2 s.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "crash_util.h"
#include "hang_child_process.h"
#include "hardening/as_user.h"
#include "support/subprocess.h"

using namespace crash_test;
using atraced::testing::kAttacker;
using atraced::testing::Run;
using atraced::testing::RunOptions;
using atraced::testing::RunResult;

namespace {

using SteadyClock = std::chrono::steady_clock;

RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args, uid_t uid = 0) {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  RunOptions o;
  if (uid != 0) o.uid = uid;
  return Run(args, o);
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::vector<std::string> Job(const std::string& job, int rank, std::vector<std::string> more = {}) {
  more.insert(more.begin(), {"ATRACE_JOB=" + job, "RANK_ID=" + std::to_string(rank), "RANK_SIZE=2"});
  return more;
}

// The JSON object of `pid` in a `list --live --json` document ("" when it is not listed):
// its fields are numbers, null and strings without braces.
std::string ProcessOf(const std::string& json, pid_t pid) {
  const size_t at = json.find("{\"pid\":" + std::to_string(pid) + ",");
  return at == std::string::npos ? "" : json.substr(at, json.find('}', at) - at + 1);
}

// A number field of a process's object; -1 when absent or null.
long long Field(const std::string& object, const std::string& key) {
  const size_t at = object.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  const char* start = object.c_str() + at + key.size() + 3;
  return *start == 'n' ? -1 : std::strtoll(start, nullptr, 10);
}

// Polls `list --live --json [args]` as root until `pid`'s object satisfies `done` (90 s at
// most); returns the last object seen.
template <class Done>
std::string AwaitLive(const DaemonProcess& d, pid_t pid, Done done, std::vector<std::string> args = {}) {
  args.insert(args.begin(), {"list", "--live", "--json"});
  const auto deadline = SteadyClock::now() + std::chrono::seconds(90);
  std::string object;
  for (;;) {
    const RunResult r = Ctl(d, args);
    object = ProcessOf(r.out, pid);
    if ((r.exit_code == 0 && done(object)) || SteadyClock::now() > deadline) return object;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace

TEST_CASE("list --live: a job's ranks with their labels, last record and stall state, nothing saved first",
          "[list_live][hang_watch]") {
  DaemonProcess d({{"--hang-timeout", "1h"}});
  REQUIRE(d.Start());
  // J1: rank 0 blocks after 5 records and asks for a 3 s timeout; rank 1 records for ever.
  HangChild blocked(d, Job("J1", 0, {"ATRACE_HANG_TIMEOUT=3s"}), {"5", "1"});
  HangChild ticking(d, Job("J1", 1, {"HANG_TICK_MS=200"}), {"5", "2"});
  HangChild silent(d, Job("J2", 0), {"0", "1"});  // never wrote a record
  HangChild unlabelled(d, {}, {"5", "1"});          // no job: not watched
  INFO(d.log());

  // The blocked rank is found stalled, blocked, with how long, before anyone asked for a dump.
  const std::string stalled = AwaitLive(d, blocked.pid, [](const std::string& o) { return Has(o, "\"state\":\"stalled blocked\""); },
                                        {"--job", "J1"});
  INFO(stalled);
  REQUIRE(Has(stalled, "\"state\":\"stalled blocked\""));
  CHECK(Has(stalled, "\"uid\":0,\"comm\":\"ascend_trace_ha\",\"job\":\"J1\",\"rank\":0,\"world_size\":2,\"rings\":1,"));
  CHECK(Field(stalled, "hang_timeout_ms") == 3000);  // its own, shorter than the daemon's
  CHECK(Field(stalled, "still_ms") >= 3000);
  const long long last = Field(stalled, "last_record_unix_us");
  const long long now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(last > 0);
  CHECK(last <= now_us);
  // Its job's other rank keeps recording: running (once the dump the stall set off is past).
  const std::string running =
      AwaitLive(d, ticking.pid, [](const std::string& o) { return Has(o, "\"state\":\"running\""); }, {"--job", "J1"});
  INFO(running);
  CHECK(Has(running, "\"state\":\"running\""));
  CHECK(Has(running, "\"rank\":1,\"world_size\":2,\"rings\":2,"));
  CHECK(Field(running, "hang_timeout_ms") == 3600000);
  CHECK(Field(running, "still_ms") < 3600000);

  // --job lists that job only; the text form has a line per process, rank order, every state.
  const RunResult j2 = Ctl(d, {"list", "--live", "--json", "--job", "J2"});
  CHECK(j2.exit_code == 0);
  CHECK(Has(ProcessOf(j2.out, silent.pid), "\"state\":\"no record yet\""));
  CHECK(ProcessOf(j2.out, blocked.pid).empty());
  CHECK(Has(j2.out, "],\"omitted\":0}\n"));
  const RunResult text = Ctl(d, {"list", "--live"});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.rfind("PID\tUID\tCOMM\tJOB\tRANK\tSIZE\tRINGS\tLAST RECORD\tSTILL\tTIMEOUT\tSTATE\n", 0) == 0);
  CHECK(Has(text.out, std::to_string(unlabelled.pid) + "\t0\tascend_trace_ha\t-\t-\t-\t1\t"));
  CHECK(Has(text.out, "\tnot watched\n"));
  CHECK(Has(text.out, std::to_string(silent.pid) + "\t0\tascend_trace_ha\tJ2\t0\t2\t1\t-\t-\t60m\tno record yet\n"));
  CHECK(text.out.find(std::to_string(blocked.pid) + "\t") < text.out.find(std::to_string(ticking.pid) + "\t"));
  // A process that ended is no longer listed.
  silent.End();
  AwaitLive(d, silent.pid, [](const std::string& o) { return o.empty(); });
  CHECK(ProcessOf(Ctl(d, {"list", "--live", "--json"}).out, silent.pid).empty());
}

TEST_CASE("list --live: a user sees only its own processes, root everyone's", "[list_live][security]") {
  if (!atraced::testing::NeedsRoot()) return;
  DaemonProcess d(atraced::testing::ForAttacker());
  REQUIRE(atraced::testing::StartForAttacker(d));
  HangChild users(d, Job("JA", 0), {"5", "1"}, kAttacker);
  HangChild roots(d, Job("JR", 0), {"5", "1"});
  INFO(d.log());
  const RunResult mine = Ctl(d, {"list", "--live", "--json"}, kAttacker);
  INFO(mine.out << mine.err);
  REQUIRE(mine.exit_code == 0);
  CHECK(Has(ProcessOf(mine.out, users.pid), "\"uid\":" + std::to_string(kAttacker) + ","));
  CHECK(ProcessOf(mine.out, roots.pid).empty());
  CHECK_FALSE(Has(mine.out, "JR"));
  CHECK(Has(mine.out, "\"omitted\":0}"));  // the others are not even counted
  // Naming root's job does not reach it either.
  const RunResult aimed = Ctl(d, {"list", "--live", "--job", "JR", "--json"}, kAttacker);
  CHECK(aimed.exit_code == 0);
  CHECK(aimed.out == "{\"processes\":[],\"omitted\":0}\n");
  // Root sees both.
  const RunResult all = Ctl(d, {"list", "--live", "--json"});
  CHECK(!ProcessOf(all.out, users.pid).empty());
  CHECK(!ProcessOf(all.out, roots.pid).empty());
}

TEST_CASE("list --live: options that choose directories are usage errors", "[list_live]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  for (std::vector<std::string> args : {std::vector<std::string>{"--pid", "1"}, {"--follow"}, {"--kind", "exit"},
                                        {"--job", "J 1"}, {"--job", std::string(65, 'j')}}) {
    args.insert(args.begin(), {"list", "--live"});
    const RunResult r = Ctl(d, args);
    CAPTURE(args);
    CHECK(r.exit_code == 2);
    CHECK(Has(r.err, "list --live: --"));
  }
  // Nothing live: a header and no line; exit 0.
  const RunResult none = Ctl(d, {"list", "--live"});
  CHECK(none.exit_code == 0);
  CHECK(none.out == "PID\tUID\tCOMM\tJOB\tRANK\tSIZE\tRINGS\tLAST RECORD\tSTILL\tTIMEOUT\tSTATE\n");
}
