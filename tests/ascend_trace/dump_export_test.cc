// dump-keep until exported (issue 51), end to end: the real daemon's hang watch dumps real
// libascend_trace processes of two users (hang_child.c), and `atracectl emit` fills the host
// class to record-num (10) behind them. `atracectl export --format tar` releases what the
// bundle holds (DUMPS_EXPORTED), and record-num then ages it as any other directory, oldest
// first; what was not exported, what a failed export selected, and another user's dump named
// by an attacker stay kept.
// A dump the byte budget takes before the export: host A's daemon has a small max-use; rank 1
// of job J1 is dumped there, then plain directories fill the budget and the daemon ages rank
// 1's dump though dump-keep keeps it from the count. Rank 0 is dumped after, host B dumps rank
// 2, rank 3 never ran. `export` writes the daemon's evidence of the aged dump (AGED_DUMPS) into
// bundle.jsonl, and `hang` names rank 1 aged (why, when, what to change) and rank 3 missing;
// the evidence survives a restart (the order log), and another user learns nothing of it.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/codec.h"
#include "crash_util.h"
#include "hang_child_process.h"
#include "hardening/as_user.h"
#include "support/raw_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace crash_test;
using atraced::testing::CountEventDirs;
using atraced::testing::kAttacker;
using atraced::testing::Run;
using atraced::testing::RunOptions;
using atraced::testing::RunResult;

