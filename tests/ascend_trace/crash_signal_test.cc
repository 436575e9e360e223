// A fatal signal that libascend_trace catches, against the real daemon: the handler sends
// CRASH, the daemon writes the stackcore dir with a backtrace it unwinds from outside, the
// handler re-raises and the process dies of its own signal, as it would without the library.
// Also: the opt-out, and a daemon that is gone or never answers (the wait is bounded).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "atraced/proto/codec.h"
#include "crash_handler.h"
#include "crash_util.h"
#include "support/asys_stackcore.h"
#include "support/sanitizer.h"

using namespace crash_test;

namespace {

using Clock = std::chrono::steady_clock;

// The one stackcore dir of a crashed child, its ring's records, and its report.
std::string CrashReport(const DaemonProcess& d, const Child& child, const std::string& signo, int records) {
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, records));
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_exit.txt") == std::vector<std::string>{"exit record"});
  return ReportOf(dirs[0], child.pid, signo);  // the main thread crashed: tid == pid
}

// True once `pid` blocks `signo`, as the library's handler for it does while it runs (no
// SA_NODEFER): the handler has begun. Asked until then, up to 20 s.
bool InHandlerFor(pid_t pid, int signo) {
  for (const auto until = Clock::now() + std::chrono::seconds(20); Clock::now() < until;) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigBlk:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) >> (signo - 1) & 1)) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("crash signal: a NULL dereference is reported with a backtrace, then kills as SIGSEGV", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "segv", 7);
  RequireDiedOf(child, SIGSEGV);  // the stackcore dir is written before the handler re-raises
  const std::string report = CrashReport(d, child, "11", 7);
  INFO(report);
  CHECK(report.find("signal: 11 (SIGSEGV)\n") != std::string::npos);
  CHECK(report.find("code: 1 (SEGV_MAPERR)\n") != std::string::npos);
  CHECK(report.find("fault address: 0x0000000000000000\n") != std::string::npos);
  CHECK(report.find("thread: " + std::to_string(child.pid) + "\n") != std::string::npos);
  CHECK(report.find(std::string("command line: ") + ASCEND_TRACE_CRASH_CHILD + " segv 7\n") != std::string::npos);
  // CANN's sections, the faulting frame first (the handler's own frames are counted, not
  // listed), with our symbol and source line after asys's four tokens.
  CHECK(report.find("\n[process]\ncrash reason:11\ncrash pid:" + std::to_string(child.pid) + "\n") !=
        std::string::npos);
  CHECK(report.find("frames of libascend_trace's signal handler above the interrupted frame are not listed)\nThread 1 (" +
                    std::to_string(child.pid) + ", ") != std::string::npos);
  CHECK(report.find("\n#0 0x") != std::string::npos);
  CHECK(report.find(" crash_here+0x") != std::string::npos);
  CHECK((report.find(" crash_here+0x") < report.find(" main+0x")));
  CHECK(report.find(" at crash_child.c:") != std::string::npos);
  CHECK((report.find("libascend_trace.so") == std::string::npos ||
        report.find("libascend_trace.so") > report.find("\n[maps]\n")));  // only mapped, not on the stack
  // What asys does with it: every frame resolves through [maps], and addr2line at the first
  // frame's pc - base names crash_here and its line.
  const auto asys = atraced::testing::ParseAsAsys(report);
  INFO(asys.problems.size() << " problem(s), first: " << (asys.problems.empty() ? "" : asys.problems[0]));
  CHECK(asys.problems.empty());
  REQUIRE(asys.frames.size() >= 2);
  CHECK(asys.frames[0].module == ASCEND_TRACE_CRASH_CHILD);
  const auto symbolized = atraced::testing::Addr2LineAsAsys(asys.frames[0]);
  REQUIRE(symbolized.size() >= 2);
  CHECK(symbolized[0] == "crash_here");
  CHECK(symbolized[1].rfind("crash_child.c:", 0) == 0);
  // The connections close without GOODBYE: no second dir for the same death.
  REQUIRE(d.WaitForLog("closed its connection after CRASH"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(DirsOf(d, "stackcore", child.pid).size() == 1);
  CHECK_FALSE(d.LogHas("ended without GOODBYE"));
}

TEST_CASE("crash signal: one line on stderr names the report the daemon wrote, ATRACE_QUIET=1 silences it",
          "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atraced::testing::TempDir tmp;
  Child child(d, "segv", 3, {}, "", tmp / "stderr");
  RequireDiedOf(child, SIGSEGV);
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  std::string report;
  for (const auto& name : ListNames(dirs[0])) {
    if (name.rfind("stackcore_tracer_11_", 0) == 0) report = dirs[0] + "/" + name;
  }
  REQUIRE_FALSE(report.empty());
  // The whole of what the library wrote: one line, the report's absolute path, which holds
  // the crash (written before the reply, so before the line).
  CHECK(ReadFile(tmp / "stderr") == "libascend_trace: crash report written to " + report + "\n");
  CHECK(ReadFile(report).find("signal: 11 (SIGSEGV)\n") != std::string::npos);
  CHECK(d.LogHas(" written to " + report));

  Child quiet(d, "segv", 1, {"ATRACE_QUIET=1"}, "", tmp / "quiet");
  RequireDiedOf(quiet, SIGSEGV);
  REQUIRE(AwaitStackcore(d, quiet.pid).size() == 1);
  CHECK(ReadFile(tmp / "quiet").empty());

  // No reply in time (the daemon stopped): no line, the same death. (A daemon that does not
  // grant ATR_FEATURE_CRASH_PATH replies with an empty body: service_tests checks that.)
  Child unanswered(d, "segv-on-input", 1, {"ASCEND_TRACE_CRASH_WAIT_MS=300"}, "", tmp / "unanswered");
  REQUIRE(::kill(d.pid(), SIGSTOP) == 0);
  REQUIRE(::write(unanswered.input, "x", 1) == 1);
  RequireDiedOf(unanswered, SIGSEGV);
  ::kill(d.pid(), SIGCONT);
  CHECK(ReadFile(tmp / "unanswered").empty());
}

TEST_CASE("crash signal: the core dump is still written after the report", "[crash][signal]") {
#if ATRACED_UNDER_SANITIZER
  WARN("a sanitizer turns core dumps off; skipping");
#else
  if (atraced::testing::ReadFile("/proc/sys/kernel/core_pattern") != "core\n") {
    WARN("kernel.core_pattern is not 'core' (a plain file in the cwd); skipping");
    return;
  }
  DaemonProcess d;
  REQUIRE(d.Start());
  atraced::testing::TempDir cwd;
  Child child(d, "segv", 2, {}, cwd.path());
  const int status = child.Wait();
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  CHECK(WCOREDUMP(status));
  CHECK(atraced::testing::Exists(cwd / "core"));
  CHECK(AwaitStackcore(d, child.pid).size() == 1);
#endif
}

TEST_CASE("crash signal: the application's own earlier handler still runs after the report", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "segv-chained", 2);
  const int status = child.Wait();
  INFO("status " << status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);  // what its handler does
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(ReportOf(dirs[0], child.pid, "11").find(" crash_here+0x") != std::string::npos);
}

