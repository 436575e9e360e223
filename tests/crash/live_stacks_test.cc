// The unwind helper's live mode (atraced/crash/live_stacks.h) against real processes: a
// forked child of this test plays the hung process. Each thread is read alone and let go;
// the child's state, signal mask and pending signals are what they were, and a child that is
// traced or stopped is left alone, with the reason in the report.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "atraced/crash/live_stacks.h"
#include "atraced/crash/proc_crash_inspector.h"

using atraced::CrashTarget;
using atraced::crash::ProcCrashInspector;
using atraced::crash::WhyNoLiveStacks;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The /proc/<pid>/status lines a dump must leave as they were.
std::string Line(const std::string& status, const std::string& key) {
  const size_t at = status.find("\n" + key + ":");
  return at == std::string::npos ? "" : status.substr(at + 1, status.find('\n', at + 1) - at - 1);
}
std::string Unchanging(pid_t pid) {
  const std::string s = ReadAll("/proc/" + std::to_string(pid) + "/status");
  return Line(s, "State") + "|" + Line(s, "SigBlk") + "|" + Line(s, "SigPnd") + "|" + Line(s, "ShdPnd");
}

// The threads of `pid` now.
size_t ThreadCount(pid_t pid) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) ++n;
  return n;
}

// Until `pid` has at least `threads` threads (a sanitizer may add its own) and every one
// sleeps (state S), at most 10 s.
void WaitUntilAllSleep(pid_t pid, size_t threads) {
  for (int i = 0; i < 10000; ++i) {
    size_t sleeping = 0, all = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
      // The state follows the comm's closing parenthesis.
      const std::string stat = ReadAll(entry.path().string() + "/stat");
      const size_t paren = stat.rfind(')');
      ++all;
      if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S') ++sleeping;
    }
    if (all >= threads && sleeping == all) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A child with every signal blocked, its main thread and two more asleep, killed at scope exit.
struct SleepingChild {
  pid_t pid = -1;
  SleepingChild() {
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      sigset_t all;
      sigfillset(&all);
      ::pthread_sigmask(SIG_SETMASK, &all, nullptr);
      for (int i = 0; i < 2; ++i) {
        std::thread([] {
          for (;;) ::pause();
        }).detach();
      }
      for (;;) ::pause();
    }
    WaitUntilAllSleep(pid, 3);
  }
  ~SleepingChild() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

atraced::CrashFacts LiveLook(pid_t pid) {
  ProcCrashInspector inspector(ATRACED_BINARY);
  CrashTarget target{pid, pid, ::getuid(), ::getgid()};
  target.live = true;
  return inspector.Inspect(target, std::chrono::seconds(20));
}

bool Alive(pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) == 0; }

}  // namespace

TEST_CASE("live stacks: every thread, each held alone, leaves state, mask and pending signals unchanged", "[crash][live]") {
  SleepingChild child;
  REQUIRE(::kill(child.pid, SIGUSR1) == 0);  // blocked: it stays pending, and must stay so
  const std::string before = Unchanging(child.pid);
  CHECK(before.find("ShdPnd:\t0000000000000200") != std::string::npos);
  const auto facts = LiveLook(child.pid);
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("Thread 1 (" + std::to_string(child.pid) + ", ") == 0);  // the leader first
  CHECK(facts.backtrace.find("\nThread 3 (") != std::string::npos);
  const size_t threads = ThreadCount(child.pid);  // 3, and a sanitizer's own
  CHECK(facts.thread_count == threads);
  CHECK(facts.stacks_read == threads);
  CHECK(facts.stacks_written == threads);
  CHECK(facts.threads_written == threads);
  CHECK(facts.backtrace.find("pause") != std::string::npos);
  CHECK(facts.backtrace.find(" main+0x") != std::string::npos);
  CHECK(facts.backtrace.find("(stacks read one thread at a time: " + std::to_string(threads) + " of " +
                             std::to_string(threads) + " threads;") != std::string::npos);
  CHECK(facts.max_stop_us > 0);
  REQUIRE(Alive(child.pid));
  CHECK(Unchanging(child.pid) == before);
}

