#include "endpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "atraced/proto/socket_path.h"

namespace atrace_client_internal {

std::vector<std::string> CandidateSocketPaths(const char* explicit_path) {
  if (explicit_path != nullptr && *explicit_path != '\0') return {explicit_path};
  const char* env = std::getenv(atraced::proto::kSocketEnvVar);
  if (env != nullptr && *env != '\0') return {env};
  std::vector<std::string> paths{atraced::proto::kSystemSocketPath};
  std::string user = atraced::proto::UserSocketPath();
  if (!user.empty()) paths.push_back(user);
  return paths;
}

int ConnectUnix(const std::string& path, const Deadline& deadline, Fd* out) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty()) return -ENOENT;
  if (path.size() >= sizeof addr.sun_path) return -ENAMETOOLONG;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return -errno;
  for (;;) {
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN) {
      // A full listen backlog: Unix sockets say EAGAIN instead of waiting. Retry briefly
      // until the deadline rather than blocking.
      if (deadline.Expired()) return -ETIMEDOUT;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5, deadline.RemainingMs())));
      continue;
    }
    if (err != EINPROGRESS) return -err;
    // In progress: wait for writability, then SO_ERROR says how it ended.
    pollfd p{fd.get(), POLLOUT, 0};
    int r;
    do {
      r = ::poll(&p, 1, deadline.RemainingMs());
    } while (r < 0 && errno == EINTR);
    if (r == 0) return -ETIMEDOUT;
    if (r < 0) return -errno;
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) return -errno;
    if (so_error != 0) return -so_error;
    break;
  }
  *out = std::move(fd);
  return 0;
}

}  // namespace atrace_client_internal
