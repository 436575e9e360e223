// Issue 20, against the real binary: an unprivileged user (uid 65534) tries to aim the root
// daemon's crash capture at someone else. Each case needs root to set up (a setuid program, a
// second user, forcing a pid to be reused) and says so where it skips.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "as_user.h"
#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"
#include "support/test_rings.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// HELLO with rings and CRASH, and one registered ring: what libascend_trace's connection
// does. False if any step is refused.
bool RingsAndCrash(RawClient& c) {
  if (!c.Hello(ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH)) return false;
  UniqueFd ring = RingWith({"the attacker's own record"});
  auto r = c.CallWithFd(ATR_OP_RING_REGISTER, RegisterPayload(1), ring.get());
  return r && r->status == 0;
}

// The status and message of a CRASH naming thread `tid` on `c`.
std::pair<int32_t, std::string> Crash(RawClient& c, pid_t tid) {
  auto r = c.Call(ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, tid, 0x10}));
  if (!r) return {1, "no reply"};
  return {r->status, r->message};
}

// Stackcore event dirs under the daemon's trace dir.
std::vector<std::string> StackcoreDirs(const DaemonProcess& d) {
  std::vector<std::string> out;
  if (!IsDir(d.trace_dir())) return out;
  for (const auto& proc : ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(d.trace_dir() + "/" + proc)) {
      if (ev.rfind("stackcore_event_", 0) == 0) out.push_back(d.trace_dir() + "/" + proc + "/" + ev);
    }
  }
  return out;
}

// The euid /proc says `pid` runs with, or -1.
long EffectiveUid(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) == 0) {
      long r = -1, e = -1;
      std::sscanf(line.c_str() + 4, "%ld %ld", &r, &e);
      return e;
    }
  }
  return -1;
}

// The attack of a program exec'd behind a held connection: as the attacker, connects, leaves
// the connection to a child, and execs `program` with argument "30"; the child waits until
// `exec_done(pid)` says the exec happened, registers a ring and sends CRASH for the exec'd
// process. Returns that process's pid and the child's report line.
template <class ExecDone>
std::pair<pid_t, std::string> CrashBehindExec(const DaemonProcess& d, const std::string& program, ExecDone exec_done) {
  int result[2];
  REQUIRE(::pipe(result) == 0);
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    if (!BecomeUser(kAttacker)) ::_exit(90);
    auto c = RawClient::Connect(d.socket());
    if (!c) ::_exit(91);
    const pid_t me = ::getpid();
    if (::fork() == 0) {
      for (int i = 0; i < 500 && !exec_done(me); ++i) std::this_thread::sleep_for(10ms);
      if (!exec_done(me)) {
        Report(result[1], -1, "the exec did not happen");
        ::_exit(0);
      }
      if (!RingsAndCrash(*c)) {
        Report(result[1], -2, "HELLO or RING_REGISTER refused");
        ::_exit(0);
      }
      auto [status, message] = Crash(*c, me);
      Report(result[1], status, message);
      ::_exit(0);
    }
    const std::string name = std::filesystem::path(program).filename();
    ::execl(program.c_str(), name.c_str(), "30", static_cast<char*>(nullptr));
    ::_exit(92);
  }
  ::close(result[1]);
  std::string got = ReadReport(result[0]);
  ::close(result[0]);
  return {parent, got};
}

}  // namespace

TEST_CASE("attack: a setuid-root program exec'd behind a held connection is not unwound",
          "[hardening][security][crash][identity]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to make a setuid-root program and a second user");
    return;
  }
  TempDir bin;
  struct statvfs vfs {};
  REQUIRE(::statvfs(bin.path().c_str(), &vfs) == 0);
  if (vfs.f_flag & ST_NOSUID) {
    WARN("skipped: " << bin.path() << " is mounted nosuid");
    return;
  }
  const std::string setuid_sleep = bin / "setuid-sleep";
  std::filesystem::copy_file("/bin/sleep", setuid_sleep);
  REQUIRE(::chmod(bin.path().c_str(), 0755) == 0);
  REQUIRE(::chown(setuid_sleep.c_str(), 0, 0) == 0);
  REQUIRE(::chmod(setuid_sleep.c_str(), 04755) == 0);
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  const auto [parent, got] = CrashBehindExec(d, setuid_sleep, [](pid_t me) { return EffectiveUid(me) == 0; });
  INFO(got);
  INFO(d.log());
  CHECK(got.rfind(std::to_string(ATR_EPERM) + " CRASH: not inspected: pid " + std::to_string(parent) + " runs with uids 65534/0/0/0", 0) == 0);
  CHECK(got.find("a set-id program is never inspected") != std::string::npos);
  CHECK(StackcoreDirs(d).empty());  // no report of the setuid process, no maps, no backtrace
  CHECK(d.WaitForLog("refused CRASH from pid " + std::to_string(parent)));
  // Killed now, the process the attacker connected as has died without GOODBYE: its death
  // is recorded with the attacker's own ring, and nothing read of the setuid program.
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  REQUIRE(d.WaitForLog("ended without GOODBYE"));
  for (const auto& dir : StackcoreDirs(d)) {
    for (const auto& name : ListNames(dir)) {
      const std::string text = ReadFile(dir + "/" + name);
      // No maps (they would name its path) and no command line of it; its name may show as
      // the program, which /proc/<pid>/stat tells every user anyway.
      CHECK(text.find(setuid_sleep) == std::string::npos);
      CHECK(text.find("setuid-sleep 30") == std::string::npos);
      CHECK(text.find("backtrace of thread") == std::string::npos);
    }
  }
}