TEST_CASE("crash signal: SIGTERM left at its default is reported too, as CANN does", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "wait", 2);
  REQUIRE(::kill(child.pid, SIGTERM) == 0);
  RequireDiedOf(child, SIGTERM);
  const std::string report = CrashReport(d, child, "15", 2);
  INFO(report);
  CHECK(report.find("code: 0 (SI_USER: kill())\n") != std::string::npos);
  CHECK(report.find(" main+0x") != std::string::npos);
}

TEST_CASE("crash signal: abort() is reported with a backtrace, then kills as SIGABRT", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "abort", 3);
  RequireDiedOf(child, SIGABRT);
  const std::string report = CrashReport(d, child, "6", 3);
  INFO(report);
  CHECK(report.find("signal: 6 (SIGABRT)\n") != std::string::npos);
  CHECK(report.find("code: -6 (SI_TKILL") != std::string::npos);
  CHECK(report.find(" abort_here+0x") != std::string::npos);
  // abort() never returns: g++ may move main's call of it into a cold part, main.cold.
  CHECK((report.find(" main+0x") != std::string::npos || report.find(" main.cold+0x") != std::string::npos));
}

TEST_CASE("crash signal: ASCEND_COREDUMP_SIGNAL=none leaves the default disposition", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "segv", 2, {"ASCEND_COREDUMP_SIGNAL=none"});
  // Only the death without GOODBYE is seen: no CRASH, so no backtrace. Reaped only after the
  // daemon has read the zombie's status (it names the signal then).
  const std::string report = CrashReport(d, child, "11", 2);
  RequireDiedOf(child, SIGSEGV);
  INFO(report);
  CHECK(report.find("ended without GOODBYE") != std::string::npos);
  CHECK(report.find("backtrace") == std::string::npos);
  CHECK_FALSE(d.LogHas("caught signal"));
}

