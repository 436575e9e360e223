// Socket activation with Debian's systemd-socket-activate: the socket exists before the
// daemon, a client that connected before it ran is served, and a restart behind a held
// listening socket loses no queued connection.
#include <catch2/catch.hpp>

#include <optional>

#include <signal.h>
#include <unistd.h>

#include <memory>

#include "support/raw_client.h"
#include "support/temp_dir.h"
#include "systemd_support.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

std::string SocketActivate() {
  static const std::string tool = FindTool("systemd-socket-activate");
  return tool;
}

// systemd-socket-activate passes only PATH, HOME, TERM, USER and -E variables on.
std::vector<std::string> ActivateArgv(const std::string& socket, const std::string& notify) {
  std::vector<std::string> argv{SocketActivate(), "-l", socket, "-E", "NOTIFY_SOCKET=" + notify};
  for (auto& [k, v] : SanitizerEnv()) {
    argv.push_back("-E");
    argv.push_back(k + "=" + v);
  }
  return argv;
}

bool SendHello(RawClient& c) {
  proto::Hello h;
  h.features = ATR_FEATURE_FD_PASSING;
  return c.Send(ATR_OP_HELLO, Payload(h));
}

}  // namespace

TEST_CASE("systemd-socket-activate: a client that connected before the daemon ran is served", "[systemd][activation]") {
  if (SocketActivate().empty()) {
    WARN("systemd-socket-activate not found (Debian package systemd); skipping");
    return;
  }
  TempDir tmp;
  NotifyListener notify(tmp / "notify.sock");
  const std::string socket = tmp / "s.sock";
  auto argv = ActivateArgv(socket, notify.path());
  for (std::string a : {std::string(ATRACED_BINARY), std::string("--root"), tmp / "root", std::string("--log-level"),
                        std::string("debug")}) {
    argv.push_back(a);
  }
  ChildProcess proc({argv, {}, tmp / "out.log", {}});

  // The socket is there first; the daemon is not running yet (no connection so far).
  REQUIRE(WaitUntil([&] { return Exists(socket); }, 10s));
  CHECK(CommOf(proc.pid()) != "atraced");
  CHECK(notify.all().empty());

  // The file appears at bind(), a moment before listen(): retry until the queue takes us.
  std::optional<RawClient> c;
  REQUIRE(WaitUntil([&] { return (c = RawClient::Connect(socket)).has_value(); }, 10s));
  REQUIRE(SendHello(*c));  // queued in the socket until atraced is executed and accepts
  auto reply = c->Read(20s);
  REQUIRE(reply);
  CHECK(reply->status == 0);

  // systemd-socket-activate executed atraced in its own place, so READY=1 comes from that pid.
  auto ready = notify.WaitFor("READY=1", 10s);
  REQUIRE(ready);
  CHECK(ready->pid == proc.pid());
  CHECK(CommOf(proc.pid()) == "atraced");
  CHECK(proc.output().find("socket " + socket + " (socket activation)") != std::string::npos);

  // It is a working daemon on the adopted socket.
  std::string err;
  std::string path = c->Emit(ATR_EVENT_SCHEDULE, "obj", "data\n", &err);
  CHECK(err.empty());
  CHECK(path.rfind(tmp / "root/atrace/trace_", 0) == 0);
  CHECK(ReadFile(path) == "data\n");

  proc.Signal(SIGTERM);
  CHECK(proc.Wait(10s) == 0);
}

TEST_CASE("a restart behind the held socket loses no queued connection", "[systemd][activation]") {
  if (SocketActivate().empty()) {
    WARN("systemd-socket-activate not found (Debian package systemd); skipping");
    return;
  }
  const std::string bash = FindTool("bash");
  REQUIRE_FALSE(bash.empty());
  TempDir tmp;
  NotifyListener notify(tmp / "notify.sock");
  const std::string socket = tmp / "s.sock";
  const std::string go = tmp / "go";
  // Plays systemd's part: bash keeps the listening socket (fd 3) across two atraced
  // instances. The first runs in a subshell with LISTEN_PID set to its own pid; the second
  // starts only once the test creates `go`, i.e. while the first is gone and clients queue.
  const std::string script =
      "go=\"$1\"; shift\n"
      "( export LISTEN_PID=$BASHPID; exec \"$@\" )\n"
      "while [ ! -e \"$go\" ]; do sleep 0.02; done\n"
      "export LISTEN_PID=$$\n"
      "exec \"$@\"\n";
  auto argv = ActivateArgv(socket, notify.path());
  for (std::string a : {bash, std::string("-c"), script, std::string("restart"), go, std::string(ATRACED_BINARY),
                        std::string("--root"), tmp / "root", std::string("--log-level"), std::string("debug")}) {
    argv.push_back(a);
  }
  ChildProcess proc({argv, {}, tmp / "out.log", {}});
  REQUIRE(WaitUntil([&] { return Exists(socket); }, 10s));

  // First instance, activated by client A. The socket file appears at bind(), a moment
  // before listen(): retry until the connection is accepted into the queue.
  std::optional<RawClient> a;
  REQUIRE(WaitUntil([&] { return (a = RawClient::Connect(socket)).has_value(); }, 10s));
  REQUIRE(a->Hello());
  auto ready1 = notify.WaitFor("READY=1", 20s);
  REQUIRE(ready1);
  const pid_t first = ready1->pid;
  CHECK(first != proc.pid());
  CHECK(CommOf(first) == "atraced");
  std::string err;
  std::string before = a->Emit(ATR_EVENT_SCHEDULE, "obj", "one", &err);
  REQUIRE(err.empty());
  a.reset();

  // Stop it; the listening socket stays open in bash.
  ::kill(first, SIGTERM);
  REQUIRE(notify.WaitFor("STOPPING=1", 10s));
  REQUIRE(WaitUntil([&] { return !Alive(first); }, 10s));

  // Client B connects while no daemon runs: it is queued, not refused, and not answered yet.
  auto b = RawClient::Connect(socket);
  REQUIRE(b);
  REQUIRE(SendHello(*b));
  CHECK_FALSE(b->Read(300ms));

  // Second instance: it adopts the same socket and serves B's queued HELLO.
  WriteFile(go, "");
  auto ready2 = notify.WaitFor("READY=1", 20s);
  REQUIRE(ready2);
  CHECK(ready2->pid == proc.pid());
  auto reply = b->Read(10s);
  REQUIRE(reply);
  CHECK(reply->status == 0);
  std::string after = b->Emit(ATR_EVENT_SCHEDULE, "obj", "two", &err);
  CHECK(err.empty());
  CHECK(ReadFile(before) == "one");  // the first instance's data survives the restart
  CHECK(ReadFile(after) == "two");
  CHECK(proc.output().find("(socket activation)") != std::string::npos);

  proc.Signal(SIGTERM);
  CHECK(proc.Wait(10s) == 0);
}
