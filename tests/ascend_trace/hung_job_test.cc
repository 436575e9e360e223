// A hung job end to end (issue 41): three daemons on three roots stand for three hosts; six
// CANN-API rank processes (hang_child.c: every signal blocked, two threads deadlocked), two
// per host, labelled by their environment (RANK_ID 0-5, RANK_SIZE, ATRACE_JOB=J1); ranks 0-4
// wait in one place, rank 5 in another. Then, per host, `atracectl dump --job J1` and
// `atracectl export --format tar --job J1`, and `atracectl hang` over the three bundles.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/codec.h"
#include "crash_util.h"
#include "support/raw_client.h"
#include "support/reachable_program.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/test_users.h"

using namespace crash_test;
using atraced::testing::BecomeUser;
using atraced::testing::Identity;
using atraced::testing::Reachable;
using atraced::testing::ReachableProgram;
using atraced::testing::Run;
using atraced::testing::RunResult;
using atraced::testing::TempDir;
using atraced::testing::TestUsers;

namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One rank: hang_child with the job's environment, once it printed "ready" and its main
// thread sleeps; killed and reaped at scope exit.
struct Rank {
  pid_t pid = -1;
  // As `who` when given (another user may not reach the build tree: the program is staged).
  Rank(const DaemonProcess& d, int rank, int world_size, bool elsewhere, const Identity* who = nullptr) {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    const ReachableProgram program =
        who != nullptr ? Reachable(ASCEND_TRACE_HANG_CHILD) : ReachableProgram{ASCEND_TRACE_HANG_CHILD, "", ""};
    REQUIRE(program.why_not == "");
    const std::string libraries = program.LibraryPathEntry();
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      if (who != nullptr && !BecomeUser(*who)) ::_exit(90);
      const std::string socket = "ATRACED_SOCKET=" + d.socket(), rank_id = "RANK_ID=" + std::to_string(rank),
                        size = "RANK_SIZE=" + std::to_string(world_size);
      std::vector<const char*> envp{socket.c_str(), "ATRACE_QUIET=1", "ATRACE_JOB=J1", rank_id.c_str(), size.c_str()};
      if (elsewhere) envp.push_back("HANG_MAIN_ELSEWHERE=1");
      if (!libraries.empty()) envp.push_back(libraries.c_str());
      envp.push_back(nullptr);
      const char* argv[] = {program.path.c_str(), "20", "1", nullptr};
      ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp.data()));
      ::_exit(127);
    }
    ::close(out[1]);
    const std::string got = FirstLineOf(out[0]);
    REQUIRE(got.rfind("ready ", 0) == 0);
    // Until the main thread sleeps in its join (at most 30 s).
    for (int i = 0; i < 30000; ++i) {
      const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
      const size_t paren = stat.rfind(')');
      if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S') break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~Rank() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

RunResult Ctl(std::vector<std::string> args) {
  args.insert(args.begin(), ATRACECTL_BINARY);
  return Run(args);
}

// The whole runbook over a job of six ranks labelled with `world_size`: the three bundles.
std::string HangJson(const TempDir& tmp, int world_size, std::string* text) {
  std::vector<std::unique_ptr<DaemonProcess>> hosts;
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int h = 0; h < 3; ++h) {
    hosts.push_back(std::make_unique<DaemonProcess>());
    REQUIRE(hosts.back()->Start());
  }
  for (int r = 0; r < 6; ++r) ranks.push_back(std::make_unique<Rank>(*hosts[static_cast<size_t>(r / 2)], r, world_size, r == 5));
  std::vector<std::string> bundles;
  for (int h = 0; h < 3; ++h) {
    const std::string socket = hosts[static_cast<size_t>(h)]->socket();
    auto dump = Ctl({"--socket", socket, "dump", "--job", "J1"});
    INFO(dump.err);
    REQUIRE(dump.exit_code == 0);
    bundles.push_back(tmp / ("host" + std::to_string(h) + ".tar.gz"));
    auto exported = Ctl({"--socket", socket, "export", "--format", "tar", "--job", "J1", "-o", bundles.back()});
    INFO(exported.err);
    REQUIRE(exported.exit_code == 0);
  }
  auto hang = Ctl({"hang", bundles[0], bundles[1], bundles[2]});
  INFO(hang.err);
  REQUIRE(hang.exit_code == 0);
  *text = hang.out;
  auto json = Ctl({"hang", "--json", bundles[0], bundles[1], bundles[2]});
  REQUIRE(json.exit_code == 0);
  return json.out;
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// As `who`, a process of its own that says it is rank `rank` of job J1 (LABELS) and writes a
// stackcore-form file itself (EVENT_BEGIN, FILE_OPEN STACKCORE, FILE_APPEND): `report` with
// every "(" + `copied_pid` + "," of its thread lines made its own pid's. Returns the file's
// path and the writer's pid ("error: ..." on a refusal).
std::string ForgeStackReport(const DaemonProcess& d, const Identity& who, int rank, const std::string& report,
                             pid_t copied_pid, pid_t* writer) {
  namespace proto = atraced::proto;
  using atraced::testing::Payload;
  using atraced::testing::RawClient;
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    auto say = [&](const std::string& line) {
      const std::string out = line + "\n";
      (void)!::write(p[1], out.data(), out.size());
      ::_exit(0);
    };
    if (!BecomeUser(who)) say("error: not the user");
    std::string forged = report;
    const std::string from = "(" + std::to_string(copied_pid) + ",", to = "(" + std::to_string(::getpid()) + ",";
    for (size_t at = forged.find(from); at != std::string::npos; at = forged.find(from, at + to.size())) {
      forged.replace(at, from.size(), to);
    }
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Hello(ATR_FEATURE_LABELS)) say("error: hello");
    const auto labelled = c->Call(ATR_OP_LABELS, Payload(proto::LabelsRequest{{"J1", std::to_string(rank), "4"}, ""}));
    if (!labelled || labelled->status != 0) say("error: labels");
    proto::EventBegin begin{1, ATR_EVENT_STACKCORE, ATR_SIDE_HOST, 0, 0, ""};
    const auto begun = c->Call(ATR_OP_EVENT_BEGIN, Payload(begin));
    if (!begun || begun->status != 0) say("error: event begin");
    proto::FileOpen open{1, 1, ATR_FILE_STACKCORE, 0, 0, 35, ::getpid(), "", ""};
    const auto opened = c->Call(ATR_OP_FILE_OPEN, Payload(open));
    if (!opened || opened->status != 0) say("error: file open");
    proto::FileAppend append{1, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(forged.data()), forged.size())};
    const auto appended = c->Call(ATR_OP_FILE_APPEND, Payload(append));
    if (!appended || appended->status != 0) say("error: append");
    const auto ended = c->Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}));
    if (!ended || ended->status != 0) say("error: event end");
    proto::PathReply path;
    if (!proto::Decode(opened->body, &path).ok()) say("error: reply");
    say(path.path);
  }
  ::close(p[1]);
  const std::string line = FirstLineOf(p[0]);  // closes it
  ::waitpid(pid, nullptr, 0);
  *writer = pid;
  return line.empty() ? line : line.substr(0, line.size() - 1);
}

