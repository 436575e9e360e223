#include "outage_line.h"

#include <errno.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "atraced/base/socket_remedy.h"

namespace ascend_trace {

// ATRACE_QUIET=1: no outage lines on stderr (an application whose stderr is its output).
bool QuietOutages() {
  static const bool quiet = [] {
    const char* v = std::getenv("ATRACE_QUIET");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return quiet;
}

// The socket, the cause and the fix, as atracectl says them.
std::string DescribeUnreachable(const std::vector<std::string>& paths, int err) {
  std::string path = paths.empty() ? std::string("(no socket path)") : paths.front();
  for (const auto& p : paths) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0) {
      path = p;
      break;
    }
  }
  const char* start = "start it with 'systemctl start atraced.socket', or point ATRACED_SOCKET at a running one";
  switch (err) {
    case ENOENT:
      return "cannot reach atraced: no socket at " + path + ": " + start;
    case ECONNREFUSED:
      if (std::string not_socket = atraced::DescribeNonSocket(path); !not_socket.empty()) {
        return "cannot reach atraced: " + not_socket + ": point ATRACED_SOCKET at the daemon's socket";
      }
      return "cannot reach atraced: nothing listens on " + path + ": " + start;
    case EACCES:
      return "cannot reach atraced: permission denied on " + path + ": " + atraced::SocketAccessRemedy(path);
    default:
      return "cannot reach atraced at " + path + ": " + std::strerror(err);
  }
}


}  // namespace ascend_trace
