// The daemon's sd_notify protocol, observed through a NOTIFY_SOCKET listener: READY=1 once
// recovery is done and the socket accepts, STATUS= lines, WATCHDOG=1 at half of
// WATCHDOG_USEC, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "support/raw_client.h"
#include "support/temp_dir.h"
#include "systemd_support.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// atraced on a temporary root and socket with NOTIFY_SOCKET pointing at our listener.
struct NotifiedDaemon {
  TempDir tmp;
  NotifyListener notify{tmp / "notify.sock"};
  std::unique_ptr<ChildProcess> proc;

  std::string socket() const { return tmp / "s.sock"; }
  std::string root() const { return tmp / "root"; }

  void Start(std::vector<std::string> extra_args = {"--record-num", "10"},
             std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv{ATRACED_BINARY, "--root", root(), "--socket", socket(), "--log-level", "debug"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    env["NOTIFY_SOCKET"] = notify.path();
    for (auto& [k, v] : SanitizerEnv()) env[k] = v;
    proc = std::make_unique<ChildProcess>(ChildProcess::Options{argv, env, tmp / "daemon.log", {}});
  }
  std::string log() const { return proc ? proc->output() : ""; }
};

uint64_t MonotonicUsecNow() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

uint32_t RecordNumOverSocket(const std::string& socket) {
  auto c = RawClient::Connect(socket);
  REQUIRE(c);
  REQUIRE(c->Hello());
  auto r = c->Call(ATR_OP_STATUS, {});
  REQUIRE(r);
  REQUIRE(r->status == 0);
  proto::StatusReply s;
  REQUIRE(proto::Decode(r->body, &s).ok());
  return s.record_num;
}

}  // namespace

TEST_CASE("READY=1 comes after recovery, once the socket accepts, with a STATUS= summary", "[systemd][notify]") {
  NotifiedDaemon d;
  // A removal an interrupted run had begun: recovery takes it off the count before READY.
  const std::string proc = d.root() + "/atrace/trace_100_100_20240101120000000000";
  const std::string half = proc + "/schedule_event_100_20240101120000000001";
  REQUIRE(::mkdir(d.root().c_str(), 0750) == 0);
  REQUIRE(::mkdir((d.root() + "/atrace").c_str(), 0750) == 0);
  REQUIRE(::mkdir(proc.c_str(), 0750) == 0);
  REQUIRE(::mkdir(half.c_str(), 0750) == 0);
  WriteFile(d.root() + "/atrace/.atraced_order",
            "+ 1 h 0 0 0 trace_100_100_20240101120000000000/schedule_event_100_20240101120000000001\n- 1\n");

  d.Start();
  auto ready = d.notify.WaitFor("READY=1", 20s);
  REQUIRE(ready);
  // At the moment READY arrives the socket already accepts and serves.
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  CHECK(c->Hello());
  CHECK(ready->pid == d.proc->pid());
  CHECK(LineValue(ready->text, "STATUS") == "host 0/10, device 0/10, exit 0, clients 0");
  // Nothing claimed readiness earlier.
  for (auto& m : d.notify.all()) {
    if (&m == &d.notify.all().back()) break;
    CHECK_FALSE(HasLine(m.text, "READY=1"));
  }
  CHECK(d.log().find("1 interrupted removals resumed") != std::string::npos);
  for (int i = 0; i < 500 && Exists(half); ++i) std::this_thread::sleep_for(10ms);
  CHECK_FALSE(Exists(half));
  d.proc->Signal(SIGTERM);
  CHECK(d.proc->Wait(10s) == 0);
}

TEST_CASE("without WATCHDOG_USEC there are STATUS= updates but no WATCHDOG=1", "[systemd][notify]") {
  NotifiedDaemon d;
  d.Start();
  REQUIRE(d.notify.WaitFor("READY=1", 20s));
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());
  // The status ticker runs every 2 s; the one after READY counts the connected client.
  std::optional<NotifyListener::Message> tick;
  while (auto m = d.notify.Receive(3500ms)) {
    CHECK_FALSE(HasLine(m->text, "WATCHDOG=1"));
    if (LineValue(m->text, "STATUS")) {
      tick = m;
      break;
    }
  }
  REQUIRE(tick);
  CHECK(LineValue(tick->text, "STATUS") == "host 0/10, device 0/10, exit 0, clients 1");
  d.proc->Signal(SIGTERM);
  CHECK(d.proc->Wait(10s) == 0);
}

