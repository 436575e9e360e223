// The application is told when the daemon cannot be reached (issue 26): one line on stderr
// per outage, naming the socket, the cause and the fix; none with ATRACE_QUIET=1. A real
// process (clock_child.c) against no daemon, a socket nobody listens on, and a socket of a
// group the process's user is not in.
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/temp_dir.h"

using atraced::testing::Run;
using atraced::testing::RunResult;
using atraced::testing::TempDir;

namespace {

// clock_child's stderr, run with `env` and nothing else in its environment (as `uid` if given).
std::string StderrOf(const std::map<std::string, std::string>& env, std::optional<uid_t> uid = std::nullopt) {
  const RunResult r = Run({ASCEND_TRACE_CLOCK_CHILD, "2"}, {.env = env, .inherit_env = false, .uid = uid});
  REQUIRE(r.exit_code >= 0);
  return r.err;
}

size_t Lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("outage notice: no socket, one line naming the path and how to start the daemon", "[link][notice]") {
  TempDir tmp;
  const std::string path = tmp / "none.sock";
  const std::string err = StderrOf({{"ATRACED_SOCKET", path}, {"TZ", "UTC"}});
  INFO(err);
  CHECK(Lines(err) == 1);  // one outage, one line, however many calls failed
  CHECK(Has(err, "libascend_trace: cannot reach atraced: no socket at " + path + ": start it with "));
  CHECK(Has(err, "ATRACE_QUIET=1"));
  const std::string quiet = StderrOf({{"ATRACED_SOCKET", path}, {"ATRACE_QUIET", "1"}, {"TZ", "UTC"}});
  CHECK(quiet.empty());
}

TEST_CASE("outage notice: a socket nobody listens on, and one of a group the user is not in", "[link][notice]") {
  TempDir tmp;
  const std::string path = tmp / "stale.sock";
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(s >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);  // bound, never listening
  const std::string err = StderrOf({{"ATRACED_SOCKET", path}});
  INFO(err);
  CHECK(Has(err, "cannot reach atraced: nothing listens on " + path));
  if (::geteuid() != 0 || ::getgrgid(0) == nullptr) {
    ::close(s);
    WARN("not root: the permission case is not run");
    return;
  }
  REQUIRE(::listen(s, 4) == 0);
  REQUIRE(::chmod(path.c_str(), 0660) == 0);          // root:root, as a group-only socket is
  REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);    // the directory itself is open
  const std::string denied = StderrOf({{"ATRACED_SOCKET", path}}, 65534);
  INFO(denied);
  // Group root is root's alone: the administrator gives the socket a group, nobody joins root.
  CHECK(Has(denied, "cannot reach atraced: permission denied on " + path + ": the socket's group is root, so only root "
                    "may connect: ask an administrator to set socket-group in atraced.conf"));
  CHECK_FALSE(Has(denied, "usermod"));
  const group* users = ::getgrnam("users");
  if (users != nullptr && users->gr_gid != 65534) {
    REQUIRE(::chown(path.c_str(), 0, users->gr_gid) == 0);
    const std::string outsider = StderrOf({{"ATRACED_SOCKET", path}}, 65534);
    INFO(outsider);
    CHECK(Has(outsider, "cannot reach atraced: permission denied on " + path +
                            ": it is for members of group 'users'; join it ('sudo usermod -aG users $USER'"));
  }
  ::close(s);
}

TEST_CASE("outage notice: ATRACED_SOCKET naming a file that is not a socket says so", "[link][notice]") {
  const std::string err = StderrOf({{"ATRACED_SOCKET", "/etc/hostname"}});
  INFO(err);
  CHECK(Has(err, "cannot reach atraced: /etc/hostname is a regular file, not a socket: point ATRACED_SOCKET at the "
                 "daemon's socket"));
  CHECK_FALSE(Has(err, "nothing listens"));
}
