// Death without GOODBYE against the real daemon: a process using libascend_trace is
// SIGKILLed, or calls _exit(3); the daemon writes a stackcore dir with its rings and a report.
// A normal exit writes the exit dir and no stackcore dir.
#include <fcntl.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "atrace_pub.h"
#include "atraced/base/send_fd.h"
#include "atraced/proto/codec.h"
#include "ring_test_util.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

using atraced::testing::DaemonProcess;
using atraced::testing::RawClient;
using atraced::testing::ListNames;
using atraced::testing::ReadFile;

namespace {

// The child, started with $ATRACED_SOCKET pointing at `d`, once it printed "ready".
struct Child {
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;

  Child(const DaemonProcess& d, const std::string& mode, int records) {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    const std::string env_socket = "ATRACED_SOCKET=" + d.socket();
    const std::string count = std::to_string(records);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      const char* argv[] = {ASCEND_TRACE_CRASH_CHILD, mode.c_str(), count.c_str(), nullptr};
      const char* envp[] = {env_socket.c_str(), nullptr};
      ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string got;
    pollfd p{out[0], POLLIN, 0};
    char buf[16];
    while (got.find('\n') == std::string::npos && ::poll(&p, 1, 10000) == 1) {
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    ::close(out[0]);
    REQUIRE(got == "ready\n");
  }
  ~Child() {
    if (!reaped && pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  int Wait() {
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    reaped = true;
    return status;
  }
};

// Event dirs of `kind` for pid `pid`, as absolute paths.
std::vector<std::string> DirsOf(const DaemonProcess& d, const std::string& kind, pid_t pid) {
  std::vector<std::string> out;
  const std::string prefix = kind + "_event_" + std::to_string(pid) + "_";
  for (const auto& proc : ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(d.trace_dir() + "/" + proc)) {
      if (ev.rfind(prefix, 0) == 0) out.push_back(d.trace_dir() + "/" + proc + "/" + ev);
    }
  }
  return out;
}

// Waits until a stackcore dir of `pid` holds a report (the last file written is not
// awaited: the report is written first, then the rings, all in one turn of the loop).
std::vector<std::string> AwaitStackcore(const DaemonProcess& d, pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (d.LogHas("pid " + std::to_string(pid) + " (")) {
      auto dirs = DirsOf(d, "stackcore", pid);
      if (!dirs.empty()) return dirs;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

// The record texts of a .txt ring file (the part after CANN's time stamp).
std::vector<std::string> Records(const std::string& path) {
  std::vector<std::string> out;
  const std::string text = ReadFile(path);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    out.push_back(line.size() > 28 ? line.substr(28) : line);  // "YYYY-MM-DD hh:mm:ss.mmm.uuu "
    pos = nl + 1;
  }
  return out;
}

std::vector<std::string> Expected(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back("record " + std::to_string(i));
  return out;
}

std::string ReportOf(const std::string& dir, pid_t pid, const std::string& signo) {
  for (const auto& name : ListNames(dir)) {
    if (name.rfind("stackcore_tracer_" + signo + "_" + std::to_string(pid) + "_", 0) == 0) return ReadFile(dir + "/" + name);
  }
  FAIL("no stackcore_tracer_" << signo << "_" << pid << "_* in " << dir);
  return "";
}

}  // namespace

TEST_CASE("crash: a SIGKILLed process leaves a stackcore dir with every ring's records", "[crash]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  // More records than the default ring holds (1024): the newest 1024 are kept, none invented.
  Child child(d, "wait", 1030);
  REQUIRE(::kill(child.pid, SIGKILL) == 0);
  // Not reaped yet: the daemon reads the zombie's status and names the signal.
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(ListNames(dirs[0]).size() == 3);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(6, 1030));
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_exit.txt") == std::vector<std::string>{"exit record"});
  const std::string report = ReportOf(dirs[0], child.pid, "9");
  INFO(report);
  CHECK(report.find("how: killed by signal 9 (SIGKILL)") != std::string::npos);
  CHECK(report.find("program: ascend_trace_cr") != std::string::npos);  // comm: 15 bytes
  CHECK(report.find(std::string("command line: ") + ASCEND_TRACE_CRASH_CHILD + " wait 1030\n") != std::string::npos);
  CHECK(report.find("crash_exit (destroyed, exitSave)") != std::string::npos);
  // The library changes nothing about how the process ended.
  const int status = child.Wait();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(DirsOf(d, "exit", child.pid).empty());
}

TEST_CASE("crash: _exit(3) skips GOODBYE: a stackcore dir says it exited with status 3", "[crash]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "exit3", 5);
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 5));
  const std::string report = ReportOf(dirs[0], child.pid, "0");
  INFO(report);
  CHECK(report.find("how: exited with status 3") != std::string::npos);
  const int status = child.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
}

TEST_CASE("crash: a process reaped before the daemon looks still leaves its rings", "[crash]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "wait", 3);
  REQUIRE(::kill(child.pid, SIGKILL) == 0);
  child.Wait();  // races the daemon: the report names SIGKILL or says it cannot tell
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 3));
}

TEST_CASE("crash: a normal exit writes the exit dir and no stackcore dir", "[crash]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "normal", 4);
  const int status = child.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(DirsOf(d, "exit", child.pid).size() == 1);  // GOODBYE is answered once written
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(DirsOf(d, "stackcore", child.pid).empty());
  CHECK_FALSE(d.LogHas("ended without GOODBYE"));
}

TEST_CASE("crash: a connection that closes while its process lives on writes nothing", "[crash]") {
  // This test process is the client: it registers a ring with a record by hand, closes the
  // connection without GOODBYE (as an exec or a stray close would) and keeps running.
  DaemonProcess d;
  REQUIRE(d.Start());
  {
    auto c = RawClient::Connect(d.socket());
    REQUIRE(c);
    REQUIRE(c->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD));
    ascend_trace_test::TestRing ring(4, 64);
    REQUIRE(ring.Write("kept", 4) == TRACE_SUCCESS);
    atraced::proto::RingRegister m;
    m.object_id = 1;
    m.msg_num = ring.shape().msg_num;
    m.msg_size = ring.shape().msg_size;
    m.ring_bytes = static_cast<uint32_t>(ring.bytes());
    m.name = "alive";
    std::vector<uint8_t> payload;
    atraced::proto::Encode(m, payload);
    std::vector<uint8_t> frame;
    atraced::proto::AppendFrame(frame, ATR_OP_RING_REGISTER, 0, 7, payload);
    REQUIRE(atraced::SendWithFd(c->fd(), frame.data(), frame.size(), ring.fd(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(frame.size()));
    REQUIRE(c->Read()->status == 0);
  }  // closed without GOODBYE
  REQUIRE(d.WaitForLog("closed its connection without GOODBYE and is still running"));
  CHECK(DirsOf(d, "stackcore", ::getpid()).empty());
  CHECK_FALSE(d.LogHas("ended without GOODBYE"));
}

TEST_CASE("crash: an idle ring-holding connection is not dropped at idle-timeout", "[crash]") {
  DaemonProcess d(DaemonProcess::Options{{"--idle-timeout", "1"}});
  REQUIRE(d.Start());
  Child child(d, "wait", 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  CHECK_FALSE(d.LogHas("dropping idle connection of pid " + std::to_string(child.pid)));
  REQUIRE(::kill(child.pid, SIGKILL) == 0);
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 2));
}
