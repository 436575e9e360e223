// Tests in which an unprivileged user attacks the root daemon: becoming that user in a
// forked child, reporting back through a pipe, and a daemon whose socket that user may use.
// Header-only (it is included by the hardening test files that need it).
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/subprocess.h"

namespace atraced::testing {

constexpr uid_t kAttacker = 65534;
constexpr uid_t kVictim = 65533;

// Writes a result line to `fd` (a pipe to the test): "<status> <message>".
inline void Report(int fd, int32_t status, const std::string& message) {
  const std::string line = std::to_string(status) + " " + message + "\n";
  (void)!::write(fd, line.data(), line.size());
}

// Reads one result line from `fd` within `timeout`; "" if none came.
inline std::string ReadReport(int fd, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Options of a daemon whose socket the attacker (group nogroup) may connect to, with `extra`
// arguments.
inline DaemonProcess::Options ForAttacker(std::vector<std::string> extra = {}) {
  const struct group* g = ::getgrgid(65534);
  extra.insert(extra.begin(), {"--socket-group", g != nullptr ? g->gr_name : "nogroup"});
  return {extra, {}, true, 10};
}

// Started, with the socket's directory reachable by the attacker.
inline bool StartForAttacker(DaemonProcess& d) {
  if (!d.Start()) return false;
  ::chmod(d.tmp().path().c_str(), 0755);
  return true;
}

// Runs `attack` as the attacker in a forked child, which reports one line through a pipe;
// returns the line ("" if none came). The child lives on until `release` is written (so what
// it holds stays held while the test looks) or the test ends.
struct Attacker {
  pid_t pid = -1;
  int result = -1;
  int release = -1;

  template <class F>
  explicit Attacker(F attack) {
    int out[2], in[2];
    REQUIRE(::pipe(out) == 0);
    REQUIRE(::pipe(in) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(out[0]);
      ::close(in[1]);
      if (!BecomeUser(kAttacker)) ::_exit(90);
      attack(out[1], in[0]);
      ::_exit(0);
    }
    ::close(out[1]);
    ::close(in[0]);
    result = out[0];
    release = in[1];
  }
  std::string Line(std::chrono::milliseconds timeout = std::chrono::seconds(30)) { return ReadReport(result, timeout); }
  // Lets the child go on from a WaitRelease.
  void Release() { (void)!::write(release, "x", 1); }
  ~Attacker() {
    ::close(release);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(result);
  }
};

// In the child: blocks until the test calls Release (or ends).
inline void WaitRelease(int in) {
  char c;
  (void)!::read(in, &c, 1);
}

// In the child: the attack of issue 21 and 37. Event 7 with file 1, its descriptor taken,
// then the file closed and the event ended, so the daemon's own copy is gone. Returns the
// passed descriptor; exits (92) if any step failed.
inline UniqueFd PassedFdOfClosedFile(RawClient& c, const std::string& object) {
  auto begun = c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(7)));
  auto opened = c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(7, 1, object)));
  auto got_fd = c.Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}));
  if (!begun || !opened || !got_fd || got_fd->status != 0 || c.fds().empty()) ::_exit(92);
  UniqueFd fd = std::move(c.fds().front());
  c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}));
  c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{7}));
  return fd;
}

// Tests that run a second user need root to become it.
inline bool NeedsRoot() {
  if (::geteuid() == 0) return true;
  WARN("skipped: needs root to run a second user against the daemon");
  return false;
}

}  // namespace atraced::testing