TEST_CASE("live stacks: a process traced by someone else is left alone, and the report says why", "[crash][live]") {
  SleepingChild child;
  const pid_t tracer = ::fork();
  REQUIRE(tracer >= 0);
  if (tracer == 0) {
    if (::ptrace(PTRACE_SEIZE, child.pid, nullptr, nullptr) != 0) ::_exit(1);
    for (;;) ::pause();
  }
  for (int i = 0; i < 10000 && Line(ReadAll("/proc/" + std::to_string(child.pid) + "/status"), "TracerPid") ==
                                    "TracerPid:\t0";
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::string before = Unchanging(child.pid);
  const auto facts = LiveLook(child.pid);
  ::kill(tracer, SIGKILL);
  ::waitpid(tracer, nullptr, 0);
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("is traced by pid " + std::to_string(tracer)) != std::string::npos);
  CHECK(facts.stacks_read == 0);
  CHECK(Alive(child.pid));
  CHECK(Unchanging(child.pid) == before);
}

TEST_CASE("live stacks: a stopped process stays stopped, unread", "[crash][live]") {
  SleepingChild child;
  REQUIRE(::kill(child.pid, SIGSTOP) == 0);
  for (int i = 0; i < 10000 && Unchanging(child.pid).rfind("State:\tT", 0) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::string before = Unchanging(child.pid);
  REQUIRE(before.rfind("State:\tT", 0) == 0);
  const auto facts = LiveLook(child.pid);
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("is stopped (state T)") != std::string::npos);
  CHECK(Unchanging(child.pid) == before);
}

TEST_CASE("live stacks: why a process is not read, from its /proc files", "[crash][live]") {
  const std::string stat_running = "77 (a b) S 1 77 77 0 -1 4194560 0 0";
  CHECK(WhyNoLiveStacks("State:\tS (sleeping)\nTracerPid:\t0\n", stat_running).empty());
  CHECK(WhyNoLiveStacks("State:\tZ (zombie)\nTracerPid:\t0\n", stat_running).find("zombie") != std::string::npos);
  CHECK(WhyNoLiveStacks("State:\tt (tracing stop)\nTracerPid:\t0\n", stat_running).find("stopped (state t)") !=
        std::string::npos);
  CHECK(WhyNoLiveStacks("State:\tS (sleeping)\nTracerPid:\t12\n", stat_running).find("traced by pid 12") !=
        std::string::npos);
  // PF_EXITING (0x4) in the flags, field 9, counted after a comm with ") " in it.
  CHECK(WhyNoLiveStacks("State:\tS (sleeping)\nTracerPid:\t0\n", "77 (a) S) S 1 77 77 0 -1 4194564 0").find("exiting") !=
        std::string::npos);
  CHECK(WhyNoLiveStacks("", stat_running).find("gone") != std::string::npos);
}

TEST_CASE("live stacks: a thread that does not stop is let go, and runs on afterwards", "[crash][live]") {
  // A parent waiting for its vfork child is in the kernel (state D) until the child exits: an
  // interrupt reaches it only then.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::vfork() == 0) {
      ::sleep(3);
      ::_exit(0);
    }
    for (;;) ::pause();
  }
  const std::string stat_path = "/proc/" + std::to_string(child) + "/stat";
  auto state = [&] {
    const std::string stat = ReadAll(stat_path);
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
  };
  for (int i = 0; i < 10000 && state() != 'D'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (state() != 'D') {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    WARN("skipped: the vfork parent was not seen in state D");
    return;
  }
  const auto facts = LiveLook(child);
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("did not stop within 500 ms") != std::string::npos);
  CHECK(facts.stacks_read == 0);
  // The vfork child exits; the parent goes on to pause(), not held by anyone.
  for (int i = 0; i < 20000 && state() != 'S'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(state() == 'S');
  CHECK(ReadAll("/proc/" + std::to_string(child) + "/status").find("TracerPid:\t0\n") != std::string::npos);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}