// The daemon's dump report (stackcore_tracer_35_*.txt) of `pid` under `trace_dir`.
std::string DumpReportOf(const std::string& trace_dir, pid_t pid) {
  const std::string mark = "_" + std::to_string(pid) + "_";
  for (const std::string& proc : atraced::testing::ListNames(trace_dir)) {
    if (proc.rfind("trace_", 0) != 0 || proc.find(mark) == std::string::npos) continue;
    for (const std::string& event : atraced::testing::ListNames(trace_dir + "/" + proc)) {
      for (const std::string& file : atraced::testing::ListNames(trace_dir + "/" + proc + "/" + event)) {
        if (file.rfind("stackcore_tracer_35_", 0) == 0 && file.size() > 4 && file.compare(file.size() - 4, 4, ".txt") == 0) {
          return trace_dir + "/" + proc + "/" + event + "/" + file;
        }
      }
    }
  }
  FAIL("no dump report of pid " << pid << " under " << trace_dir);
  return "";
}

}  // namespace

TEST_CASE("hung job: dump --job and export --job on three hosts, hang names rank 5 apart from ranks 0-4",
          "[hang][dump][labels]") {
  TempDir tmp;
  std::string text;
  const std::string json = HangJson(tmp, 6, &text);
  INFO(text);
  CHECK(Has(json, "\"ranks_expected\":\"0-5\",\"world_size\":6,\"world_size_claims\":{\"6\":6},"));
  CHECK(Has(json, "\"ranks_seen\":[0,1,2,3,4,5],\"missing\":\"\",\"missing_count\":0,\"aged\":[],\"conflicts\":[],"));
  CHECK(Has(json, "\"classes\":[{\"ranks\":[5],\"ranges\":\"5\",\"count\":1,\"stack\":["));
  CHECK(Has(json, "{\"ranks\":[0,1,2,3,4],\"ranges\":\"0-4\",\"count\":5,\"stack\":["));
  CHECK(Has(json, "\"outliers\":[5],"));
  CHECK(Has(json, "\"job_uid\":" + std::to_string(::getuid()) + ","));  // bundle.jsonl's uid, from LIST
  CHECK(Has(text, "Likely culprits: ranks 5:"));
  CHECK(Has(text, "join_elsewhere"));
  CHECK(Has(text, "[0-5] locker_main"));  // every rank's deadlocked threads, in the tree
  CHECK(Has(json, "\"hang_a\":{\"ts_us\":"));  // each rank's last record of its tracer
}

