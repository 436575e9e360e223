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
#include "crash_util.h"

using atraced::testing::RawClient;

using namespace crash_test;

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