TEST_CASE("WATCHDOG_USEC=1000000 gives WATCHDOG=1 every 500 ms, with STATUS=", "[systemd][notify]") {
  NotifiedDaemon d;
  // WATCHDOG_PID is left unset on purpose: sd_watchdog_enabled() then trusts WATCHDOG_USEC.
  d.Start({"--record-num", "10"}, {{"WATCHDOG_USEC", "1000000"}});
  auto ready = d.notify.WaitFor("READY=1", 20s);
  REQUIRE(ready);
  // A whole second of watchdog, so a loaded machine's late timer is not a missed ping: what
  // systemd kills for is a gap of WATCHDOG_USEC, and every gap must stay under it.
  std::vector<std::chrono::steady_clock::time_point> pings;
  auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    auto m = d.notify.Receive(1s);
    REQUIRE(m);  // a gap of 1 s would already be a missed ping
    if (!HasLine(m->text, "WATCHDOG=1")) continue;
    CHECK(m->pid == d.proc->pid());
    CHECK(LineValue(m->text, "STATUS") == "host 0/10, device 0/10, exit 0, clients 0");
    pings.push_back(m->at);
  }
  // 3 s at one ping per 500 ms: 6, fewer when timers run late, never the 2 s status tick's 1-2.
  CHECK(pings.size() >= 3);
  CHECK(pings.size() <= 7);
  for (size_t i = 1; i < pings.size(); ++i) {
    auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(pings[i] - pings[i - 1]);
    CAPTURE(i, gap.count());
    CHECK(gap < 1s);
  }
  d.proc->Signal(SIGTERM);
  CHECK(d.proc->Wait(10s) == 0);
}

TEST_CASE("SIGHUP sends RELOADING=1 with MONOTONIC_USEC, then READY=1 with the new record number", "[systemd][notify]") {
  NotifiedDaemon d;
  const std::string conf = d.tmp / "atraced.conf";
  WriteFile(conf, "record-num = 20\n");
  d.Start({"--config", conf});
  REQUIRE(d.notify.WaitFor("READY=1", 20s));
  CHECK(RecordNumOverSocket(d.socket()) == 20);

  WriteFile(conf, "record-num = 30\n");
  const uint64_t before = MonotonicUsecNow();
  d.proc->Signal(SIGHUP);
  auto reloading = d.notify.WaitFor("RELOADING=1", 10s);
  REQUIRE(reloading);
  auto mono = LineValue(reloading->text, "MONOTONIC_USEC");
  REQUIRE(mono);
  const uint64_t usec = std::stoull(*mono);
  CHECK(usec >= before);
  CHECK(usec <= MonotonicUsecNow());
  auto ready = d.notify.WaitFor("READY=1", 10s);
  REQUIRE(ready);
  CHECK(LineValue(ready->text, "STATUS") == "Reloaded; record num 30");
  CHECK(RecordNumOverSocket(d.socket()) == 30);

  // A broken file is refused: READY=1 again, the running configuration stays.
  WriteFile(conf, "record-num = 5\n");
  d.proc->Signal(SIGHUP);
  REQUIRE(d.notify.WaitFor("RELOADING=1", 10s));
  ready = d.notify.WaitFor("READY=1", 10s);
  REQUIRE(ready);
  CHECK(LineValue(ready->text, "STATUS").value_or("").rfind("Reload refused, running configuration kept: ", 0) == 0);
  CHECK(RecordNumOverSocket(d.socket()) == 30);
  d.proc->Signal(SIGTERM);
  CHECK(d.proc->Wait(10s) == 0);
}

TEST_CASE("SIGTERM sends STOPPING=1, later ticks only feed the watchdog, exit code 0", "[systemd][notify]") {
  NotifiedDaemon d;
  d.Start({"--record-num", "10"}, {{"WATCHDOG_USEC", "200000"}});
  REQUIRE(d.notify.WaitFor("READY=1", 20s));
  // A connected client that stays silent keeps the shutdown draining for a moment.
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());
  d.proc->Signal(SIGTERM);
  auto stopping = d.notify.WaitFor("STOPPING=1", 10s);
  REQUIRE(stopping);
  CHECK(stopping->pid == d.proc->pid());
  CHECK(LineValue(stopping->text, "STATUS") == "Stopping");
  CHECK(d.proc->Wait(10s) == 0);
  while (auto m = d.notify.Receive(50ms)) {
    CHECK_FALSE(LineValue(m->text, "STATUS"));
    CHECK_FALSE(HasLine(m->text, "READY=1"));
  }
}

TEST_CASE("a start-up failure sends STATUS= with the reason and never READY=1", "[systemd][notify]") {
  NotifiedDaemon d;
  WriteFile(d.root(), "x");  // the root is a file, not a directory
  d.Start();
  auto code = d.proc->Wait(20s);
  REQUIRE(code);
  CHECK(*code == 1);
  std::vector<std::string> statuses;
  while (auto m = d.notify.Receive(100ms)) {
    CHECK_FALSE(HasLine(m->text, "READY=1"));
    if (auto s = LineValue(m->text, "STATUS")) statuses.push_back(*s);
  }
  REQUIRE(statuses.size() == 1);
  CHECK(statuses[0].rfind("Failed to start up: ", 0) == 0);
  CHECK(statuses[0].find('\n') == std::string::npos);
}