TEST_CASE("attack: a reused pid is not unwound, and the dead owner's report reads nothing of the new one",
          "[hardening][security][crash][identity]") {
  if (::geteuid() != 0 || ::access("/proc/sys/kernel/ns_last_pid", W_OK) != 0) {
    WARN("skipped: needs root and a writable /proc/sys/kernel/ns_last_pid to make a pid be reused");
    return;
  }
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  int result[2], go[2], pid_pipe[2];
  REQUIRE(::pipe(result) == 0);
  REQUIRE(::pipe(go) == 0);
  REQUIRE(::pipe(pid_pipe) == 0);
  // The attacker's first process connects (the session is up once STATUS is answered), gives
  // the connection to a child and exits.
  const pid_t first = ::fork();
  REQUIRE(first >= 0);
  if (first == 0) {
    if (!BecomeUser(kAttacker)) ::_exit(90);
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Call(ATR_OP_STATUS, {})) ::_exit(91);
    if (::fork() == 0) {
      // Only the test holds the write ends: when it gives up, these reads end and so does
      // this process (ctest waits for every holder of the test's output).
      ::close(go[1]);
      ::close(pid_pipe[1]);
      ::close(result[0]);
      char byte = 0;
      if (::read(go[0], &byte, 1) != 1) ::_exit(0);
      pid_t victim = 0;
      if (::read(pid_pipe[0], &victim, sizeof victim) != sizeof victim) ::_exit(0);
      if (!c->Hello(ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH)) {
        Report(result[1], -2, "HELLO refused");
        ::_exit(0);
      }
      UniqueFd ring = RingWith({"the attacker's own record"});
      auto reg = c->CallWithFd(ATR_OP_RING_REGISTER, RegisterPayload(1), ring.get());
      if (!reg || reg->status != 0) {
        Report(result[1], -3, "RING_REGISTER refused");
        ::_exit(0);
      }
      auto [status, message] = Crash(*c, victim);
      Report(result[1], status, message);
      ::_exit(0);  // and its connection closes without GOODBYE: a death of the first process
    }
    ::_exit(0);
  }
  ::waitpid(first, nullptr, 0);
  // Another user's process takes the pid: fork until the kernel hands it out again.
  pid_t victim = -1;
  // Other tests fork too on a busy machine: try more than once.
  for (int attempt = 0; attempt < 100 && victim != first; ++attempt) {
    std::ofstream("/proc/sys/kernel/ns_last_pid") << (first - 1);
    victim = ::fork();
    REQUIRE(victim >= 0);
    if (victim == 0) {
      if (::getpid() != first) ::_exit(0);
      if (!BecomeUser(kVictim)) ::_exit(90);
      ::execl("/bin/sleep", "sleep", "31.4159265", static_cast<char*>(nullptr));
      ::_exit(92);
    }
    if (victim != first) ::waitpid(victim, nullptr, 0);
  }
  if (victim != first) {
    ::close(go[1]);  // the attacker's held connection ends unused
    ::close(pid_pipe[1]);
    WARN("skipped: pid " << first << " was not handed out again in 100 forks");
    return;
  }
  // The victim is the other user's `sleep` before the attacker asks (polled: a busy machine
  // may take long to get it there).
  for (auto until = std::chrono::steady_clock::now() + 30s;
       ReadFile("/proc/" + std::to_string(victim) + "/comm") != "sleep\n" && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(10ms);
  }
  (void)!::write(pid_pipe[1], &victim, sizeof victim);
  (void)!::write(go[1], "x", 1);
  ::close(result[1]);
  const std::string got = ReadReport(result[0]);
  INFO(got);
  INFO(d.log());
  CHECK(got.rfind(std::to_string(ATR_EPERM) + " CRASH: not inspected: pid " + std::to_string(first), 0) == 0);
  CHECK(got.find("has exited; its connection is held by another process") != std::string::npos);
  // The held connection closed without GOODBYE: the first process's death is recorded from
  // what was read of it, and nothing of the victim.
  REQUIRE(d.WaitForLog("ended without GOODBYE"));
  const auto dirs = StackcoreDirs(d);
  REQUIRE(dirs.size() == 1);
  std::string report;
  for (const auto& name : ListNames(dirs[0])) {
    if (name.rfind("stackcore_tracer_", 0) == 0) report = ReadFile(dirs[0] + "/" + name);
  }
  INFO(report);
  CHECK(report.find("31.4159265") == std::string::npos);  // the victim's command line
  CHECK(report.find("command line: (not readable)") != std::string::npos);
  CHECK(d.LogHas("not reading its command line and memory cgroup"));
  ::kill(victim, SIGKILL);
  ::waitpid(victim, nullptr, 0);
}

