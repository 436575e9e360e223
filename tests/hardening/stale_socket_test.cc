// Issue 23, finding 4: a socket another user's daemon serves is not "stale" because this
// user may not connect to it. Only ECONNREFUSED means nobody listens; anything else stops the
// start-up with the path and the error, and the socket is left alone.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "as_user.h"
#include "atraced/base/unique_fd.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("a socket another user serves, which this user may not use, is not taken for stale",
          "[hardening][socket]") {
  if (!NeedsRoot()) return;
  TempDir tmp;
  ::chmod(tmp.path().c_str(), 0755);
  // Root's daemon stands in: a listening socket this user may not connect to (mode 0600).
  const std::string sock = tmp / "served.sock";
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(listener.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  REQUIRE(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener.get(), 4) == 0);
  REQUIRE(::chmod(sock.c_str(), 0600) == 0);
  const std::string root = tmp / "user_root";
  REQUIRE(::mkdir(root.c_str(), 0755) == 0);
  REQUIRE(::chown(root.c_str(), kAttacker, kAttacker) == 0);

  const RunResult daemon = Run({ATRACED_BINARY, "--root", root, "--socket", sock}, {.uid = kAttacker});
  INFO(daemon.err);
  CHECK(daemon.exit_code == 1);
  CHECK(daemon.err.find("cannot tell whether " + sock + " is served") != std::string::npos);
  CHECK(daemon.err.find("Permission denied") != std::string::npos);
  CHECK(daemon.err.find("replacing stale socket") == std::string::npos);
  struct stat st {};
  CHECK(::lstat(sock.c_str(), &st) == 0);  // left where it was
  CHECK(S_ISSOCK(st.st_mode));
}
