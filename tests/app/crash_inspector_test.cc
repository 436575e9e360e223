// ProcCrashInspector against real processes: a forked child of this test plays the crashed
// client (the helper, a descendant of this process, may ptrace it as root or with the same
// uid). Not this process's own thread: it is inside posix_spawn while the helper attaches.
// The shell helpers are stand-ins where a case needs a helper that hangs or dies.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "atraced/crash/proc_crash_inspector.h"
#include "support/temp_dir.h"

using atraced::crash::ProcCrashInspector;
using atraced::testing::TempDir;

namespace {

std::string Script(const TempDir& dir, const std::string& body) {
  const std::string path = dir.path() + "/helper.sh";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

}  // namespace

TEST_CASE("crash inspector: threads, maps and a backtrace of a live thread", "[crash][inspector]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child, child, ::getuid(), ::getgid()}, std::chrono::seconds(10));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  INFO(facts.backtrace);
  CHECK(facts.threads.find(std::to_string(child) + " app_tests") == 0);
  CHECK(facts.maps.find("app_tests") != std::string::npos);
  // pause() at the top, main at the bottom.
  CHECK(facts.backtrace.find("#0 ") == 0);
  CHECK(facts.backtrace.find("pause") != std::string::npos);
  CHECK(facts.backtrace.find(" main+0x") != std::string::npos);
}

TEST_CASE("crash inspector: all threads, when configured, after the crashing one", "[crash][inspector]") {
  int tids[2];
  REQUIRE(::pipe(tids) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the main thread "crashed"; a second one waits elsewhere
    std::thread([fd = tids[1]] {
      const pid_t self = ::gettid();
      (void)!::write(fd, &self, sizeof self);
      for (;;) ::pause();
    }).detach();
    for (;;) ::pause();
  }
  pid_t second = 0;
  REQUIRE(::read(tids[0], &second, sizeof second) == sizeof second);
  ::close(tids[0]);
  ::close(tids[1]);
  ProcCrashInspector inspector(ATRACED_BINARY, "/proc", /*all_threads=*/true);
  const auto facts = inspector.Inspect({child, child, ::getuid(), ::getgid()}, std::chrono::seconds(10));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  INFO(facts.backtrace);
  const size_t other = facts.backtrace.find("\nthread " + std::to_string(second) + ":\n");
  REQUIRE(other != std::string::npos);
  CHECK(facts.backtrace.find(" main+0x") < other);  // the crashing thread first
  CHECK(facts.backtrace.find("#0 ", other) != std::string::npos);
  CHECK(facts.backtrace.find("\nthread " + std::to_string(child) + ":\n") == std::string::npos);
  CHECK(facts.threads.find(std::to_string(second) + " ") != std::string::npos);
}

TEST_CASE("crash inspector: a thread of another process is not unwound", "[crash][inspector]") {
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({::getpid(), 1, ::getuid(), ::getgid()}, std::chrono::seconds(1));  // pid 1 is never our thread
  CHECK(facts.backtrace.find("is not a thread of pid") != std::string::npos);
}

TEST_CASE("crash inspector: a helper that may not trace the process says why", "[crash][inspector]") {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    WARN("needs root and setpriv to run the helper as another uid; skipping");
    return;
  }
  const pid_t child = ::fork();  // root's process; the helper runs as nobody
  REQUIRE(child >= 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  ProcCrashInspector inspector(
      Script(dir, std::string("exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ") + ATRACED_BINARY + " \"$@\""));
  const auto facts = inspector.Inspect({child, child, ::getuid(), ::getgid()}, std::chrono::seconds(10));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("(no backtrace: ") == 0);
  CHECK((facts.backtrace.find("Permission denied") != std::string::npos ||
         facts.backtrace.find("not permitted") != std::string::npos));
  CHECK(facts.maps.find("app_tests") != std::string::npos);  // the daemon itself still read the rest
}

TEST_CASE("crash inspector: a helper that hangs is killed at the deadline", "[crash][inspector]") {
  TempDir dir;
  ProcCrashInspector inspector(Script(dir, "exec sleep 30"));
  const auto start = std::chrono::steady_clock::now();
  const auto facts = inspector.Inspect({::getpid(), ::gettid(), ::getuid(), ::getgid()}, std::chrono::milliseconds(200));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(facts.backtrace.find("took longer than 200 ms") != std::string::npos);
  CHECK(took < std::chrono::milliseconds(1500));
}

TEST_CASE("crash inspector: a helper that dies is reported, not fatal", "[crash][inspector]") {
  TempDir dir;
  ProcCrashInspector inspector(Script(dir, "kill -SEGV $$"));
  const auto facts = inspector.Inspect({::getpid(), ::gettid(), ::getuid(), ::getgid()}, std::chrono::seconds(5));
  CHECK(facts.backtrace.find("died of signal 11") != std::string::npos);
}