TEST_CASE("crash signal: with the daemon gone the handler re-raises at once", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  // A wait bound far over the check's, so "at once" is told from "after the bound" however
  // slow the machine is.
  Child child(d, "segv-on-input", 1, {"ASCEND_TRACE_CRASH_WAIT_MS=30000"});
  REQUIRE(d.Stop(SIGKILL));
  const auto start = Clock::now();
  REQUIRE(::write(child.input, "x", 1) == 1);
  RequireDiedOf(child, SIGSEGV);
  CHECK(Clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("crash signal: a daemon that never answers costs the wait bound, no more", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "segv-on-input", 1, {"ASCEND_TRACE_CRASH_WAIT_MS=2000"});
  REQUIRE(::kill(d.pid(), SIGSTOP) == 0);  // connected, but nobody reads
  const auto start = Clock::now();
  REQUIRE(::write(child.input, "x", 1) == 1);
  RequireDiedOf(child, SIGSEGV);
  const auto took = Clock::now() - start;
  ::kill(d.pid(), SIGCONT);
  CHECK(took >= std::chrono::milliseconds(1950));
  CHECK(took < std::chrono::milliseconds(2000 + 8000));  // the bound, and a loaded machine's margin
}

TEST_CASE("crash signal: two threads faulting at once make one report and one death", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "two-threads", 4, {"ASCEND_TRACE_CRASH_WAIT_MS=30000"});
  const auto start = Clock::now();
  RequireDiedOf(child, SIGSEGV);
  CHECK(Clock::now() - start < std::chrono::seconds(10));  // the waiting thread never waits its full bound
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 4));
  REQUIRE(d.WaitForLog("closed its connection after CRASH"));
  CHECK(DirsOf(d, "stackcore", child.pid).size() == 1);
}

TEST_CASE("crash signal: a second signal inside the handler dies at once, no deadlock", "[crash][signal]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "segv-on-input", 1, {"ASCEND_TRACE_CRASH_WAIT_MS=30000"});
  REQUIRE(::kill(d.pid(), SIGSTOP) == 0);  // the handler waits for a reply that does not come
  REQUIRE(::write(child.input, "x", 1) == 1);
  REQUIRE(InHandlerFor(child.pid, SIGSEGV));
  const auto start = Clock::now();
  REQUIRE(::kill(child.pid, SIGBUS) == 0);  // lands in the only thread, inside the SIGSEGV handler
  RequireDiedOf(child, SIGBUS);
  const auto took = Clock::now() - start;
  ::kill(d.pid(), SIGCONT);
  CHECK(took < std::chrono::seconds(10));  // not the 30 s wait
}

TEST_CASE("crash signal: the handler's hand-built frame is the codec's CRASH frame", "[crash][signal]") {
  unsigned char frame[ascend_trace::kCrashFrameSize];
  ascend_trace::BuildCrashFrame(SIGBUS, 2, 4321, 0xfedcba9876543210ull, 0x01020304, frame);
  std::vector<uint8_t> payload, expected;
  atraced::proto::Encode(atraced::proto::Crash{SIGBUS, 2, 4321, 0xfedcba9876543210ull}, payload);
  atraced::proto::AppendFrame(expected, ATR_OP_CRASH, 0, 0x01020304, payload);
  CHECK(std::vector<uint8_t>(frame, frame + sizeof frame) == expected);
}