TEST_CASE("hung job: with RANK_SIZE 7 rank 6 is named missing", "[hang][dump][labels]") {
  TempDir tmp;
  std::string text;
  const std::string json = HangJson(tmp, 7, &text);
  CHECK(Has(json, "\"missing\":\"6\",\"missing_count\":1,"));
  CHECK(Has(text, "Missing ranks: 6: expected by the world size, in no bundle."));
  CHECK(Has(text, "This report cannot decide where dumps are missing"));
}

TEST_CASE("hung job: another user's process that says it is rank 3 and writes its own stack report hides no culprit, "
          "and hang says what it ignored",
          "[hang][dump][labels][security]") {
  // Ranks 0-3 of user A on two hosts, rank 3 stuck elsewhere. On host A, user B's process
  // labels itself rank 3 and writes a stackcore-form file of its own, in the daemon's form,
  // copied from rank 0's dump: its main thread where the others are.
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  TempDir tmp;
  std::vector<std::unique_ptr<DaemonProcess>> hosts;
  for (int h = 0; h < 2; ++h) {
    hosts.push_back(std::make_unique<DaemonProcess>(atraced::testing::ReadersDaemon(u)));
    REQUIRE(atraced::testing::StartReachable(*hosts.back()));
  }
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(std::make_unique<Rank>(*hosts[static_cast<size_t>(r / 2)], r, 4, r == 3, &u.a.id));
  auto dump = Ctl({"--socket", hosts[0]->socket(), "dump", "--job", "J1"});
  INFO(dump.err);
  REQUIRE(dump.exit_code == 0);
  REQUIRE(Ctl({"--socket", hosts[1]->socket(), "dump", "--job", "J1"}).exit_code == 0);
  // Rank 0's report as the daemon wrote it; B's copy of it, in B's own directory on host A.
  const std::string rank0 = ReadText(DumpReportOf(hosts[0]->trace_dir(), ranks[0]->pid));
  REQUIRE(Has(rank0, "[stack]"));
  pid_t attacker = 0;
  const std::string forged = ForgeStackReport(*hosts[0], u.b.id, 3, rank0, ranks[0]->pid, &attacker);
  INFO(forged);
  REQUIRE(forged.rfind("/", 0) == 0);
  std::vector<std::string> bundles;
  for (int h = 0; h < 2; ++h) {
    bundles.push_back(tmp / ("host" + std::to_string(h) + ".tar.gz"));
    auto exported = Ctl({"--socket", hosts[static_cast<size_t>(h)]->socket(), "export", "--format", "tar", "--job", "J1",
                         "-o", bundles.back()});
    INFO(exported.err);
    REQUIRE(exported.exit_code == 0);
  }
  // The bundle says who made each directory: B's is a client's, the dumps the daemon's.
  const RunResult meta = Run({"tar", "-xzOf", bundles[0], "bundle.jsonl"});
  REQUIRE(meta.exit_code == 0);
  INFO(meta.out);
  const std::string b_uid = std::to_string(u.b.id.uid);
  CHECK(std::regex_search(meta.out, std::regex("\"pid\":" + std::to_string(attacker) + ",[^\\n]*\"uid\":" + b_uid +
                                               ",[^\\n]*\"made_by\":\"client\"")));
  CHECK(std::regex_search(meta.out, std::regex("\"pid\":" + std::to_string(ranks[0]->pid) +
                                               ",[^\\n]*\"made_by\":\"daemon\"")));
  auto hang = Ctl({"hang", bundles[0], bundles[1]});
  INFO(hang.out << hang.err);
  REQUIRE(hang.exit_code == 0);
  CHECK(Has(hang.out, "Likely culprits: ranks 3:"));
  CHECK(Has(hang.out, "join_elsewhere"));
  CHECK_FALSE(Has(hang.out, "Every rank with stacks has its main thread in the same place"));
  CHECK(Has(hang.out, "Rank 3 is claimed by 2 processes:"));
  CHECK(Has(hang.out, "Ignored as unverified: stack reports a process wrote into its own directory (not a dump the "
                      "daemon took), left out of the classes:\n  rank 3 (uid " + b_uid + ", "));
  CHECK(Has(hang.out, "pid " + std::to_string(attacker) + "): 1 file(s); not the process used for rank 3. Its main thread, "
                      "by its word: "));
  auto json = Ctl({"hang", "--json", bundles[0], bundles[1]});
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"outliers\":[3],"));
  CHECK(Has(json.out, "\"unverified_stacks\":[{\"rank\":3,\"uid\":" + b_uid + ","));
  CHECK(Has(json.out, "\"pid\":" + std::to_string(attacker) + ",\"files\":1,\"used_for_rank\":false,"));
}
