// Device-side traces end to end (issue 24): an application of the drop-in
// (device_child.c) calls AtraceReportStart/Stop with the NPU driver double on its library
// path; the fake device (tests/support/hal_double) plays CANN's trace server; the real
// daemon writes what arrives. What a user sees: the device's files in device-class event
// dirs of the application, with CANN's names, the device's time and its bytes as sent.
#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fake_device_process.h"
#include "line_child.h"
#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

using atraced::hal_double::testing::FakeDevice;
using atraced::hal_double::testing::HalDoubleLibDir;
using atraced::hal_double::testing::HalDoublePartialLibDir;
using atraced::hal_double::testing::LineChild;
using atraced::testing::DaemonProcess;
using atraced::testing::ListNames;
using atraced::testing::RawClient;
using atraced::testing::ReadFile;
using atraced::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// The application, a command line each way; its stderr kept in a file.
class DeviceApp {
 public:
  DeviceApp(std::map<std::string, std::string> env, const std::string& err_path,
            const std::string& program = ASCEND_TRACE_DEVICE_CHILD)
      : err_path_(err_path), child_(program, WithLeakCheckOff(std::move(env)), err_path) {
    REQUIRE(child_.started());
    REQUIRE(Line(10s) == "ready " + std::to_string(child_.pid()));
  }
  ~DeviceApp() {
    // Under a sanitizer build the application is instrumented: what it reported fails the test.
    if (std::uncaught_exceptions() == 0) {
      const std::string text = err();
      INFO(text);
      CHECK(text.find("Sanitizer") == std::string::npos);
      CHECK(text.find("runtime error:") == std::string::npos);
    }
  }

  pid_t pid() const { return child_.pid(); }
  void Send(const std::string& command) { REQUIRE(child_.Send(command)); }
  std::string Call(const std::string& command, std::chrono::milliseconds timeout = 15s) {
    Send(command);
    return Line(timeout);
  }
  std::string Line(std::chrono::milliseconds timeout) { return child_.Line(timeout); }
  // Returns from main; the exit status. A process that has not exited after `timeout` fails
  // the test (and is killed), rather than hanging it.
  int Exit(std::chrono::milliseconds timeout = 30s) {
    Send("exit");
    const int status = child_.Wait(timeout);
    REQUIRE(status >= 0);
    return status;
  }
  std::string err() const { return ReadFile(err_path_); }

 private:
  static std::map<std::string, std::string> WithLeakCheckOff(std::map<std::string, std::string> env) {
    env.emplace("ASAN_OPTIONS", "detect_leaks=0");
    return env;
  }
  std::string err_path_;
  LineChild child_;
};