TEST_CASE("crash signal: a second thread that overflows its stack is still reported", "[crash][signal][altstack]") {
  // The thread's first API call gave it an alternate signal stack: the handler runs there
  // although the thread's own stack is exhausted.
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "thread-overflow", 3);
  RequireDiedOf(child, SIGSEGV);
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  std::vector<std::string> expected = Expected(0, 3);
  expected.push_back("thread record");
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == expected);
  const std::string report = ThreadReportOf(dirs[0], "11");
  INFO(report);
  CHECK(report.find("caught a fatal signal\n") != std::string::npos);  // CRASH, not a death without GOODBYE
  CHECK(report.find("signal: 11 (SIGSEGV)\n") != std::string::npos);
  CHECK(report.find("thread: " + std::to_string(child.pid) + "\n") == std::string::npos);  // not the main thread
  CHECK(report.find(" overflow_here+0x") != std::string::npos);
}

TEST_CASE("crash signal: SIGHUP applies crash-all-threads to the next crash", "[crash][signal][altstack]") {
  using atraced::testing::TempDir;
  using atraced::testing::WriteFile;
  // thread-overflow: a second thread crashes while the main thread waits in pthread_join, so
  // the main thread is the "other" thread whose backtrace crash-all-threads adds.
  TempDir conf;
  WriteFile(conf / "a.conf", "crash-all-threads = 0\n");
  DaemonProcess d(DaemonProcess::Options({"--config", conf / "a.conf"}));
  REQUIRE(d.Start());
  auto report_of = [&](const Child& child) {
    auto dirs = AwaitStackcore(d, child.pid);
    REQUIRE(dirs.size() == 1);
    for (const auto& name : ListNames(dirs[0])) {
      if (name.rfind("stackcore_tracer_11_", 0) == 0) return ReadFile(dirs[0] + "/" + name);
    }
    FAIL("no stackcore report in " << dirs[0]);
    return std::string();
  };
  Child first(d, "thread-overflow", 1);
  RequireDiedOf(first, SIGSEGV);
  const std::string before = report_of(first);
  INFO(before);
  CHECK(before.find(" overflow_here+0x") != std::string::npos);
  CHECK(before.find("\nThread 2 (") == std::string::npos);

  WriteFile(conf / "a.conf", "crash-all-threads = 1\n");
  d.Signal(SIGHUP);
  REQUIRE(d.WaitForLog("crash-all-threads 1"));
  Child second(d, "thread-overflow", 1);
  RequireDiedOf(second, SIGSEGV);
  const std::string after = report_of(second);
  INFO(after);
  CHECK(after.find(" overflow_here+0x") != std::string::npos);
  CHECK(after.find("\nThread 2 (" + std::to_string(second.pid) + ", ") != std::string::npos);  // the main thread too
  CHECK(atraced::testing::ParseAsAsys(after).problems.empty());
}

TEST_CASE("crash signal: a thread crashing after the main thread has exited is reported with a backtrace and maps",
          "[crash][signal]") {
  // The thread-group leader is then a zombie: the kernel refuses /proc/<pid>/maps, root and
  // mem, so the helper reads them through the crashing thread's /proc/<pid>/task/<tid>.
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "main-exits", 2);
  RequireDiedOf(child, SIGSEGV);
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  const std::string report = ThreadReportOf(dirs[0], "11");
  INFO(report);
  CHECK(report.find("caught a fatal signal\n") != std::string::npos);
  CHECK(report.find("thread: " + std::to_string(child.pid) + "\n") == std::string::npos);  // not the main thread
  CHECK(report.find("cannot read the modules") == std::string::npos);
  CHECK(report.find(" crash_here+0x") != std::string::npos);
  CHECK(report.find(" crash_after_main_exits+0x") != std::string::npos);
  const size_t maps = report.find("\n[maps]\n");
  REQUIRE(maps != std::string::npos);
  CHECK(report.find(ASCEND_TRACE_CRASH_CHILD, maps) != std::string::npos);  // not empty: the child's image is mapped
}