TEST_CASE("attack: three ring-holding connections of one process get one CRASH report, not three",
          "[hardening][security][crash][identity]") {
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  int result[2];
  REQUIRE(::pipe(result) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::geteuid() == 0 && !BecomeUser(kAttacker)) ::_exit(90);
    std::vector<RawClient> conns;
    for (int i = 0; i < 3; ++i) {
      auto c = RawClient::Connect(d.socket());
      if (!c || !RingsAndCrash(*c)) ::_exit(91);
      conns.push_back(std::move(*c));
    }
    std::string statuses;
    for (auto& c : conns) statuses += std::to_string(Crash(c, ::getpid()).first) + ",";
    Report(result[1], 0, statuses);
    ::_exit(0);
  }
  ::close(result[1]);
  const std::string got = ReadReport(result[0]);
  ::waitpid(child, nullptr, 0);
  INFO(got);
  INFO(d.log());
  CHECK(got == "0 0," + std::to_string(ATR_EEXIST) + "," + std::to_string(ATR_EEXIST) + ",\n");
  CHECK(StackcoreDirs(d).size() == 1);
}

// Issue 37, defect 12: "dumpable" was judged by the owner of /proc/<pid>, which the kernel
// leaves as the process's uid (a 0555 directory) while every file under it turns root's.
TEST_CASE("attack: a process that made itself not dumpable gets -EPERM for CRASH and no report",
          "[hardening][security][crash][identity]") {
  if (!NeedsRoot()) return;
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  Attacker attacker([&d](int out, int in) {
    auto c = RawClient::Connect(d.socket());
    if (!c || !RingsAndCrash(*c)) return Report(out, -2, "HELLO or RING_REGISTER refused");
    if (::prctl(PR_SET_DUMPABLE, 0) != 0) return Report(out, -3, "PR_SET_DUMPABLE 0 failed");
    auto [status, message] = Crash(*c, ::gettid());
    Report(out, status, message);
    WaitRelease(in);  // alive, with its connection, while the test looks
  });
  const std::string got = attacker.Line();
  INFO(got);
  INFO(d.log());
  CHECK(got.rfind(std::to_string(ATR_EPERM) + " CRASH: not inspected: pid " + std::to_string(attacker.pid), 0) == 0);
  CHECK(got.find("is not dumpable") != std::string::npos);
  // Refused before the helper ran: no report, no unwind of the uid's budget used.
  CHECK(d.WaitForLog("refused CRASH from pid " + std::to_string(attacker.pid)));
  CHECK(StackcoreDirs(d).empty());
}

TEST_CASE("attack: a program with file capabilities exec'd behind a held connection is not unwound",
          "[hardening][security][crash][identity]") {
  if (!NeedsRoot()) return;
  if (::access("/usr/sbin/setcap", X_OK) != 0 && ::access("/sbin/setcap", X_OK) != 0) {
    WARN("skipped: setcap is not installed (package libcap2-bin)");
    return;
  }
  TempDir bin;
  struct statvfs vfs {};
  REQUIRE(::statvfs(bin.path().c_str(), &vfs) == 0);
  if (vfs.f_flag & ST_NOSUID) {
    WARN("skipped: " << bin.path() << " is mounted nosuid (file capabilities are ignored there)");
    return;
  }
  const std::string cap_sleep = bin / "cap-sleep";
  std::filesystem::copy_file("/bin/sleep", cap_sleep);
  REQUIRE(::chmod(bin.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(cap_sleep.c_str(), 0755) == 0);
  const std::string setcap = "setcap cap_net_raw+ep " + cap_sleep + " 2>&1";
  if (std::system(setcap.c_str()) != 0) {
    WARN("skipped: " << setcap << " failed (a file system without security xattrs?)");
    return;
  }
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  // Its uids stay 65534, but it gains a capability, so the kernel makes it not dumpable.
  const auto [parent, got] = CrashBehindExec(d, cap_sleep, [](pid_t me) {
    std::ifstream in("/proc/" + std::to_string(me) + "/comm");
    std::string name;
    std::getline(in, name);
    return name == "cap-sleep";
  });
  INFO(got);
  INFO(d.log());
  CHECK(got.rfind(std::to_string(ATR_EPERM) + " CRASH: not inspected: pid " + std::to_string(parent), 0) == 0);
  CHECK(got.find("is not dumpable") != std::string::npos);
  CHECK(StackcoreDirs(d).empty());
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
}
