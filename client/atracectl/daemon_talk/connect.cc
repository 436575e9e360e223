#include "daemon_talk/connect.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "atraced/base/socket_remedy.h"

namespace atracectl {
namespace {

// The sockets the library tries, in its order (docs/CLIENT.md): --socket alone, else
// $ATRACED_SOCKET alone, else the system unit's and then the user unit's.
std::vector<std::string> SocketsTried(const Globals& g) {
  if (!g.socket.empty()) return {g.socket};
  if (const char* env = std::getenv("ATRACED_SOCKET"); env != nullptr && *env != '\0') return {env};
  std::vector<std::string> paths{"/run/atraced/atraced.sock"};
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && *run != '\0') {
    paths.push_back(std::string(run) + "/atraced.sock");
  }
  return paths;
}

std::string Joined(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size(); ++i) out += (i == 0 ? "" : i + 1 == paths.size() ? " or " : ", ") + paths[i];
  return out;
}

// The first of `paths` that exists: the one whose error the library reported.
std::string FirstPresent(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0) return p;
  }
  return paths.empty() ? std::string() : paths.front();
}

constexpr const char* kStartHint =
    "start it with 'systemctl start atraced.socket' (the system daemon) or 'systemctl --user start "
    "atraced.socket' (your own), or point --socket at a running one";

// What a user reads when the daemon cannot be reached: the path, the cause, what to do.
std::string WhyUnreachable(const Globals& g, int err) {
  const std::vector<std::string> paths = SocketsTried(g);
  const std::string path = FirstPresent(paths);
  switch (err) {
    case ENOENT:
      return "no daemon socket at " + Joined(paths) + ": is atraced running? " + kStartHint;
    case ECONNREFUSED:
      if (std::string not_socket = atraced::DescribeNonSocket(path); !not_socket.empty()) {
        return not_socket + ": point " + (g.socket.empty() ? "ATRACED_SOCKET" : "--socket") +
               " at the daemon's socket (atraced prints it at start-up)";
      }
      return "nothing listens on " + path + " (a daemon that stopped left its socket behind): " + kStartHint;
    case EACCES:
      return "permission denied on " + path + ": " + atraced::SocketAccessRemedy(path);
    case ETIMEDOUT:
      return path + " did not answer in time: the daemon is overloaded or stopped (see 'journalctl -u atraced')";
    default:
      return "cannot reach the daemon at " + Joined(paths) + ": " + atrace_client_strerror(-err);
  }
}

}  // namespace

atrace::Client Connect(const Globals& g, atrace::Client::Options o) {
  o.socket_path = g.socket;
  std::error_code ec;
  atrace::Client c = atrace::Client::Open(o, ec);
  if (ec) std::cerr << "atracectl: " << WhyUnreachable(g, ec.value()) << "\n";
  return c;
}

int Fail(const atrace::Client& client, const std::string& what, std::error_code ec) {
  std::cerr << "atracectl: " << what << ": " << atrace_client_strerror(-ec.value());
  std::string message = client ? client.last_message() : std::string();
  if (!message.empty()) std::cerr << " (daemon: " << message << ")";
  std::cerr << "\n";
  return kExitFailed;
}

}  // namespace atracectl
