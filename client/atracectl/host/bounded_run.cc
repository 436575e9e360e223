#include "host/bounded_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/child_process.h"

namespace atracectl {

BoundedRun RunBounded(const std::vector<std::string>& args, std::chrono::milliseconds timeout, size_t max_bytes) {
  BoundedRun out;
  int pipe[2];
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || ::pipe2(pipe, O_CLOEXEC) != 0) {
    if (null >= 0) ::close(null);
    out.installed = true;
    out.not_started = std::strerror(errno);
    return out;
  }
  const pid_t pid = StartChild(args, null, pipe[1], pipe[1]);
  ::close(null);
  ::close(pipe[1]);
  if (pid < 0) {
    ::close(pipe[0]);
    out.installed = pid != -ENOENT;
    if (out.installed) out.not_started = std::strerror(-pid);
    return out;
  }
  out.installed = true;
  // Read until end of file (every writer gone) or the deadline; a grandchild that keeps the
  // pipe open is cut off by the deadline too.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      break;
    }
    pollfd p{pipe[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    const ssize_t n = ::read(pipe[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const size_t room = max_bytes - out.output.size();
    out.output.append(buf, std::min(room, static_cast<size_t>(n)));
    out.cut = out.cut || static_cast<size_t>(n) > room;
  }
  ::close(pipe[0]);
  if (out.timed_out) ::kill(pid, SIGKILL);
  const int status = WaitChild(pid);
  if (!out.timed_out) out.exit = status;
  return out;
}

}  // namespace atracectl