// A root, a daemon, a fake device and the environment an application needs to reach both.
struct Rig {
  explicit Rig(int device = 0, int phy = -1, std::vector<std::string> flags = {},
               std::map<std::string, std::string> device_env = {}) {
    REQUIRE(daemon.Start());
    hdc_dir = tmp.path() + "/hdc";
    REQUIRE(::mkdir(hdc_dir.c_str(), 0755) == 0);
    FakeDevice::Options o;
    o.dir = hdc_dir;
    o.device = device;
    o.phy = phy;
    o.flags = std::move(flags);
    o.env = device_env;
    fake = std::make_unique<FakeDevice>(o);
    REQUIRE(fake->Start());
    env = {{"LD_LIBRARY_PATH", HalDoubleLibDir()},
           {"ATRACE_HAL_DOUBLE_DIR", hdc_dir},
           {"ATRACED_SOCKET", daemon.socket()}};
    for (const auto& [k, v] : device_env) env[k] = v;
  }
  std::unique_ptr<DeviceApp> App(const std::map<std::string, std::string>& extra = {},
                                 const std::string& program = ASCEND_TRACE_DEVICE_CHILD) {
    auto e = env;
    for (const auto& [k, v] : extra) e[k] = v;
    return std::make_unique<DeviceApp>(e, tmp.path() + "/app" + std::to_string(++apps) + ".err", program);
  }
  // The application that loads the library with dlopen: device_child.c's dlopen build, or
  // the same commands from Python through ctypes.
  std::unique_ptr<DeviceApp> DlopenApp(const std::string& program = ASCEND_TRACE_DEVICE_DLOPEN_CHILD) {
    return App({{"ASCEND_TRACE_LIBRARY_PATH", ASCEND_TRACE_LIBRARY}}, program);
  }
  // "ok queued ... time=T": T.
  static std::string TimeOf(const std::string& reply) {
    const size_t at = reply.find("time=");
    return at == std::string::npos ? "" : reply.substr(at + 5, 20);
  }
  std::string EventDir(pid_t pid, const std::string& time) const {
    for (const auto& proc : ListNames(daemon.trace_dir())) {
      const std::string dir = daemon.trace_dir() + "/" + proc + "/schedule_event_" + std::to_string(pid) + "_" + time;
      if (::access(dir.c_str(), F_OK) == 0) return dir;
    }
    return "";
  }
  std::vector<std::string> EventDirs(pid_t pid) const {
    std::vector<std::string> out;
    const std::string prefix = "schedule_event_" + std::to_string(pid) + "_";
    for (const auto& proc : ListNames(daemon.trace_dir())) {
      for (const auto& ev : ListNames(daemon.trace_dir() + "/" + proc)) {
        if (ev.rfind(prefix, 0) == 0) out.push_back(daemon.trace_dir() + "/" + proc + "/" + ev);
      }
    }
    return out;
  }
  atraced::proto::StatusReply Status() {
    auto c = RawClient::Connect(daemon.socket());
    REQUIRE(c);
    REQUIRE(c->Hello());
    return atraced::testing::QueryStatus(*c);
  }
  const atraced::proto::StatusReply::Device* DeviceCounts(uint32_t id) {
    status = Status();
    for (const auto& d : status.devices.devices) {
      if (d.device_id == id) return &d;
    }
    return nullptr;
  }

  TempDir tmp;
  DaemonProcess daemon;
  std::string hdc_dir;
  std::unique_ptr<FakeDevice> fake;
  std::map<std::string, std::string> env;
  atraced::proto::StatusReply status;
  int apps = 0;
};

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// Polls `done` until it holds or `timeout` passes.
template <typename Pred>
bool Eventually(Pred done, std::chrono::milliseconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

}  // namespace

