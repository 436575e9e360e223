// CANN's on-demand dump signal (35) against the real daemon: the library's handler sends
// DUMP, the daemon writes the process's rings into a schedule dir, the handler returns and
// the process runs on to a normal exit. Also: no daemon, a daemon that never answers, the
// opt-out, and the handler's hand-built frame.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/codec.h"
#include "crash_util.h"
#include "dump_signal.h"

using namespace crash_test;

namespace {

using Clock = std::chrono::steady_clock;

bool StillRunning(const Child& child) {
  int status = 0;
  return ::waitpid(child.pid, &status, WNOHANG) == 0;
}

}  // namespace

TEST_CASE("dump signal: 35 saves the rings as a schedule dir and the process runs on to a normal exit", "[crash][dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "dump-on-input", 5);
  REQUIRE(::kill(child.pid, ascend_trace::kDumpSignal) == 0);
  REQUIRE(d.WaitForLog("caught dump signal 35"));
  auto dirs = DirsOf(d, "schedule", child.pid);
  REQUIRE(dirs.size() == 1);
  // The live object only: the destroyed exitSave one belongs to the exit dir.
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_crash_obj.txt"});
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 5));
  REQUIRE(StillRunning(child));
  REQUIRE(::write(child.input, "x", 1) == 1);  // it writes records 5..9, then returns from main
  RequireExited(child, 0);
  CHECK(DirsOf(d, "exit", child.pid).size() == 1);  // GOODBYE still works on the main connection
  CHECK(DirsOf(d, "stackcore", child.pid).empty());
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 5));  // written before the handler returned
  CHECK(DirsOf(d, "schedule", child.pid).size() == 1);
}

TEST_CASE("dump signal: without a daemon the process neither dies nor hangs", "[crash][dump]") {
  DaemonProcess d;  // never started: nothing listens on its socket
  Child child(d, "dump-on-input", 3);
  const auto start = Clock::now();
  REQUIRE(::kill(child.pid, ascend_trace::kDumpSignal) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(StillRunning(child));
  REQUIRE(::write(child.input, "x", 1) == 1);
  RequireExited(child, 0);
  CHECK(Clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("dump signal: a daemon that never answers costs the wait bound, then the process runs on", "[crash][dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "dump-self-timed", 2, {"ASCEND_TRACE_CRASH_WAIT_MS=500"});
  REQUIRE(::kill(d.pid(), SIGSTOP) == 0);  // connected, but nobody reads
  REQUIRE(::write(child.input, "x", 1) == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Its exit waits for GOODBYE's reply (bounded too); let the daemon answer that one.
  ::kill(d.pid(), SIGCONT);
  const int status = child.Wait();
  INFO("status " << status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) >= 4);  // tenths of a second in the handler
  CHECK(WEXITSTATUS(status) <= 15);
  // The late DUMP reply is skipped, not mistaken for another: the exit dir is still written.
  CHECK(DirsOf(d, "exit", child.pid).size() == 1);
}

TEST_CASE("dump signal: ASCEND_COREDUMP_SIGNAL=none leaves 35 at its default, which terminates", "[crash][dump]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "dump-on-input", 2, {"ASCEND_COREDUMP_SIGNAL=none"});
  REQUIRE(::kill(child.pid, ascend_trace::kDumpSignal) == 0);
  const int status = child.Wait();
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == ascend_trace::kDumpSignal);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(d.LogHas("caught dump signal"));
}

TEST_CASE("dump signal: the handler's hand-built frame is the codec's DUMP frame", "[crash][dump]") {
  unsigned char frame[ascend_trace::kDumpFrameSize];
  ascend_trace::BuildDumpFrame(35, 4321, 0x01020304, frame);
  std::vector<uint8_t> payload, expected;
  atraced::proto::Encode(atraced::proto::Dump{35, 4321}, payload);
  atraced::proto::AppendFrame(expected, ATR_OP_DUMP, 0, 0x01020304, payload);
  CHECK(std::vector<uint8_t>(frame, frame + sizeof frame) == expected);
}

TEST_CASE("dump signal: the STACK_DUMP frame is the codec's, for the values asys queues only", "[crash][dump]") {
  unsigned char frame[ascend_trace::kStackDumpFrameSize];
  ascend_trace::BuildStackDumpFrame(35, 4321, ATR_STACK_DUMP_ALL_THREADS, 0x01020304, frame);
  std::vector<uint8_t> payload, expected;
  atraced::proto::Encode(atraced::proto::StackDump{35, 4321, ATR_STACK_DUMP_ALL_THREADS}, payload);
  atraced::proto::AppendFrame(expected, ATR_OP_STACK_DUMP, 0, 0x01020304, payload);
  CHECK(std::vector<uint8_t>(frame, frame + sizeof frame) == expected);

  siginfo_t info{};
  info.si_code = SI_QUEUE;
  info.si_value.sival_int = static_cast<int>(0xAABB0003u);
  CHECK(ascend_trace::StackDumpFlags(&info) == static_cast<int>(ATR_STACK_DUMP_ALL_THREADS));
  info.si_value.sival_int = static_cast<int>(0xAABB0002u);
  CHECK(ascend_trace::StackDumpFlags(&info) == 0);
  info.si_value.sival_int = 7;
  CHECK(ascend_trace::StackDumpFlags(&info) == -1);  // another value: the schedule dump
  info.si_code = SI_USER;                             // kill(): whatever the value field holds
  info.si_value.sival_int = static_cast<int>(0xAABB0003u);
  CHECK(ascend_trace::StackDumpFlags(&info) == -1);
  CHECK(ascend_trace::StackDumpFlags(nullptr) == -1);
}
