#include "outage_line.h"

#include <errno.h>
#include <grp.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

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
      return "cannot reach atraced: nothing listens on " + path + ": " + start;
    case EACCES: {
      struct stat st {};
      const group* gr = ::lstat(path.c_str(), &st) == 0 ? ::getgrgid(st.st_gid) : nullptr;
      if (gr == nullptr) return "cannot reach atraced: permission denied on " + path;
      return "cannot reach atraced: permission denied on " + path + ": add the user to group " + gr->gr_name +
             " ('sudo usermod -aG " + gr->gr_name + " $USER', then log in again)";
    }
    default:
      return "cannot reach atraced at " + path + ": " + std::strerror(err);
  }
}


}  // namespace ascend_trace
