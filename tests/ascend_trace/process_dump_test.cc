// `atracectl dump` against the real daemon (issue 40): a hung libascend_trace process, with
// every signal blocked and two threads deadlocked, has its last records and every thread's
// stack saved from outside, by its own user, and runs on exactly as before; who may dump,
// each bad input, a process that exits or is traced meanwhile, and its death recorded after.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <dirent.h>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/stack_dump_file.h"
#include "crash_util.h"
#include "hardening/as_user.h"
#include "support/raw_client.h"
#include "support/reachable_program.h"
#include "support/subprocess.h"

using namespace crash_test;
using atraced::testing::BecomeUser;
using atraced::testing::ForAttacker;
using atraced::testing::kAttacker;
using atraced::testing::Run;
using atraced::testing::RunOptions;
using atraced::testing::RunResult;

namespace {

using Clock = std::chrono::steady_clock;
constexpr uid_t kOther = 65533;  // another user, in the socket's group (nogroup) so it reaches the daemon

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The /proc/<pid>/status lines a dump must leave as they were.
std::string Unchanging(pid_t pid) {
  const std::string s = ReadText("/proc/" + std::to_string(pid) + "/status");
  std::string out;
  for (const char* key : {"State", "SigBlk", "SigPnd", "ShdPnd", "Threads"}) {
    const size_t at = s.find(std::string("\n") + key + ":");
    out += at == std::string::npos ? "?" : s.substr(at + 1, s.find('\n', at + 1) - at - 1);
    out += "|";
  }
  return out;
}

// The deadlocking program (hang_child.c), started as `uid` (root if 0), once it printed
// "ready"; killed and reaped at scope exit.
struct Hung {
  pid_t pid = -1;
  pid_t ab = 0, ba = 0;  // the deadlocked threads
  bool reaped = false;
  Hung(const DaemonProcess& d, uid_t uid, std::vector<std::string> args = {}) {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    // Another user may not reach the build tree (a checkout under a 0700 directory).
    const atraced::testing::ReachableProgram program =
        uid != 0 ? atraced::testing::Reachable(ASCEND_TRACE_HANG_CHILD)
                 : atraced::testing::ReachableProgram{ASCEND_TRACE_HANG_CHILD, "", ""};
    REQUIRE(program.why_not == "");
    const std::string socket = "ATRACED_SOCKET=" + d.socket(), libraries = program.LibraryPathEntry();
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      if (uid != 0 && !BecomeUser(uid)) ::_exit(90);
      const char* envp[] = {socket.c_str(), "ATRACE_QUIET=1", libraries.empty() ? nullptr : libraries.c_str(), nullptr};
      std::vector<const char*> argv{program.path.c_str()};
      for (const auto& a : args) argv.push_back(a.c_str());
      argv.push_back(nullptr);
      ::execve(argv[0], const_cast<char**>(argv.data()), const_cast<char**>(envp));
      ::_exit(127);
    }
    ::close(out[1]);
    const std::string got = FirstLineOf(out[0]);
    REQUIRE(std::sscanf(got.c_str(), "ready %d %d", &ab, &ba) == 2);
    WaitAsleep();
  }
  ~Hung() {
    if (!reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // Until the main thread and both lockers sleep, blocked (at most 20 s).
  void WaitAsleep() const {
    for (int i = 0; i < 20000; ++i) {
      bool all = true;
      for (pid_t t : {pid, ab, ba}) {
        const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/task/" + std::to_string(t) + "/stat");
        const size_t paren = stat.rfind(')');
        all = all && paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S';
      }
      if (all) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  bool Alive() const { return ::waitpid(pid, nullptr, WNOHANG) == 0; }
};

// atracectl against `d`, as root, as the attacker, or as `uid` with group nogroup (the socket's).
RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args, uid_t uid = 0) {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  RunOptions o;
  if (uid == kAttacker) o.uid = uid;
  // kOther: its own uid, nogroup's gid, so that the 0660 socket lets it in.
  if (uid != 0 && uid != kAttacker) o.as = atraced::testing::Identity{uid, 65534, {}};
  return Run(args, o);
}

size_t ThreadCount(pid_t pid) {
  size_t n = 0;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  while (dirent* e = d ? ::readdir(d) : nullptr) n += e->d_name[0] != '.';
  if (d) ::closedir(d);
  return n;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    out.push_back(text.substr(at, nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

std::string StackReport(const std::string& dir, pid_t pid, const std::string& suffix) {
  for (const auto& name : ListNames(dir)) {
    if (name.rfind("stackcore_tracer_35_" + std::to_string(pid) + "_", 0) == 0 &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return ReadText(dir + "/" + name);
    }
  }
  return "";
}

// The last record of a .txt ring file.
std::string LastRecord(const std::string& path) {
  const auto records = Records(path);
  return records.empty() ? "" : records.back();
}

// The unwind helper of a dump of `pid` is running (the daemon's child).
bool HelperRuns(pid_t pid) {
  DIR* d = ::opendir("/proc");
  bool found = false;
  while (dirent* e = d ? ::readdir(d) : nullptr) {
    const std::string cmdline = ReadText(std::string("/proc/") + e->d_name + "/cmdline");
    std::string flat = cmdline;
    for (char& c : flat) c = c == '\0' ? ' ' : c;
    if (flat.find("--crash-unwind-helper " + std::to_string(pid) + " ") != std::string::npos &&
        flat.find(" live") != std::string::npos) {
      found = true;
      break;
    }
  }
  if (d) ::closedir(d);
  return found;
}

}  // namespace

TEST_CASE("dump: a deadlocked process with every signal blocked gives its records and every stack, and runs on",
          "[dump][process_dump]") {
  if (!atraced::testing::NeedsRoot()) return;
  DaemonProcess d(ForAttacker());
  REQUIRE(atraced::testing::StartForAttacker(d));
  Hung hung(d, kAttacker);
  const std::string before = Unchanging(hung.pid);
  INFO(before);
  CHECK(before.find("SigBlk:\tfffffffe7ffbfeff") != std::string::npos);  // all a program may block
  const RunResult r = Ctl(d, {"dump", std::to_string(hung.pid)}, kAttacker);  // as the process's own user
  INFO(r.out << r.err << d.log());
  REQUIRE(r.exit_code == 0);
  const auto lines = Lines(r.out);
  REQUIRE(lines.size() == 1);
  const std::string dir = lines[0];
  CHECK(dir.find("/schedule_event_" + std::to_string(hung.pid) + "_") != std::string::npos);
  // The last record of both tracers.
  CHECK(LastRecord(dir + "/schedule_tracer_hang_a.txt") == "a record 99");
  CHECK(LastRecord(dir + "/schedule_tracer_hang_b.txt") == "b record 99");
  // A stack per thread, naming the lock functions and the program's own.
  const std::string text = StackReport(dir, hung.pid, ".txt");
  INFO(text);
  CHECK(text.find("dumped by: uid 65534") != std::string::npos);
  CHECK(text.find("Thread 1 (" + std::to_string(hung.pid) + ", ") != std::string::npos);
  const size_t ab = text.find("(" + std::to_string(hung.ab) + ", locker_ab)");
  const size_t ba = text.find("(" + std::to_string(hung.ba) + ", locker_ba)");
  REQUIRE(ab != std::string::npos);
  REQUIRE(ba != std::string::npos);
  const size_t ab_end = text.find("\nThread ", ab + 1);
  const std::string ab_stack = text.substr(ab, ab_end - ab);
  CHECK(ab_stack.find("pthread_mutex_lock") != std::string::npos);
  CHECK(ab_stack.find("take_b_after_a") != std::string::npos);
  CHECK(ab_stack.find("locker_main") != std::string::npos);
  const std::string ba_stack = text.substr(ba, text.find("\nThread ", ba + 1) - ba);
  CHECK(ba_stack.find("take_a_after_b") != std::string::npos);
  CHECK(text.find(" main+0x") != std::string::npos);
  const std::string threads = std::to_string(ThreadCount(hung.pid));  // 3, and a sanitizer's own
  CHECK(text.find("(stacks read one thread at a time: " + threads + " of " + threads + " threads;") != std::string::npos);
  CHECK(text.find("(inspected as uid 65534 gid 65534") != std::string::npos);
  // asys's .bin holds the same report.
  const std::string bin = StackReport(dir, hung.pid, ".bin");
  std::string decoded, why;
  REQUIRE(atraced::proto::DecodeStackDumpFile({reinterpret_cast<const uint8_t*>(bin.data()), bin.size()}, &decoded, &why));
  CHECK(decoded == text);
  // Still alive, still blocked, nothing of its state changed.
  hung.WaitAsleep();
  REQUIRE(hung.Alive());
  CHECK(Unchanging(hung.pid) == before);
  // atracectl info shows the dump's stacks thread by thread.
  const RunResult info = Ctl(d, {"info", std::to_string(hung.pid)});
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("Thread stacks:") != std::string::npos);
  CHECK(info.out.find("take_a_after_b") != std::string::npos);
  // Crash capture afterwards: killed, it still gets its death record (left a zombie until
  // then, so that the daemon reads how it ended).
  REQUIRE(::kill(hung.pid, SIGKILL) == 0);
  REQUIRE(d.WaitForLog("ended without GOODBYE"));  // its report written (the dump's line names the pid too)
  const auto deaths = AwaitStackcore(d, hung.pid);
  REQUIRE(deaths.size() == 1);
  const std::string death = ReportOf(deaths[0], hung.pid, "9");
  INFO(death);
  CHECK(death.find("killed by signal 9 (SIGKILL)") != std::string::npos);
}

TEST_CASE("dump: --json gives the path, pid, threads and rings", "[dump][process_dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Hung hung(d, 0, {"100", "3", "2"});
  const RunResult r = Ctl(d, {"dump", "--json", std::to_string(hung.pid)});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("{\"dumps\":[{\"pid\":" + std::to_string(hung.pid) + ",\"path\":\"" + d.trace_dir()) == 0);
  CHECK(r.out.find("\"threads\":" + std::to_string(ThreadCount(hung.pid)) + ",\"rings\":3,") != std::string::npos);
  CHECK(r.out.find("\"refused\":[],\"omitted\":0}") != std::string::npos);
}

TEST_CASE("dump: another user is refused, named, and root's --all dumps every ring-holding process", "[dump][process_dump]") {
  if (!atraced::testing::NeedsRoot()) return;
  DaemonProcess d(ForAttacker());
  REQUIRE(atraced::testing::StartForAttacker(d));
  Hung users(d, kAttacker);
  Hung roots(d, 0);
  const RunResult other = Ctl(d, {"dump", std::to_string(users.pid)}, kOther);
  INFO(other.out << other.err << d.log());
  CHECK(other.exit_code == 1);
  CHECK(other.out.empty());
  CHECK(other.err.find("pid " + std::to_string(users.pid) + " is uid 65534's; uid 65533 may dump only its own") !=
        std::string::npos);
  CHECK(other.err.find("operation not permitted") != std::string::npos);
  CHECK(Ctl(d, {"dump", "--uid", "65534"}, kOther).err.find("operation not permitted") != std::string::npos);
  CHECK(DirsOf(d, "schedule", users.pid).empty());
  // The user's --all is its own processes; root's is everyone's.
  const RunResult mine = Ctl(d, {"dump", "--all"}, kAttacker);
  CHECK(mine.exit_code == 0);
  CHECK(Lines(mine.out).size() == 1);
  CHECK(mine.out.find("_event_" + std::to_string(users.pid) + "_") != std::string::npos);
  const RunResult all = Ctl(d, {"dump", "--all"});
  INFO(all.out << all.err);
  CHECK(all.exit_code == 0);
  CHECK(Lines(all.out).size() == 2);
  CHECK(DirsOf(d, "schedule", users.pid).size() == 2);
  CHECK(DirsOf(d, "schedule", roots.pid).size() == 1);
  // Filters combine: --comm with --uid.
  const RunResult both = Ctl(d, {"dump", "--comm", "ascend_trace_ha", "--uid", "0"});
  CHECK(both.exit_code == 0);
  CHECK(Lines(both.out).size() == 1);
  CHECK(both.out.find("_event_" + std::to_string(roots.pid) + "_") != std::string::npos);
  CHECK(users.Alive());
  CHECK(roots.Alive());
}

TEST_CASE("dump: bad input says what is wrong", "[dump][process_dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  // A pid that does not exist: one just reaped.
  const pid_t gone = ::fork();
  REQUIRE(gone >= 0);
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const RunResult nonexistent = Ctl(d, {"dump", std::to_string(gone)});
  CHECK(nonexistent.exit_code == 1);
  CHECK(nonexistent.err.find("pid " + std::to_string(gone) + " does not exist") != std::string::npos);
  // A process holding no ring: this test.
  const RunResult no_rings = Ctl(d, {"dump", std::to_string(::getpid())});
  CHECK(no_rings.exit_code == 1);
  CHECK(no_rings.err.find("pid " + std::to_string(::getpid()) + " (") != std::string::npos);
  CHECK(no_rings.err.find("holds no ring here") != std::string::npos);
  const RunResult nothing = Ctl(d, {"dump", "--comm", "no_such_prog"});
  CHECK(nothing.exit_code == 1);
  CHECK(nothing.err.find("no process named no_such_prog holds rings here") != std::string::npos);
  CHECK(Ctl(d, {"dump"}).exit_code == 2);
  CHECK(Ctl(d, {"dump", "12x"}).exit_code == 2);
  CHECK(Ctl(d, {"dump", "5", "--all"}).exit_code == 2);
  CHECK(Ctl(d, {"dump", "--comm", "a/b"}).exit_code == 1);  // the daemon refuses the name
  // Garbage on the wire: refused, the connection still answers.
  auto c = atraced::testing::RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello(ATR_FEATURE_FD_PASSING));
  auto refused = c->Call(ATR_OP_PROCESS_DUMP, std::vector<uint8_t>{1, 2, 3});
  REQUIRE(refused);
  CHECK(refused->status == ATR_ENOTSUP);  // not negotiated
  auto granted = atraced::testing::RawClient::Connect(d.socket());
  REQUIRE(granted);
  REQUIRE(granted->Hello(ATR_FEATURE_PROCESS_DUMP));
  auto short_payload = granted->Call(ATR_OP_PROCESS_DUMP, std::vector<uint8_t>{1, 2, 3});
  REQUIRE(short_payload);
  CHECK(short_payload->status == ATR_EBADMSG);
  std::vector<uint8_t> both;
  atraced::proto::Encode(atraced::proto::ProcessDump{ATR_PROCESS_DUMP_ALL, 0, "", {1}}, both);
  auto invalid = granted->Call(ATR_OP_PROCESS_DUMP, both);
  REQUIRE(invalid);
  CHECK(invalid->status == ATR_EINVAL);
  std::vector<uint8_t> status;
  CHECK(granted->Call(ATR_OP_STATUS, status)->status == 0);
}

TEST_CASE("dump: a process exiting mid-dump still gets its rings saved, and its death recorded", "[dump][process_dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Hung hung(d, 0, {"100", "2", "300"});  // 303 threads: their stacks take a while
  auto dump = std::async(std::launch::async, [&] { return Ctl(d, {"dump", std::to_string(hung.pid)}); });
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (!HelperRuns(hung.pid) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(200));
  REQUIRE(HelperRuns(hung.pid));  // its turn began: its rings are held
  REQUIRE(::kill(hung.pid, SIGKILL) == 0);
  ::waitpid(hung.pid, nullptr, 0);
  hung.reaped = true;
  const RunResult r = dump.get();
  INFO(r.out << r.err << d.log());
  REQUIRE(r.exit_code == 0);
  const std::string dir = Lines(r.out).at(0);
  CHECK(LastRecord(dir + "/schedule_tracer_hang_a.txt") == "a record 99");
  CHECK(LastRecord(dir + "/schedule_tracer_hang_b.txt") == "b record 99");
  CHECK(StackReport(dir, hung.pid, ".txt").find("[stack]") != std::string::npos);
  REQUIRE(d.WaitForLog("ended without GOODBYE"));
  REQUIRE(AwaitStackcore(d, hung.pid).size() == 1);
}

TEST_CASE("dump: a traced process keeps its tracer, its rings are saved and the report says why no stacks",
          "[dump][process_dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Hung hung(d, 0);
  const pid_t tracer = ::fork();
  REQUIRE(tracer >= 0);
  if (tracer == 0) {
    if (::ptrace(PTRACE_SEIZE, hung.pid, nullptr, nullptr) != 0) ::_exit(1);
    for (;;) ::pause();
  }
  for (int i = 0; i < 20000 && ReadText("/proc/" + std::to_string(hung.pid) + "/status").find("TracerPid:\t0\n") !=
                                   std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::string before = Unchanging(hung.pid);
  const RunResult r = Ctl(d, {"dump", std::to_string(hung.pid)});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const std::string dir = Lines(r.out).at(0);
  CHECK(LastRecord(dir + "/schedule_tracer_hang_a.txt") == "a record 99");
  CHECK(StackReport(dir, hung.pid, ".txt").find("is traced by pid " + std::to_string(tracer)) != std::string::npos);
  CHECK(ReadText("/proc/" + std::to_string(hung.pid) + "/status").find("TracerPid:\t" + std::to_string(tracer) + "\n") !=
        std::string::npos);
  CHECK(Unchanging(hung.pid) == before);
  ::kill(tracer, SIGKILL);
  ::waitpid(tracer, nullptr, 0);
}

TEST_CASE("dump: a process of 200+ threads keeps every thread's stack, and the counts say so truthfully",
          "[dump][process_dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Hung hung(d, 0, {"100", "2", "200"});  // 203 threads, and a sanitizer's own
  // Until every extra thread exists: they are started after "ready".
  for (int i = 0; i < 20000 && ThreadCount(hung.pid) < 203; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const size_t threads = ThreadCount(hung.pid);
  REQUIRE(threads >= 203);
  const RunResult r = Ctl(d, {"dump", "--json", std::to_string(hung.pid)});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // The reply's count is the threads in the report, all of them.
  CHECK(r.out.find("\"threads\":" + std::to_string(threads) + ",") != std::string::npos);
  const size_t path_at = r.out.find("\"path\":\"") + 8;
  const std::string dir = r.out.substr(path_at, r.out.find('"', path_at) - path_at);
  const std::string text = StackReport(dir, hung.pid, ".txt");
  REQUIRE(!text.empty());
  // A block per thread of the process, each with its frames and its stop, the last one too.
  const std::string n = std::to_string(threads);
  CHECK(text.find("stacks: " + n + " of " + n + " threads read, one at a time, " + n + " written below;") !=
        std::string::npos);
  size_t blocks = 0, held = 0;
  for (const auto& line : Lines(text)) {
    blocks += line.rfind("Thread ", 0) == 0;
    held += line.rfind("(held stopped ", 0) == 0;
  }
  CHECK(blocks == threads);
  CHECK(held == threads);
  CHECK(text.find("Thread " + n + " (") != std::string::npos);
  CHECK(text.find("(stacks read one thread at a time: " + n + " of " + n + " threads;") != std::string::npos);
  CHECK(text.find("the stacks are cut at") == std::string::npos);
  CHECK(text.find("more threads not read") == std::string::npos);
  // The log line counts what was read and what was written apart, both all.
  CHECK(d.WaitForLog(n + " of " + n + " stacks read, " + n + " written"));
}