namespace {

using SteadyClock = std::chrono::steady_clock;

std::vector<std::string> AwaitDumps(const DaemonProcess& d, pid_t pid) {
  const auto deadline = SteadyClock::now() + std::chrono::seconds(120);
  for (;;) {
    auto dirs = DirsOf(d, "schedule", pid);
    if (!dirs.empty() || SteadyClock::now() > deadline) return dirs;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args) {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  return Run(args);
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

bool IsDir(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// One more plain schedule directory (a process of its own) of `bytes` bytes.
void Emit(const DaemonProcess& d, size_t bytes = 1) {
  RunOptions o;
  o.input = std::string(bytes, 'x');
  const RunResult r = Run({ATRACECTL_BINARY, "--socket", d.socket(), "emit", "--event", "schedule", "--object", "o"}, o);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

std::string KeptLine(const DaemonProcess& d) {
  const RunResult s = Ctl(d, {"status", "--json"});
  const size_t at = s.out.find("\"dumps\":");
  return at == std::string::npos ? s.out : s.out.substr(at, s.out.find('}', at) + 1 - at);
}

// `atracectl dump PID`: the dump directories of `pid` after it.
std::vector<std::string> DumpOf(const DaemonProcess& d, pid_t pid) {
  const RunResult r = Ctl(d, {"dump", std::to_string(pid)});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return DirsOf(d, "schedule", pid);
}

std::string HostName() {
  char name[256] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  return name;
}

}  // namespace

TEST_CASE("dump-keep: an exported dump ages by record-num as any other, an unexported one stays, another user cannot release it",
          "[dump_keep][security]") {
  if (!atraced::testing::NeedsRoot()) return;
  DaemonProcess d(atraced::testing::ForAttacker({"--hang-timeout", "2s"}));  // record-num 10
  REQUIRE(atraced::testing::StartForAttacker(d));
  HangChild roots(d, {"ATRACE_JOB=JR", "RANK_ID=0", "RANK_SIZE=1"}, {"5", "1"});
  HangChild attackers(d, {"ATRACE_JOB=JA", "RANK_ID=0", "RANK_SIZE=1"}, {"5", "1"}, kAttacker);
  INFO(d.log());
  const auto root_dumps = AwaitDumps(d, roots.pid);
  const auto attacker_dumps = AwaitDumps(d, attackers.pid);
  REQUIRE(root_dumps.size() == 1);
  REQUIRE(attacker_dumps.size() == 1);
  // Nine plain directories after them: the class is over record-num 10, and the count takes
  // the oldest plain one, never a dump. dump-keep keeps both, and STATUS says so.
  for (int i = 0; i < 9; ++i) Emit(d);
  CHECK(CountEventDirs(d.trace_dir(), "schedule") == 10);
  CHECK(KeptLine(d) == "\"dumps\":{\"kept\":2,\"aged_early\":0}");
  CHECK(Has(Ctl(d, {"status"}).out, "dumps kept:        2 (aged early by the byte limits: 0)\n"));
  const RunResult prometheus = Ctl(d, {"status", "--prometheus"});
  CHECK(Has(prometheus.out, "\natraced_dumps_kept 2\n"));
  CHECK(Has(prometheus.out, "\natraced_dumps_aged_early_total 0\n"));
  const std::string root_rel = root_dumps[0].substr(d.trace_dir().size() + 1);

  // The attacker names root's dump: skipped, and the reply says nothing more of it.
  atraced::testing::Attacker attack([&](int out, int) {
    auto c = atraced::testing::RawClient::Connect(d.socket());
    uint64_t granted = 0;
    if (!c || !c->Hello(ATR_FEATURE_DUMPS_EXPORTED, &granted) || !(granted & ATR_FEATURE_DUMPS_EXPORTED)) {
      atraced::testing::Report(out, -1, "no DUMPS_EXPORTED");
      return;
    }
    auto reply = c->Call(ATR_OP_DUMPS_EXPORTED, atraced::testing::Payload(atraced::proto::DumpsExported{{root_rel}}));
    atraced::proto::DumpsExportedReply r;
    if (!reply || reply->status != 0 || !atraced::proto::Decode(reply->body, &r).ok()) {
      atraced::testing::Report(out, reply ? reply->status : -2, "refused");
      return;
    }
    atraced::testing::Report(out, 0, "released=" + std::to_string(r.released) + " skipped=" + std::to_string(r.skipped));
  });
  CHECK(attack.Line() == "0 released=0 skipped=1\n");
  CHECK(IsDir(root_dumps[0]));
  CHECK(KeptLine(d) == "\"dumps\":{\"kept\":2,\"aged_early\":0}");

  atraced::testing::TempDir tmp;
  // An export that fails (the bundle passes --max-size) releases nothing.
  const RunResult failed = Ctl(d, {"export", "--format", "tar", "--job", "JR", "--max-size", "1K", "-o", tmp / "f.tgz"});
  CHECK(failed.exit_code != 0);
  CHECK(IsDir(root_dumps[0]));
  CHECK(KeptLine(d) == "\"dumps\":{\"kept\":2,\"aged_early\":0}");
  // chrome-json is a view, not the evidence: it releases nothing either.
  REQUIRE(Ctl(d, {"export", "--format", "chrome-json", "--job", "JR", "-o", tmp / "v.json"}).exit_code == 0);
  CHECK(KeptLine(d) == "\"dumps\":{\"kept\":2,\"aged_early\":0}");

  // The attacker's job is exported (by root: `tar -C` needs to read the trace directory,
  // which grants other users passage only): its dump is released. The class is at
  // record-num, so it stays until the count asks; the next directory ages it, the oldest not
  // kept, while root's older dump, not exported, stays.
  const RunResult exported = Ctl(d, {"export", "--format", "tar", "--job", "JA", "-o", tmp / "a.tgz"});
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(Has(exported.err, "1 dump directory released from dump-keep"));
  CHECK(IsDir(attacker_dumps[0]));
  CHECK(KeptLine(d) == "\"dumps\":{\"kept\":1,\"aged_early\":0}");
  Emit(d);
  const auto deadline = SteadyClock::now() + std::chrono::seconds(30);
  while (IsDir(attacker_dumps[0]) && SteadyClock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(IsDir(attacker_dumps[0]));
  CHECK(IsDir(root_dumps[0]));
  CHECK(KeptLine(d) == "\"dumps\":{\"kept\":1,\"aged_early\":0}");
  CHECK(d.LogHas("export: uid 0 exported 1 dump dir(s)"));
}

TEST_CASE("aged dump: the byte budget takes rank 1's dump before the export, hang names it aged with the reason, "
          "rank 3 that never ran stays missing, across a restart",
          "[hang][dump_keep][aged]") {
  if (!atraced::testing::NeedsRoot()) return;
  DaemonProcess a(atraced::testing::ForAttacker({"--max-use", "3M"}));
  REQUIRE(atraced::testing::StartForAttacker(a));
  DaemonProcess b;
  REQUIRE(b.Start());
  HangChild rank1(a, {"ATRACE_JOB=J1", "RANK_ID=1", "RANK_SIZE=4"}, {"20", "1"});
  HangChild rank0(a, {"ATRACE_JOB=J1", "RANK_ID=0", "RANK_SIZE=4"}, {"20", "1"});
  HangChild rank2(b, {"ATRACE_JOB=J1", "RANK_ID=2", "RANK_SIZE=4"}, {"20", "1"});
  INFO(a.log());

  // Rank 1's dump, then plain directories until the byte budget has taken it (the oldest).
  const std::vector<std::string> dump1 = DumpOf(a, rank1.pid);
  REQUIRE(dump1.size() == 1);
  const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (IsDir(dump1[0]) && SteadyClock::now() < deadline) Emit(a, 1u << 20);
  REQUIRE_FALSE(IsDir(dump1[0]));
  CHECK(a.WaitForLog("before dump-keep ran out (reason=bytes)"));
  const std::vector<std::string> dump0 = DumpOf(a, rank0.pid);
  REQUIRE(dump0.size() == 1);
  REQUIRE(Ctl(b, {"dump", "--job", "J1"}).exit_code == 0);

  atraced::testing::TempDir tmp;
  const RunResult exported = Ctl(a, {"export", "--format", "tar", "--job", "J1", "-o", tmp / "a.tgz"});
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(Has(exported.err, "1 dump(s) of the job(s) were aged by the daemon before this export"));
  REQUIRE(Ctl(b, {"export", "--format", "tar", "--job", "J1", "-o", tmp / "b.tgz"}).exit_code == 0);

  const RunResult text = Run({ATRACECTL_BINARY, "hang", tmp / "a.tgz", tmp / "b.tgz"});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Ranks seen: 0,2 of 4 (world size)\n"));
  CHECK(Has(text.out, "Aged ranks: 1 on " + HostName() + ": their dumps were removed by the byte budget (max-use) at "));
  CHECK(Has(text.out, ", before export. Raise max-use in atraced.conf, or export sooner after a dump.\n"));
  CHECK(Has(text.out, "Missing ranks: 3: expected by the world size"));
  const RunResult json = Run({ATRACECTL_BINARY, "hang", "--json", tmp / "a.tgz", tmp / "b.tgz"});
  REQUIRE(json.exit_code == 0);
  const std::string rel = dump1[0].substr(a.trace_dir().size() + 1);
  CHECK(Has(json.out, "\"missing\":\"3\",\"missing_count\":1,\"aged\":[{\"rank\":1,\"host\":\"" + HostName() +
                          "\",\"reason\":\"bytes\","));
  CHECK(Has(json.out, "\"exported\":false,\"uid\":0,\"dir\":\"" + rel + "\"}]"));

  // Another user asks for the aged dumps: root's are not theirs, and not even counted.
  atraced::testing::Attacker attack([&](int out, int) {
    auto c = atraced::testing::RawClient::Connect(a.socket());
    uint64_t granted = 0;
    if (!c || !c->Hello(ATR_FEATURE_AGED_DUMPS, &granted) || !(granted & ATR_FEATURE_AGED_DUMPS)) {
      atraced::testing::Report(out, -1, "no AGED_DUMPS");
      return;
    }
    auto reply = c->Call(ATR_OP_AGED_DUMPS, atraced::testing::Payload(atraced::proto::ListLive{}));
    atraced::proto::AgedDumpsReply r;
    if (!reply || reply->status != 0 || !atraced::proto::Decode(reply->body, &r).ok()) {
      atraced::testing::Report(out, reply ? reply->status : -2, "refused");
      return;
    }
    atraced::testing::Report(out, 0, "count=" + std::to_string(r.entries.size()) + " omitted=" + std::to_string(r.omitted));
  });
  CHECK(attack.Line() == "0 count=0 omitted=0\n");

  // The daemon keeps the evidence across a restart (its order log's 'a' record).
  REQUIRE(a.Stop() == 0);
  REQUIRE(atraced::testing::StartForAttacker(a));
  const RunResult again = Ctl(a, {"export", "--format", "tar", "--job", "J1", "-o", tmp / "a2.tgz"});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  const RunResult after = Run({ATRACECTL_BINARY, "hang", tmp / "a2.tgz", tmp / "b.tgz"});
  INFO(after.out << after.err);
  CHECK(Has(after.out, "Aged ranks: 1 on " + HostName() + ": their dumps were removed by the byte budget (max-use) at "));
  CHECK_FALSE(Has(after.out, "Missing ranks: 1"));
}
