// The asynchronous mode: events submitted without waiting, a bound on those in flight, and
// errors reported by atrace_client_flush().
#include <catch2/catch.hpp>

#include <errno.h>
#include <signal.h>

#include <atomic>
#include <chrono>

#include "atraced/atrace_client.h"
#include "atraced/proto/wire.h"
#include "client_test_util.h"
#include "support/daemon_process.h"

using namespace atraced::testing;
using atrace_test::ScriptedDaemon;
using atrace_test::OpenClient;

namespace {
const atrace_event_spec kExit{ATRACE_EVENT_EXIT, ATRACE_SIDE_HOST, 0, nullptr};
const atrace_file_spec kObject{ATRACE_FILE_OBJECT, "churn", 0, 0, 0, 0, nullptr};
}  // namespace

TEST_CASE("async: many events land, all counted, flush reports success", "[client][async]") {
  DaemonProcess d({{"--exit-record-num", "1000"}});  // more exit dirs than the default bound keeps
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket(), 5000, 8);
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    REQUIRE(atrace_emit_async(c, &kExit, &kObject, "a", 1) == 0);
    atrace_client_stats s{};
    atrace_client_get_stats(c, &s);
    REQUIRE(s.in_flight <= 8);  // the bound holds after every submit
  }
  REQUIRE(atrace_client_flush(c) == 0);
  atrace_client_stats s{};
  atrace_client_get_stats(c, &s);
  CHECK(s.async_ok == n);
  CHECK(s.async_failed == 0);
  CHECK(s.in_flight == 0);
  CHECK(CountEventDirs(d.trace_dir(), "exit") == n);
  atrace_client_close(c);
}

TEST_CASE("async: a refused event is counted and flush returns its error once", "[client][async]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket(), 5000, 4);
  // A name the library can check is refused at once, before anything is sent.
  atrace_file_spec bad_name = kObject;
  bad_name.name = "no/slash";
  CHECK(atrace_emit_async(c, &kExit, &bad_name, "0", 1) == -EINVAL);
  CHECK(std::string(atrace_client_last_message(c)).find("object name") != std::string::npos);
  // A device time with month 13 has the right form; only the daemon's calendar refuses it.
  const atrace_event_spec bad{ATRACE_EVENT_EXIT, ATRACE_SIDE_DEVICE, 1, "20261301000000000000"};
  REQUIRE(atrace_emit_async(c, &kExit, &kObject, "1", 1) == 0);
  REQUIRE(atrace_emit_async(c, &bad, &kObject, "2", 1) == 0);  // accepted locally, refused by the daemon
  REQUIRE(atrace_emit_async(c, &kExit, &kObject, "3", 1) == 0);
  CHECK(atrace_client_flush(c) == -EINVAL);
  CHECK(std::string(atrace_client_last_message(c)).find("time") != std::string::npos);
  CHECK(atrace_client_flush(c) == 0);  // reported once
  atrace_client_stats s{};
  atrace_client_get_stats(c, &s);
  CHECK(s.async_ok == 2);
  CHECK(s.async_failed == 1);
  // A synchronous call after asynchronous ones sees its own reply, not theirs.
  REQUIRE(atrace_emit_async(c, &bad, &kObject, "4", 1) == 0);
  char path[ATRACE_PATH_MAX];
  CHECK(atrace_emit(c, &kExit, &kObject, "5", 1, 0, path, sizeof path) == 0);
  CHECK(ReadFile(path) == "5");
  CHECK(atrace_client_flush(c) == -EINVAL);
  atrace_client_close(c);
}

TEST_CASE("async: with a daemon that never answers, submits stop at the bound and time out", "[client][async]") {
  std::atomic<int> frames{0};
  ScriptedDaemon fake([&](int fd) {
    if (!atrace_test::ServeHello(fd)) return;
    atrace_test::Frame f;
    while (atrace_test::ReadFrame(fd, &f, 20000)) ++frames;  // reads, never replies
  });
  atrace_client* c = OpenClient(fake.socket(), 300, 2);
  CHECK(atrace_emit_async(c, &kExit, &kObject, "1", 1) == 0);
  CHECK(atrace_emit_async(c, &kExit, &kObject, "2", 1) == 0);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(atrace_emit_async(c, &kExit, &kObject, "3", 1) == -ETIMEDOUT);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ms < 5000);  // the 300 ms bound and a loaded machine's margin, not the fake's 20 s
  atrace_client_stats s{};
  atrace_client_get_stats(c, &s);
  CHECK(s.async_failed == 2);  // the two in flight are lost with the connection
  CHECK(s.in_flight == 0);
  CHECK(atrace_client_flush(c) == -ETIMEDOUT);
  atrace_client_close(c);
  CHECK(frames == 10);  // exactly two events' five requests were sent, not the third
}

TEST_CASE("async: a daemon restart loses the events in flight and reports it", "[client][async]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket(), 2000, 16);
  REQUIRE(atrace_emit_async(c, &kExit, &kObject, "1", 1) == 0);
  REQUIRE(atrace_client_flush(c) == 0);
  d.Signal(SIGSTOP);
  REQUIRE(atrace_emit_async(c, &kExit, &kObject, "2", 1) == 0);  // sits in the socket
  REQUIRE(d.Stop(SIGKILL) == 128 + SIGKILL);
  REQUIRE(d.Start());
  CHECK(atrace_client_flush(c) == -ECONNRESET);
  REQUIRE(atrace_emit_async(c, &kExit, &kObject, "3", 1) == 0);  // reconnected
  CHECK(atrace_client_flush(c) == 0);
  atrace_client_stats s{};
  atrace_client_get_stats(c, &s);
  CHECK(s.async_ok == 2);
  CHECK(s.async_failed == 1);
  CHECK(s.connects == 2);
  atrace_client_close(c);
}