TEST_CASE("device traces: TS chunks land in one device-class file, utrace objects in their own dirs and times",
          "[device]") {
  Rig rig;
  auto app = rig.App();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  const std::string first = rig.fake->Command("ts " + pid + " start 100 A");
  REQUIRE(first.rfind("ok", 0) == 0);
  const std::string ts_time = Rig::TimeOf(first);
  REQUIRE(rig.fake->Ok("ts " + pid + " mid 524000 B"));  // two HDC packets at the default segment
  REQUIRE(rig.fake->Ok("ts " + pid + " end 50 C"));
  REQUIRE(rig.fake->Ok("utrace " + pid + " HCCL_obj bin 64 20260101120000123456"));
  REQUIRE(rig.fake->Ok("utrace " + pid + " RUNTIME_obj txt 10 20260101120000654321 x"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  REQUIRE(app->Call("stop 0") == "stop 0");

  const std::string ts_dir = rig.EventDir(app->pid(), ts_time);
  REQUIRE_FALSE(ts_dir.empty());
  CHECK(ListNames(ts_dir) == std::vector<std::string>{"schedule_tracer_ts_0.txt"});
  CHECK(ReadFile(ts_dir + "/schedule_tracer_ts_0.txt") ==
        std::string(100, 'A') + std::string(524000, 'B') + std::string(50, 'C'));
  const std::string bin_dir = rig.EventDir(app->pid(), "20260101120000123456");
  REQUIRE_FALSE(bin_dir.empty());
  std::string expected_bin;
  for (int i = 0; i < 64; ++i) expected_bin.push_back(static_cast<char>(i));
  CHECK(ReadFile(bin_dir + "/schedule_tracer_HCCL_obj.bin") == expected_bin);
  const std::string txt_dir = rig.EventDir(app->pid(), "20260101120000654321");
  REQUIRE_FALSE(txt_dir.empty());
  CHECK(ReadFile(txt_dir + "/schedule_tracer_RUNTIME_obj.txt") == std::string(10, 'x'));
  CHECK(rig.EventDirs(app->pid()).size() == 3);

  // Counted as device dirs, under the one counter; the device's line in STATUS.
  const auto* d = rig.DeviceCounts(0);
  CHECK(rig.status.device_dirs == 3);
  CHECK(rig.status.host_dirs == 0);
  REQUIRE(d != nullptr);
  CHECK(d->events == 5);  // a begin per message; the chunks reuse their directory
  CHECK(d->received == 5);
  CHECK(d->saved == 5);
  CHECK(d->dropped_invalid == 0);
  CHECK(app->Exit() == 0);
}

TEST_CASE("device traces: a message of many small segments, physical ids, and an end chunk after the stop", "[device]") {
  Rig rig(1, 5, {}, {{"ATRACE_HAL_DOUBLE_MAX_SEGMENT", "4096"}});
  auto app = rig.App({{"ASCEND_LOG_DEVICE_FLUSH_TIMEOUT", "3000"}});
  REQUIRE(app->Call("start 1") == "start 1 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  const std::string first = rig.fake->Command("ts " + pid + " start 100000 s");  // 25 packets
  REQUIRE(first.rfind("ok", 0) == 0);
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  // AtraceReportStop sends [end]; the device keeps forwarding for the flush timeout and its
  // end chunk, arriving after the stop began, still lands in the same file.
  app->Send("stop 1");
  std::this_thread::sleep_for(300ms);
  REQUIRE(rig.fake->Ok("ts " + pid + " end 20 e"));
  REQUIRE(app->Line(10s) == "stop 1");
  const std::string dir = rig.EventDir(app->pid(), Rig::TimeOf(first));
  REQUIRE_FALSE(dir.empty());
  CHECK(ListNames(dir) == std::vector<std::string>{"schedule_tracer_ts_5.txt"});  // the physical id
  CHECK(ReadFile(dir + "/schedule_tracer_ts_5.txt") == std::string(100000, 's') + std::string(20, 'e'));
  const auto* d = rig.DeviceCounts(1);  // the logical id
  REQUIRE(d != nullptr);
  CHECK(d->received == 2);
}

TEST_CASE("device traces: CANN's argument rules and return codes", "[device]") {
  Rig rig;
  auto app = rig.App();
  CHECK(app->Call("start 1024") == "start 1024 -2");
  CHECK(app->Call("start -1") == "start -1 -2");
  CHECK(app->Call("start 64") == "start 64 0");  // HOST_AI_DEVID: nothing to start
  CHECK(app->Call("start 0") == "start 0 0");
  CHECK(app->Call("start 0") == "start 0 0");  // one receiver per device
  CHECK(app->Call("start 3") == "start 3 -5");  // no device 3 answers the hello
  CHECK(Has(app->err(), "device 3: no trace server answered"));
  CHECK(app->Call("stop 3") == "stop 3");  // never started: nothing to do
  CHECK(app->Call("stop 0") == "stop 0");
  CHECK(app->Call("start 0") == "start 0 0");  // and again after a stop
  CHECK(app->Call("stop 0") == "stop 0");
  CHECK(rig.EventDirs(app->pid()).empty());
  // A flush timeout CANN would not take is said, and 0 used, as CANN uses it.
  auto odd = rig.App({{"ASCEND_LOG_DEVICE_FLUSH_TIMEOUT", "6s"}});
  CHECK(odd->Call("start 0") == "start 0 0");
  CHECK(Has(odd->err(), "ASCEND_LOG_DEVICE_FLUSH_TIMEOUT=6s is not an integer in [0, 180000]; using 0"));
  CHECK(odd->Call("stop 0") == "stop 0");
}

TEST_CASE("device traces: no usable driver or device is unsupported, with nothing written", "[device]") {
  Rig rig;
  SECTION("a driver without the HDC functions") {
    auto app = rig.App({{"LD_LIBRARY_PATH", HalDoublePartialLibDir()}});
    CHECK(app->Call("start 0") == "start 0 -5");
  }
  SECTION("the driver says this is the device side") {
    auto app = rig.App({{"ATRACE_HAL_DOUBLE_PLATFORM", "0"}});
    CHECK(app->Call("start 0") == "start 0 -5");
  }
  SECTION("the driver sees no device") {
    auto app = rig.App({{"ATRACE_HAL_DOUBLE_DEVNUM", "0"}});
    CHECK(app->Call("start 0") == "start 0 -5");
    CHECK(app->Call("start 1024") == "start 1024 -5");  // support is decided before the id
  }
  SECTION("a device that never answers the hello costs the bound, not CANN's 10 s") {
    Rig silent(2, -1, {"--hello-silent"});
    auto app = silent.App();
    const auto begin = std::chrono::steady_clock::now();
    CHECK(app->Call("start 2") == "start 2 -5");
    CHECK(std::chrono::steady_clock::now() - begin < 8s);
  }
  CHECK(rig.Status().device_dirs == 0);
}

TEST_CASE("device traces: a hostile device's messages are dropped, counted and said, never written", "[device]") {
  Rig rig;
  auto app = rig.App();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  const std::vector<std::string> kinds{"buflen-lie",      "name-dotdot",     "name-slash",  "name-unterminated",
                                       "name-empty",      "time-bad",        "oversized",   "short-packet",
                                       "bad-packet-type", "proto-bad-slice", "proto-empty", "unknown-msgtype",
                                       "event-too-short", "proto-file-load"};
  for (const auto& kind : kinds) {
    INFO(kind);
    REQUIRE(rig.fake->Ok("hostile " + pid + " " + kind));
    REQUIRE(rig.fake->Command("flush") == "ok flushed");
  }
  // The link survives all of it: a good message after them lands.
  REQUIRE(rig.fake->Ok("utrace " + pid + " good bin 8 20260101120000000001"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  REQUIRE(app->Call("stop 0") == "stop 0");
  const auto dirs = rig.EventDirs(app->pid());
  REQUIRE(dirs.size() == 1);
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_good.bin"});
  // Nothing anywhere else under the root: no file escaped its directory.
  for (const auto& proc : ListNames(rig.daemon.trace_dir())) {
    for (const auto& ev : ListNames(rig.daemon.trace_dir() + "/" + proc)) {
      CHECK(ev.rfind("schedule_event_" + pid + "_", 0) == 0);
    }
  }
  const auto* d = rig.DeviceCounts(0);
  REQUIRE(d != nullptr);
  CHECK(d->received == 1);
  CHECK(d->dropped_invalid == kinds.size());
  CHECK(Has(app->err(), "device 0: dropped a trace message: "));
  CHECK(app->Exit() == 0);
}

TEST_CASE("device traces: the receiver reconnects when the device's trace server restarts", "[device]") {
  Rig rig;
  auto app = rig.App();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  REQUIRE(rig.fake->Command("drop-long-links").rfind("ok dropped 1", 0) == 0);
  // CANN's client would read the dead session for ever; ours opens a new link.
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  REQUIRE(rig.fake->Ok("utrace " + pid + " after bin 4 20260101120000000002"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  // The outage is over, and said so, once the new link has stayed open 2 s.
  CHECK(Eventually([&] { return Has(app->err(), "device 0: trace link open again"); }));
  REQUIRE(app->Call("stop 0") == "stop 0");
  CHECK_FALSE(rig.EventDir(app->pid(), "20260101120000000002").empty());
  const auto* d = rig.DeviceCounts(0);
  REQUIRE(d != nullptr);
  CHECK(d->reconnects == 1);
  CHECK(Has(app->err(), "device 0: the device closed the trace link; reconnecting"));
  CHECK(Has(app->err(), "device 0: trace link open again"));
}

TEST_CASE("device traces: with the daemon away, events are dropped with one line per outage", "[device]") {
  Rig rig;
  auto app = rig.App({{"ATRACED_SOCKET", rig.tmp.path() + "/nobody.sock"}});
  REQUIRE(app->Call("start 0") == "start 0 0");  // the device side does not need the daemon
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  REQUIRE(rig.fake->Ok("utrace " + pid + " one bin 4 20260101120000000003"));
  REQUIRE(rig.fake->Ok("utrace " + pid + " two bin 4 20260101120000000004"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  REQUIRE(app->Call("stop 0") == "stop 0");
  const std::string err = app->err();
  INFO(err);
  CHECK(Has(err, "device 0: traces from the device are dropped: cannot reach atraced: no socket at"));
  CHECK(err.find("traces from the device are dropped") == err.rfind("traces from the device are dropped"));
  CHECK(rig.EventDirs(app->pid()).empty());
}

TEST_CASE("device traces: a forked child starts its own receiver and the parent's keeps receiving", "[device]") {
  // The child has none of the parent's threads: its AtraceReportStart must start a receiver
  // (not answer "already started" for one that is not there), the device routes by pid, and
  // each process's messages land in its own directories. The child returns from main through
  // the library's exit path, which joins only its own receiver. Both with the library linked
  // and loaded with dlopen, as Python loads it (the exit work runs in another order there).
  const bool dlopened = GENERATE(false, true);
  INFO((dlopened ? "loaded with dlopen" : "linked"));
  Rig rig;
  auto app = dlopened ? rig.DlopenApp() : rig.App();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  app->Send("fork 0");
  std::string forked, child;
  for (int i = 0; i < 2; ++i) {
    const std::string line = app->Line(15s);
    (line.rfind("forked ", 0) == 0 ? forked : child) = line;
  }
  REQUIRE(forked.rfind("forked ", 0) == 0);
  const std::string cpid = forked.substr(7);
  CHECK(child == "child " + cpid + " 0");
  REQUIRE(rig.fake->WaitForSession(static_cast<pid_t>(std::stoi(cpid))));
  REQUIRE(rig.fake->Ok("utrace " + pid + " parent_obj bin 8 20260101120000000011"));
  REQUIRE(rig.fake->Ok("utrace " + cpid + " child_obj bin 16 20260101120000000012"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  const pid_t child_pid = static_cast<pid_t>(std::stoi(cpid));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (rig.EventDir(child_pid, "20260101120000000012").empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  const auto released_at = std::chrono::steady_clock::now();
  CHECK(app->Call("release") == "released 0");
  CHECK(std::chrono::steady_clock::now() - released_at < 5s);  // its own receiver's exit bound
  const std::string child_dir = rig.EventDir(child_pid, "20260101120000000012");
  REQUIRE_FALSE(child_dir.empty());
  CHECK(ListNames(child_dir) == std::vector<std::string>{"schedule_tracer_child_obj.bin"});
  CHECK(ReadFile(child_dir + "/schedule_tracer_child_obj.bin").size() == 16);
  CHECK(rig.EventDirs(child_pid).size() == 1);
  // The parent's receiver outlived the fork and its child.
  REQUIRE(app->Call("stop 0") == "stop 0");
  const std::string parent_dir = rig.EventDir(app->pid(), "20260101120000000011");
  REQUIRE_FALSE(parent_dir.empty());
  CHECK(ListNames(parent_dir) == std::vector<std::string>{"schedule_tracer_parent_obj.bin"});
  CHECK(rig.EventDirs(app->pid()).size() == 1);
  CHECK(app->Exit() == 0);
}

TEST_CASE("device traces: exit without stop sends no end, ends within its bound, and keeps what arrived", "[device]") {
  Rig rig;
  auto app = rig.App();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  REQUIRE(rig.fake->Ok("utrace " + pid + " last bin 4 20260101120000000005"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  const auto begin = std::chrono::steady_clock::now();
  CHECK(app->Exit() == 0);
  CHECK(std::chrono::steady_clock::now() - begin < 5s);
  CHECK_FALSE(rig.EventDir(app->pid(), "20260101120000000005").empty());
  // No [end]: the device never moved the node to its deleted list; it reaps it as closed.
  CHECK_FALSE(Has(rig.fake->log(), "[end] from pid " + pid));
}

// Python frameworks load CANN's libraries with dlopen. There, the library's static destructors
// run before its exit work, which once freed every device receiver twice (SIGABRT at exit in
// every run with a receiver, an idle device included).
TEST_CASE("device traces: loaded with dlopen, exit and unload with a receiver running end cleanly", "[device]") {
  const std::string how = GENERATE(as<std::string>{}, "exit", "dlclose");
  INFO("ending with " << how);
  Rig rig;
  auto app = rig.DlopenApp();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const std::string pid = std::to_string(app->pid());
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  REQUIRE(rig.fake->Ok("utrace " + pid + " last bin 4 20260101120000000007"));
  REQUIRE(rig.fake->Command("flush") == "ok flushed");
  if (how == "dlclose") REQUIRE(app->Call("dlclose") == "dlclosed 0");
  const int status = app->Exit();
  INFO(app->err());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(Has(app->err(), "double free"));
  // What the device sent before the end was written, as when the library is linked.
  CHECK_FALSE(rig.EventDir(app->pid(), "20260101120000000007").empty());
}

TEST_CASE("device traces: a Python program that loads the library through ctypes exits cleanly", "[device]") {
  if (std::string(ASCEND_TRACE_CONSUMER_FLAGS).size() > 0) {
    WARN("skipped: an instrumented library does not load into the uninstrumented python3");
    return;
  }
  // CI installs python3 (scripts/dev.sh); a machine without it skips, saying so.
  if (::access("/usr/bin/python3", X_OK) != 0) {
    WARN("skipped: no /usr/bin/python3 (Debian package python3)");
    return;
  }
  Rig rig;
  auto app = rig.DlopenApp(ASCEND_TRACE_DEVICE_PY_CHILD);
  REQUIRE(app->Call("start 0") == "start 0 0");
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  const int status = app->Exit();
  INFO(app->err());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(Has(app->err(), "double free"));
}

TEST_CASE("device traces: a device that never ends a packet chain holds neither AtraceReportStop nor exit",
          "[device]") {
  // The device never sets isLast: a 1-byte packet every 0.5 s, and it ignores [end]. Every
  // packet wait is bounded by the caller's time, and the chain itself is dropped (counted as
  // invalid) 5 s after its first packet.
  Rig rig;
  SECTION("AtraceReportStop returns within flush timeout + 2 s") {
    auto app = rig.App();
    REQUIRE(app->Call("start 0") == "start 0 0");
    const std::string pid = std::to_string(app->pid());
    REQUIRE(rig.fake->WaitForSession(app->pid()));
    // One whole message first: the daemon takes a device's counts only from a process that
    // wrote that device's events (an unproven DEVICE_STATS is refused, SECURITY.md).
    REQUIRE(rig.fake->Ok("utrace " + pid + " last bin 4 20260101120000000009"));
    REQUIRE(rig.fake->Command("flush") == "ok flushed");
    REQUIRE(Eventually([&] { return !rig.EventDir(app->pid(), "20260101120000000009").empty(); }));
    REQUIRE(rig.fake->Ok("endless-chain " + pid));
    CHECK(Eventually([&] {
      const auto* d = rig.DeviceCounts(0);
      return d != nullptr && d->dropped_invalid >= 1;
    }));
    const std::string reply = app->Call("timed-stop 0", 30s);  // "stop 0 NS"
    REQUIRE(reply.rfind("stop 0 ", 0) == 0);
    const auto took = std::chrono::nanoseconds(std::stoll(reply.substr(7)));
    CHECK(took < 2s + 4s);  // the bound is 2 s with the default flush timeout; the rest is margin
    CHECK(Has(app->err(), "device 0: dropped a trace message: packet chain not ended 5 s after its first packet"));
    CHECK(app->Exit() == 0);
  }
  SECTION("exit without stop returns within its bound, even with a long flush timeout") {
    // With a 30 s flush timeout each of CANN's receives waits 10.7 s: the exit must not.
    auto app = rig.App({{"ASCEND_LOG_DEVICE_FLUSH_TIMEOUT", "30000"}});
    REQUIRE(app->Call("start 0") == "start 0 0");
    const std::string pid = std::to_string(app->pid());
    REQUIRE(rig.fake->WaitForSession(app->pid()));
    REQUIRE(rig.fake->Ok("endless-chain " + pid));
    std::this_thread::sleep_for(1200ms);  // a few packets into the chain
    const auto begin = std::chrono::steady_clock::now();
    CHECK(app->Exit() == 0);
    CHECK(std::chrono::steady_clock::now() - begin < 0.5s + 4s);  // the bound is 0.5 s; the rest is margin
  }
}

TEST_CASE("device traces: exit keeps its 0.5 s bound while a long receive waits on a quiet device", "[device]") {
  // A 30 s flush timeout makes each of CANN's receives 10.7 s long; the receiver sits in one
  // when the exit comes, and must leave it at once.
  Rig rig;
  auto app = rig.App({{"ASCEND_LOG_DEVICE_FLUSH_TIMEOUT", "30000"}});
  REQUIRE(app->Call("start 0") == "start 0 0");
  REQUIRE(rig.fake->WaitForSession(app->pid()));
  const auto begin = std::chrono::steady_clock::now();
  CHECK(app->Exit() == 0);
  CHECK(std::chrono::steady_clock::now() - begin < 0.5s + 4s);  // the bound is 0.5 s; the rest is margin
}

TEST_CASE("device traces: a device that closes every long link at once gets backoff and one line", "[device]") {
  // Each open succeeds and the device closes the link at once. The waits double from 100 ms
  // to 2 s and start again only after a link stayed open 2 s: in 6 s that is at most 7
  // reconnects (0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 2 + 2 s), not one every 100 ms.
  Rig rig(0, -1, {"--close-long-links"});
  auto app = rig.App();
  REQUIRE(app->Call("start 0") == "start 0 0");
  const auto begin = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(6s);  // the storm's window
  REQUIRE(app->Call("stop 0") == "stop 0");
  const auto window = std::chrono::steady_clock::now() - begin;
  const std::string device_log = rig.fake->log();
  const std::string err = app->err();
  INFO(err);
  INFO(device_log);
  const size_t opens = Count(device_log, "closed right after its start (--close-long-links)");
  CHECK(opens >= 3);  // it does reconnect
  CHECK(window < 9s);  // a stop that came late would make the count meaningless
  CHECK(opens <= 9);
  // This device delivers no message, so the daemon holds no device event of this process and
  // takes none of its device counts (SECURITY.md): the opens the device saw are the count.
  CHECK(Count(err, "libascend_trace:") == 1);  // the whole storm is one line
  CHECK(Count(err, "device 0: the device closed the trace link; reconnecting") == 1);
  CHECK(app->Exit() == 0);
}
